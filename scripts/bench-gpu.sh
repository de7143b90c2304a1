#!/usr/bin/env bash
# The GPU benchmark, in one command on the GPU machine:
#   bash scripts/bench-gpu.sh [RESULTS_DIR] [NETWORKS]
# vkcnn is built on a Debian machine and carried (the GPU machine has a driver and PyTorch but no
# Debian dev packages): run scripts/device-pack.sh there first and carry .device-build and .gl.
# Exports the torchvision networks with fixed-seed weights, times PyTorch (eager, CUDA graph; fp16,
# fp32 without TF32; batch 1 and 32), times vkcnn on the same models and inputs (fp16 and fp32
# storage), checks vkcnn's outputs against PyTorch's, and writes RESULTS_DIR/results.md (rewritten
# after every network, so a run cut short still reports what it measured) and results.tgz.
# VKCNN_BENCH_CONFIGS (default "fp16:1 fp16:32 fp32:1 fp32:32") picks the format:batch pairs;
# VKCNN_BENCH_TUNE=1 runs `vkcnn tune` on each pair before its benchmark (the tuning file lives in
# VKCNN_PIPELINE_CACHE_DIR, default the work folder's cache/), and the profile shows the choices.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-$root/bench-out}}
networks=${2:-resnet18,resnet50,mobilenet_v2,squeezenet1_1,googlenet,densenet121,shufflenet_v2_x1_0,efficientnet_b0,vgg16,mobilenet_v3_large,resnext50_32x4d,regnet_y_800mf}
configs=${VKCNN_BENCH_CONFIGS:-fp16:1 fp16:32 fp32:1 fp32:32}
iterations=${VKCNN_BENCH_ITERATIONS:-100}
work=${VKCNN_BENCH_WORK:-/tmp/vkcnn-bench}
mkdir -p "$out" "$work/models"
export VKCNN_PIPELINE_CACHE_DIR=${VKCNN_PIPELINE_CACHE_DIR:-$work/cache}
# The loader and the glvnd libraries the NVIDIA ICD needs (the validation layer is not wanted).
for f in "$root"/.gl/*.deb; do
  case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac
done
ldconfig
export LD_LIBRARY_PATH=$root/.device-build/lib:${LD_LIBRARY_PATH:-}
vkcnn=$root/.device-build/bin/vkcnn
"$vkcnn" info > "$work/device.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$work/device.txt" 2>&1
if [ ! -f "$work/models/pytorch.json" ]; then
  PYTHONUNBUFFERED=1 python3 "$root/scripts/bench/pytorch_side.py" "$work/models" --networks "$networks" \
    --runs "$iterations" > "$work/pytorch.log" 2>&1 || tail -20 "$work/pytorch.log"
fi
cp "$work/models/pytorch.json" "$work/" 2>/dev/null
for net in ${networks//,/ }; do
  for config in $configs; do
      fmt=${config%%:*} batch=${config##*:}
      if [ "${VKCNN_BENCH_TUNE:-0}" = 1 ]; then
        echo "== vkcnn tune $net $fmt batch $batch" >> "$work/tune.log"
        "$vkcnn" tune "$work/models/$net.onnx" --$fmt --batch "$batch" --iterations 3 >> "$work/tune.log" 2>&1 ||
          echo "   FAILED: vkcnn tune $net $fmt batch $batch" | tee -a "$work/tune.log"
      fi
      cold=""
      [ "$batch" = 1 ] && cold="--cold"
      echo "== vkcnn $net $fmt batch $batch" >> "$work/vkcnn.log"
      "$vkcnn" bench "$work/models/$net.onnx" --$fmt --batch "$batch" --iterations "$iterations" $cold \
        --input "$work/models/${net}_b${batch}_input.npy" \
        --reference "$work/models/${net}_b${batch}_output.npy" \
        --json "$work/vkcnn_${net}_${fmt}_b${batch}.json" >> "$work/vkcnn.log" 2>&1 ||
        echo "   FAILED: vkcnn bench $net $fmt batch $batch" | tee -a "$work/vkcnn.log"
  done
  "$vkcnn" profile "$work/models/$net.onnx" --fp16 > "$work/profile_${net}_fp16.txt" 2>&1
  [[ " $configs " == *" fp16:32 "* ]] &&
    "$vkcnn" profile "$work/models/$net.onnx" --fp16 --batch 32 --iterations 3 > "$work/profile_${net}_fp16_b32.txt" 2>&1
  python3 "$root/scripts/bench/report.py" "$work" > /dev/null && cp "$work/results.md" "$out/"
  (cd "$work" && tar czf "$out/results.tgz" *.json *.txt *.log results.md cache/convolution-tuning-*.bin 2>/dev/null)
done
cat "$out/results.md"
