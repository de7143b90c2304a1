#!/usr/bin/env bash
# Session 21, run 10: the final tip (1477919) under validation with synchronization validation:
# test_convolution whole and test_graph. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r10; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
for t in test_convolution test_graph; do
  timeout 400 $D/bin/$t > $R/$t.txt 2>&1
  echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
done
grep -B3 -A12 'ERROR\|FAILED' $R/*.txt | head -30
cd /tmp && tar czf $OUT/r10.tgz r10; ls -la $OUT
