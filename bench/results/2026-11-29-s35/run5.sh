#!/usr/bin/env bash
# Session 35, run 5: how far the selector's batch-1 choices are from what measurement inside the
# network picks: vgg16 and resnet50 at batch 1, float16, untuned (U) and after `vkcnn tune` (T:
# every convolution shape's candidates timed in the whole model, the fastest kept), resident, U T
# T U, and the per-layer profile of both. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r5.tgz r5); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
work=/tmp/m5; mkdir -p $work
PYTHONUNBUFFERED=1 timeout 120 python3 scripts/bench/pytorch_side.py $work --networks vgg16,resnet50 --runs 1 --warmup 1 --dtypes fp16 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
for m in vgg16 resnet50; do
  VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-T timeout 200 $D/bin/vkcnn tune $work/$m.onnx --fp16 > $R/tune_$m.txt 2>&1
  echo "tune $m rc=$? $(( $(date +%s) - t0 )) s: $(tail -n 2 $R/tune_$m.txt | tr '\n' ' ')"; snap
done
i=0
for l in U T T U; do
  i=$((i + 1))
  for m in vgg16 resnet50; do
    VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn bench $work/$m.onnx --fp16 --iterations 200 \
      --input $work/${m}_b1_input.npy --reference $work/${m}_b1_output.npy > $R/${l}_${m}_$i.txt 2>&1
    echo "$l $m $(grep -E 'resident' $R/${l}_${m}_$i.txt | grep -o 'median [0-9.]*') $(grep -o 'reference: [0-9.e-]*' $R/${l}_${m}_$i.txt)"
    [ $i -le 2 ] && VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn profile $work/$m.onnx --fp16 --iterations 30 > $R/profile_${l}_${m}.txt 2>&1
  done
  snap
done
echo "done $(( $(date +%s) - t0 )) s"; snap
