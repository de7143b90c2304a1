#!/usr/bin/env bash
# Session 27, run 6. The final tip under validation with synchronization validation:
# test_convolution whole (the pieces case, the Winograd tile refusal), test_graph,
# test_squeeze_excitation; resnet50 and resnext50_32x4d at batch 32 through a Graph under
# validation (the pieces in one dispatch inside a network), validation messages counted.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
for t in test_convolution test_graph test_squeeze_excitation; do
  timeout 240 $D/bin/$t > $R/$t.txt 2>&1
  echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
done
grep -B3 -A25 'ERROR\|FAILED' $R/test_*.txt | head -60
work=/tmp/ab; mkdir -p $work/models
(unset VKCNN_VALIDATION; PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,resnext50_32x4d --runs 1 --warmup 0 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log)
echo "models $(( $(date +%s) - t0 )) s"
for net in resnet50 resnext50_32x4d; do
  timeout 120 $D/bin/vkcnn bench $work/models/$net.onnx --fp16 --batch 32 --iterations 2 --input $work/models/${net}_b32_input.npy \
    --reference $work/models/${net}_b32_output.npy > $R/validation_$net.txt 2>&1
  echo "$net under validation rc=$? $(grep -ci 'vuid\|sync-hazard\|validation error' $R/validation_$net.txt) messages; $(grep -i 'relative L2' $R/validation_$net.txt)"
  timeout 60 $D/bin/vkcnn profile $work/models/$net.onnx --fp16 --batch 32 --iterations 1 > $R/profile_$net.txt 2>&1
  echo "  dispatches over pieces: $(grep -c ' pieces' $R/profile_$net.txt)"
done
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r6.tgz r6
