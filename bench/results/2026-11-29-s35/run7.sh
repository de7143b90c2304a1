#!/usr/bin/env bash
# Session 35, run 7: the final code (e9cacd7) under validation with synchronization validation:
# test_graph, test_onnx_import, test_squeeze_excitation, and test_convolution's grouped, residual,
# neuron and source-activation cases. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r7.tgz r7); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
for t in test_graph test_onnx_import test_squeeze_excitation "test_convolution -tc=*grouped*,*residual*,*every neuron*,*source activation on every shader*"; do
  n=${t%% *}; timeout 100 $D/bin/$t > $R/$n.txt 2>&1
  echo "$n rc=$? $(( $(date +%s) - t0 )) s: $(tail -n 3 $R/$n.txt | head -n 2 | tr '\n' ' ')"; snap
done
echo "done $(( $(date +%s) - t0 )) s"; snap
