#!/usr/bin/env bash
# Session 31, run 8: the working tree's new case "short reductions over few tiles take a tile,
# long ones the split-k shader", the first-dispatch case and the fully connected cases under
# validation with synchronization validation on the final library. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
mkdir -p $OUT/r8
timeout 120 $D/bin/test_convolution -tc='*short reductions*,*already run in the command buffer*,*fully connected*,*float16 stores round*' -s > $OUT/r8/test_convolution.txt 2>&1
echo "rc=$?"; grep -E 'shortChoice|longChoice' $OUT/r8/test_convolution.txt | head -4; tail -3 $OUT/r8/test_convolution.txt
