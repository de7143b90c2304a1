#!/usr/bin/env bash
# Second run: fp32 b32 A (3090d31) against B (main: graph pieces + pooling lanes) beside PyTorch fp32
# eager (TF32 off); fp16 b32 B untuned against tuned (vkcnn tune, same process tree); the
# Fashion-MNIST ONNX test under validation with the carried test set.
set -uo pipefail
root=$(pwd)
out=/tmp/pieces-out2; mkdir -p "$out"
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac; done
ldconfig
unset VKCNN_VALIDATION
work=/tmp/pieces-work; mkdir -p $work/models
export VKCNN_PIPELINE_CACHE_DIR=$work/cache2
t0=$(date +%s)
nets=resnet50,vgg16,googlenet,resnet18,efficientnet_b0,mobilenet_v2
[ -f $work/models/mobilenet_v2.onnx ] || PYTHONUNBUFFERED=1 timeout 200 python3 .dev-pieces/torch_fp16.py $work/models $nets 5 32 > $out/export.log 2>&1
PYTHONUNBUFFERED=1 timeout 150 python3 .dev-pieces/torch_fp32.py $out $nets 30 > $out/pytorch_fp32.log 2>&1 || tail -3 $out/pytorch_fp32.log
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # build net precision batch tag [env]
  local b=$1 net=$2 prec=$3 batch=$4 tag=$5 lib bin
  lib=$root/.device-build/lib; bin=$root/.device-build/bin/vkcnn
  [ $b = A ] && lib=$root/.dev-pieces/A/lib:$root/.device-build/lib && bin=$root/.dev-pieces/A/vkcnn
  LD_LIBRARY_PATH=$lib timeout 90 $bin bench $work/models/$net.onnx --$prec --batch $batch --iterations 30 \
    --json $out/${b}_${net}_${prec}_b${batch}_$tag.json > $out/${b}_${net}_${prec}_b${batch}_$tag.txt 2>&1 || echo "FAILED $b $net $prec $batch $tag"
}
run B resnet50 fp32 32 warm
for net in ${nets//,/ }; do run A $net fp32 32 1; run B $net fp32 32 1; done
echo "fp32 done $(( $(date +%s) - t0 )) s"
for net in resnet50 vgg16 googlenet efficientnet_b0; do
  run B $net fp16 32 untuned
  LD_LIBRARY_PATH=$root/.device-build/lib timeout 150 $root/.device-build/bin/vkcnn tune $work/models/$net.onnx --fp16 --batch 32 --iterations 3 > $out/tune_$net.txt 2>&1 || echo "FAILED tune $net"
  run B $net fp16 32 tuned
  echo "tuned $net $(( $(date +%s) - t0 )) s"
done
OUT=$out/fm VKCNN_DEVICE_TESTS="test_onnx_fashion_mnist" timeout 60 bash scripts/device-run-tests.sh > $out/fm.log 2>&1; echo "fm rc=$?"; tail -3 $out/fm.log
[ -n "${OUT:-}" ] && tar czf $OUT/pieces-out2.tgz -C $(dirname $out) $(basename $out)
echo "all $(( $(date +%s) - t0 )) s"
