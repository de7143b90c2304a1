#!/usr/bin/env bash
# Session 27, run 9. After the review's refactor (one helper sizes convolution_tiled's grid):
# test_convolution's matrix-unit cases (every forced configuration, pieces, grouped, residuals,
# first dispatch, waves) and test_graph under validation with synchronization validation.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r9; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
timeout 200 $D/bin/test_convolution -tc="*every matrix-unit*,*pieces*,*grouped convolutions on the matrix*,*residual added before*,*already run*,*waves of work*,*encodeBatch*" > $R/test_convolution.txt 2>&1
echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')"
grep -B3 -A25 'ERROR\|FAILED' $R/test_*.txt | head -40
cd /tmp && tar czf $OUT/r9.tgz r9
