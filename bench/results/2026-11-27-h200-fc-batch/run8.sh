#!/usr/bin/env bash
# Session 19, run 8: the final tip's tests under validation (synchronization validation on) on
# the GPU: test_convolution's matrix-unit, split, pieces, residual, sweep and fully connected
# cases, test_graph, test_tensor, test_layout. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r8; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
timeout 300 $D/bin/test_convolution -tc="*matrix-unit configuration*,*split over workgroups*,*pieces of a batch*,*residual added before*,*sampled sweep*,*fully connected*,*encodeBatch*,*batched shader*" > $R/test_convolution.txt 2>&1
echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
for t in test_graph test_tensor test_layout; do
  timeout 100 $D/bin/$t > $R/$t.txt 2>&1
  echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
done
grep -B3 -A12 'ERROR\|FAILED' $R/*.txt | head -30
cd /tmp && tar czf $OUT/r8.tgz r8; ls -la $OUT
