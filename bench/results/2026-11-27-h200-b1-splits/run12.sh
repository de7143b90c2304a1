#!/usr/bin/env bash
# Session 20, run 12: the final tip's tests on the GPU under validation with synchronization
# validation (test_convolution whole, test_graph, test_tensor, test_layout, test_tensor_matmul).
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r12; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
for t in test_convolution test_graph test_tensor test_layout test_tensor_matmul; do
  timeout 300 $D/bin/$t > $R/$t.txt 2>&1
  echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
done
grep -B3 -A12 'ERROR\|FAILED' $R/*.txt | head -30
cd /tmp && tar czf $OUT/r12.tgz r12; ls -la $OUT
