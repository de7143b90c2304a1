#!/usr/bin/env bash
# Session 22, run 10. The final tip (5aee203) under validation with synchronization validation:
# test_convolution whole, test_graph, test_squeeze_excitation; vgg16 and resnet50 in float32 at
# batch 32 and 1 (the tip only; run 5 has the comparison). Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r10; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_graph test_squeeze_excitation; do
   timeout 150 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done)
grep -B3 -A12 'ERROR\|FAILED' $R/test_*.txt | head -30
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 120 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16,resnet50 --runs 3 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
for net in vgg16 resnet50; do for b in 32 1; do
  LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn bench $work/models/$net.onnx --fp32 --batch $b --iterations 15 \
    --input $work/models/${net}_b${b}_input.npy --reference $work/models/${net}_b${b}_output.npy \
    --json $R/T_${net}_fp32_b$b.json > $R/T_${net}_fp32_b$b.txt 2>&1 || echo "FAILED $net $b"
  head -3 $R/T_${net}_fp32_b$b.txt | tail -2; grep "relative L2" $R/T_${net}_fp32_b$b.txt
done; done
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r10.tgz r10
