#!/usr/bin/env bash
# Session 21, run 4 (data). The staged 64 x 16 (gemm_64x16w4) and 128 x 16 (gemm_128x16w8) tiles
# beside the portable ones, forced on every float32 batch-32 shape of six networks, a split
# batch's pieces also timed side by side, cuDNN (float32, TF32 off) in the same run; the new
# tiles' tests under validation. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*every portable GEMM tile*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt | head -30
export LD_LIBRARY_PATH=$D/lib
tiles=auto,gemm_128x32w8,gemm_128x16w8,gemm_64x16w4,gemm_large,gemm_small
echo "$tiles" > $R/tiles.txt
PYTHONUNBUFFERED=1 timeout 480 python3 scripts/bench/conv_shapes.py --networks resnet18,resnet50,densenet121,mobilenet_v2,resnext50_32x4d,googlenet \
  --bench $D/bin/vkcnn-bench-conv --out /tmp/r4s --formats fp32 --batches 32 --tiles $tiles --iterations 10 --warmup 0.02 --pieces > $R/shapes.log 2>&1
echo "shapes rc=$? $(( $(date +%s) - t0 )) s"; tail -15 $R/shapes.log
cp /tmp/r4s/conv_shapes.json /tmp/r4s/*.md $R/ 2>/dev/null; cp /tmp/r4s/*.jsonl $R/ 2>/dev/null
cd /tmp && tar czf $OUT/r4.tgz r4; ls -la $OUT
