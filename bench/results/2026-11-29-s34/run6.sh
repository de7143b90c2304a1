#!/usr/bin/env bash
# Session 34, run 6: where the per-level cost goes (run 5: ~2.9-4.3 us a dependent dispatch in
# vkcnn against ~1.4-1.7 us a kernel in PyTorch's CUDA graph). One library per barrier flavour
# (variants/): H = main (a global memory barrier, shader reads and writes -> reads and writes),
# W = source access shader writes only, E = an execution dependency with no memory barrier
# (UNSAFE: measurement only), N = no barrier between dependent dispatches (UNSAFE). Chains of 16
# and 64 Tanh (floor.py) and resnet50, densenet121 and vgg16 at batch 1, float16, resident,
# H W E N N E W H. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r6.tgz r6); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
work=/tmp/floor; mkdir -p $work
[ -f $work/chain_4_8_8_64.onnx ] || PYTHONUNBUFFERED=1 timeout 200 python3 bench/results/2026-11-29-s34/floor.py $work > $R/floor.txt 2>&1
[ -f $work/resnet50.onnx ] || PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work --networks resnet50,densenet121,vgg16 --runs 3 --warmup 1 --dtypes fp16 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
models="chain_4_8_8_16 chain_4_8_8_64 chain_512_28_28_16 chain_512_28_28_64 resnet50 densenet121 vgg16"
LD_LIBRARY_PATH=$(lib H) timeout 60 $D/bin/vkcnn bench $work/resnet50.onnx --fp16 --iterations 100 > /dev/null 2>&1
i=0
for l in H W E N N E W H; do
  i=$((i + 1))
  for m in $models; do
    LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 60 $D/bin/vkcnn bench $work/$m.onnx --fp16 --iterations 200 --json $R/${l}_${m}_$i.json > $R/${l}_${m}_$i.txt 2>&1
    echo "$l $m $(grep -E 'resident' $R/${l}_${m}_$i.txt)"
  done
  snap
done
echo "done $(( $(date +%s) - t0 )) s"; snap
