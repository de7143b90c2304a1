#!/usr/bin/env bash
# Third run: the large-FC matrix copy dropped. P = main before it (aa80b6c), B = main with it.
# test_convolution and test_graph under validation; vgg16 fp16 b1/b32 device memory and time,
# runs ordered P B B P.
set -uo pipefail
root=$(pwd)
out=/tmp/fc-out; mkdir -p "$out"
OUT=$out/tests VKCNN_DEVICE_TESTS="test_convolution test_graph" timeout 200 bash scripts/device-run-tests.sh > $out/tests.log 2>&1; echo "tests rc=$?"; tail -3 $out/tests.log
unset VKCNN_VALIDATION
work=/tmp/fc-work; mkdir -p $work/models
export VKCNN_PIPELINE_CACHE_DIR=$work/cache
t0=$(date +%s)
PYTHONUNBUFFERED=1 timeout 150 python3 .dev-pieces/torch_fp16.py $work/models vgg16,resnet50 20 > $out/pytorch.log 2>&1 || tail -3 $out/pytorch.log
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {
  local b=$1 net=$2 batch=$3 tag=$4 lib=$root/.device-build/lib bin=$root/.device-build/bin/vkcnn
  [ $b = P ] && lib=$root/.dev-pieces/P/lib:$root/.device-build/lib && bin=$root/.dev-pieces/P/vkcnn
  LD_LIBRARY_PATH=$lib timeout 90 $bin bench $work/models/$net.onnx --fp16 --batch $batch --iterations 30 \
    --input $work/models/${net}_b${batch}_input.npy --reference $work/models/${net}_b${batch}_output.npy \
    --json $out/${b}_${net}_fp16_b${batch}_$tag.json > $out/${b}_${net}_fp16_b${batch}_$tag.txt 2>&1 || echo "FAILED $b $net $batch $tag"
}
run B vgg16 1 warm
for net in vgg16 resnet50; do for batch in 1 32; do run P $net $batch 1; run B $net $batch 1; run B $net $batch 2; run P $net $batch 2; done; done
echo "bench $(( $(date +%s) - t0 )) s"
[ -n "${OUT:-}" ] && tar czf $OUT/fc-out.tgz -C $(dirname $out) $(basename $out)
