#!/usr/bin/env bash
# Session 34, run 8: the final code (38e92f9: the source activation, its tuning key) under
# validation with synchronization validation: test_convolution whole, test_graph,
# test_onnx_import. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r8; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r8.tgz r8); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
for t in test_graph test_onnx_import test_convolution; do
  timeout 480 $D/bin/$t > $R/$t.txt 2>&1
  echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"; snap
done
echo "done $(( $(date +%s) - t0 )) s"; snap
