#!/usr/bin/env bash
# Session 23, run 10. After the final review (the strides into push constants through one helper,
# the matrix GEMM's shared memory computed, the Winograd tests' shared layer): the Winograd,
# encodeBatch and shared-memory cases under validation with synchronization validation.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r10; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
timeout 200 $D/bin/test_convolution -tc='*inograd*,*encodeBatch*,*shared memory*,*tuneConv*' > $R/test.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test.txt | head -2 | tr '\n' ' ')"
grep -B3 -A12 'ERROR\|FAILED' $R/test.txt | head -30
cd /tmp && tar czf $OUT/r10.tgz r10
