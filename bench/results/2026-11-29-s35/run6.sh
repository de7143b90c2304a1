#!/usr/bin/env bash
# Session 35, run 6: 64x64k64 (64-deep stages, unsplit) in the batch-1 latency model (run 5's
# tuner picked it on seven 1x1 shapes of resnet50). O = before, N = after (libraries in .dev-ab).
# The twelve networks at batch 1, float16, resident, O N N O, then at batch 32 O N (the latency
# model also takes a few late layers there). Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r6.tgz r6); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
work=/tmp/m6; mkdir -p $work
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work --runs 1 --warmup 1 --dtypes none > $R/pytorch.log 2>&1
echo "models rc=$? $(( $(date +%s) - t0 )) s"
nets="resnet18 resnet50 mobilenet_v2 squeezenet1_1 googlenet densenet121 shufflenet_v2_x1_0 efficientnet_b0 vgg16 mobilenet_v3_large resnext50_32x4d regnet_y_800mf"
one() { # library network batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/$2.onnx --fp16 --batch $3 --iterations $5 \
    --input $work/${2}_b${3}_input.npy --reference $work/${2}_b${3}_output.npy > $R/${1}_${2}_b${3}_$4.txt 2>&1
  echo "$1 $2 b$3 $(grep -E 'resident' $R/${1}_${2}_b${3}_$4.txt | grep -o 'median [0-9.]*') $(grep -o 'reference: [0-9.e-]*' $R/${1}_${2}_b${3}_$4.txt)"
}
LD_LIBRARY_PATH=$(lib O) timeout 60 $D/bin/vkcnn bench $work/resnet50.onnx --fp16 --iterations 100 > /dev/null 2>&1
i=0
for l in O N N O; do
  i=$((i + 1))
  for m in $nets; do one $l $m 1 $i 150; done
  snap
done
for l in O N; do
  for m in $nets; do [ $(( $(date +%s) - t0 )) -gt 440 ] && break; one $l $m 32 1 40; done
  snap
done
for l in O N; do
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 30 $D/bin/vkcnn profile $work/resnet50.onnx --fp16 --iterations 20 > $R/profile_${l}_resnet50.txt 2>&1
done
echo "done $(( $(date +%s) - t0 )) s"; snap
