#!/usr/bin/env bash
# fp32 run 3: resnet50 and vgg16, float32 batch 32, against PyTorch eager (TF32 off); the same
# models again with VKCNN_CONVOLUTION_TILE=legacy (the old choice rule on the same shaders).
set -uo pipefail
root=$(pwd)
R=$root/.dev-fp32
mkdir -p $R/.device-build && ln -sfn $R/lib $R/.device-build/lib && ln -sfn $R/bin $R/.device-build/bin && ln -sfn $root/.gl $R/.gl
export VKCNN_BENCH_ITERATIONS=30 VKCNN_BENCH_CONFIGS="fp32:32" VKCNN_BENCH_WORK=/tmp/wf
timeout 200 bash $R/scripts/bench-gpu.sh /tmp/netf resnet50,vgg16 > /tmp/netf.log 2>&1
echo "bench rc=$?"
cp /tmp/netf/results.md $OUT/results.md; cp /tmp/netf/results.tgz $OUT/results.tgz
grep -E "^\| (resnet|vgg)" $OUT/results.md
export LD_LIBRARY_PATH=$R/lib
for net in resnet50 vgg16; do for tile in auto legacy; do
  if [ $tile = legacy ]; then export VKCNN_CONVOLUTION_TILE=legacy; else unset VKCNN_CONVOLUTION_TILE; fi
  echo "== $net fp32 b32 tile=$tile"; timeout 30 $R/bin/vkcnn bench /tmp/wf/models/$net.onnx --fp32 --batch 32 --iterations 30 2>&1 | grep -iE "resident|gpu|median" | head -4
done; done > $OUT/networks.txt 2>&1
cat $OUT/networks.txt
