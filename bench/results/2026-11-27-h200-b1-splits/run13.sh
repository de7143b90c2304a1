#!/usr/bin/env bash
# Session 20, run 13: after the review (latencyChoice on gemmShader's tile count, no change of
# choice meant): the forced-configuration, split and pieces cases and test_graph under
# validation; vgg16 and resnet50 at batch 1, profiles (the same configurations as run 10's U).
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r13; mkdir -p $R /tmp/m
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc="*matrix-unit configuration*,*split over workgroups*,*pieces of a batch*,*the batched shader*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$?: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$?: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
export LD_LIBRARY_PATH=$D/lib
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py /tmp/m --networks vgg16,resnet50 --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
for net in vgg16 resnet50; do
  timeout 30 $D/bin/vkcnn profile /tmp/m/$net.onnx --fp16 --iterations 20 > $R/profile_${net}_b1.txt 2>&1
  timeout 60 $D/bin/vkcnn bench /tmp/m/$net.onnx --fp16 --batch 1 --iterations 40 --input /tmp/m/${net}_b1_input.npy \
    --reference /tmp/m/${net}_b1_output.npy > $R/bench_${net}_b1.txt 2>&1
  echo "$net: $(grep -h total $R/profile_${net}_b1.txt) | $(grep -h 'GPU-resident\|relative' $R/bench_${net}_b1.txt | tr '\n' ' ')"
done
cd /tmp && tar czf $OUT/r13.tgz r13; ls -la $OUT
