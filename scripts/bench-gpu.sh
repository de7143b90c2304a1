#!/usr/bin/env bash
# The GPU benchmark, in one command on the GPU machine:
#   bash scripts/bench-gpu.sh [RESULTS_DIR] [NETWORKS]
# vkcnn is built on a Debian machine and carried (the GPU machine has a driver and PyTorch but no
# Debian dev packages): run scripts/device-pack.sh there first and carry .device-build and .gl.
# Exports the torchvision networks with fixed-seed weights, times PyTorch (eager, CUDA graph; fp16,
# fp32 without TF32; batch 1 and 32), times vkcnn on the same models and inputs (fp16 and fp32
# storage), checks vkcnn's outputs against PyTorch's, and writes RESULTS_DIR/results.md.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-$root/bench-out}}
networks=${2:-resnet18,resnet50,mobilenet_v2,squeezenet1_1,googlenet,densenet121,shufflenet_v2_x1_0,efficientnet_b0}
iterations=${VKCNN_BENCH_ITERATIONS:-100}
mkdir -p "$out/models"
for f in "$root"/.gl/libvulkan1_*.deb; do dpkg -x "$f" /; done
ldconfig
export LD_LIBRARY_PATH=$root/.device-build/lib:${LD_LIBRARY_PATH:-}
vkcnn=$root/.device-build/bin/vkcnn
"$vkcnn" info | tee "$out/device.txt"
PYTHONUNBUFFERED=1 python3 "$root/scripts/bench/pytorch_side.py" "$out/models" --networks "$networks" \
  --runs "$iterations" 2>&1 | tee "$out/pytorch.log"
cp "$out/models/pytorch.json" "$out/"
for net in ${networks//,/ }; do
  for fmt in fp16 fp32; do
    for batch in 1 32; do
      cold=""
      [ "$batch" = 1 ] && cold="--cold"
      echo "== vkcnn $net $fmt batch $batch"
      "$vkcnn" bench "$out/models/$net.onnx" --$fmt --batch "$batch" --iterations "$iterations" $cold \
        --input "$out/models/${net}_b${batch}_input.npy" \
        --reference "$out/models/${net}_b${batch}_output.npy" \
        --json "$out/vkcnn_${net}_${fmt}_b${batch}.json" 2>&1 | tee -a "$out/vkcnn.log"
    done
  done
  "$vkcnn" profile "$out/models/$net.onnx" --fp16 > "$out/profile_${net}_fp16.txt" 2>&1
done
python3 "$root/scripts/bench/report.py" "$out"
