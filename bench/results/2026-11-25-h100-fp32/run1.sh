#!/usr/bin/env bash
# fp32 run 1: the forced-tile tests under validation, then the per-shape float32 batch-32 table
# with every portable tile forced (and the selector), against cuDNN.
set -uo pipefail
root=$(pwd)
R=$root/.dev-fp32
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$R/lib
mkdir -p /tmp/vkcnn-vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vkcnn-vl
(export VK_LAYER_PATH=/tmp/vkcnn-vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vkcnn-vl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
 timeout 60 $R/bin/test_convolution -tc="*GEMM tile*" > $OUT/test_convolution.txt 2>&1
 echo "tests rc=$?"; tail -4 $OUT/test_convolution.txt)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/device.txt
PYTHONUNBUFFERED=1 timeout 170 python3 $R/conv_shapes.py --bench $R/bin/vkcnn-bench-conv \
  --out /tmp/fp32 --formats fp32 --batches 32 --tiles auto,gemm_128x32,gemm_128x32w8,gemm_large,legacy > $OUT/shapes.log 2>&1
echo "shapes rc=$?"
cp /tmp/fp32/conv_fp32_b32.md /tmp/fp32/conv_shapes.json $OUT/ 2>/dev/null
tail -25 $OUT/shapes.log
