#!/usr/bin/env bash
# Session 35, run 3: the twelve networks at batch 32, float16 (main's behaviour: descriptor sets,
# VKCNN_NO_PUSH_DESCRIPTORS=1) twice, resident, against run 2's PyTorch figures; then float32 at
# batch 32 with PyTorch's float32 side (TF32 off) in the same run. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r3.tgz r3); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib VKCNN_NO_PUSH_DESCRIPTORS=1
work=/tmp/m2
nets="resnet18 resnet50 mobilenet_v2 squeezenet1_1 googlenet densenet121 shufflenet_v2_x1_0 efficientnet_b0 vgg16 mobilenet_v3_large resnext50_32x4d regnet_y_800mf"
ls $work/vgg16_b32_input.npy > /dev/null || PYTHONUNBUFFERED=1 timeout 240 python3 scripts/bench/pytorch_side.py $work --runs 3 --warmup 1 --dtypes fp16 > $R/pytorch16.log 2>&1
for i in 1 2; do
  for m in $nets; do
    timeout 40 $D/bin/vkcnn bench $work/$m.onnx --fp16 --batch 32 --iterations 60 \
      --input $work/${m}_b32_input.npy --reference $work/${m}_b32_output.npy > $R/fp16_${m}_b32_$i.txt 2>&1
    echo "fp16 $m b32 $(grep -E 'resident' $R/fp16_${m}_b32_$i.txt | grep -o 'median [0-9.]*') $(grep -o 'reference: [0-9.e-]*' $R/fp16_${m}_b32_$i.txt)"
  done
  snap
done
w32=/tmp/m3; mkdir -p $w32
PYTHONUNBUFFERED=1 timeout 240 python3 scripts/bench/pytorch_side.py $w32 --runs 3 --warmup 1 --dtypes fp32 > $R/pytorch32.log 2>&1
echo "pytorch fp32 rc=$? $(( $(date +%s) - t0 )) s"; cp $w32/pytorch.json $R/pytorch_fp32.json 2>/dev/null; snap
for m in $nets; do
  [ $(( $(date +%s) - t0 )) -gt 560 ] && break
  timeout 40 $D/bin/vkcnn bench $w32/$m.onnx --fp32 --batch 32 --iterations 30 \
    --input $w32/${m}_b32_input.npy --reference $w32/${m}_b32_output.npy > $R/fp32_${m}_b32.txt 2>&1
  echo "fp32 $m b32 $(grep -E 'resident' $R/fp32_${m}_b32.txt | grep -o 'median [0-9.]*') $(grep -o 'reference: [0-9.e-]*' $R/fp32_${m}_b32.txt)"
done
echo "done $(( $(date +%s) - t0 )) s"; snap
