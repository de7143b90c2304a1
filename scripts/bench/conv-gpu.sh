#!/usr/bin/env bash
# Issue #11's convolution benchmark in one command on the GPU machine:
#   bash scripts/bench/conv-gpu.sh PACK OUT [STEPS] [TILES]
# PACK holds what a Debian build machine prepared (the GPU machine has no Debian dev packages):
# lib/ (libvkcnn and the onnx/protobuf libraries it links), bin/ (vkcnn-bench-conv,
# test_convolution), gemm_ceiling.spv, conv_shapes.py, and gl/ (the loader, glvnd and
# validation-layer .debs, as scripts/device-pack.sh downloads them). STEPS (comma-separated,
# default tests,gemm,shapes,shapes32): test_convolution under validation, the GEMM ceiling, the
# per-shape tables against PyTorch in float16 and float32. TILES: the configurations timed per float16 shape (conv_shapes.py
# --tiles). Results go to OUT (at most 8 files: the tables, the logs, conv.tgz).
set -uo pipefail
pack=$(cd "$1" && pwd)
out=$2
steps=${3:-tests,gemm,shapes,shapes32}
tiles=${4:-auto,legacy,128x128,128x64,64x128,64x64,64x64k64}
mkdir -p "$out"
for f in "$pack"/gl/*.deb; do
  case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac
done
ldconfig
export LD_LIBRARY_PATH=$pack/lib:${LD_LIBRARY_PATH:-}
work=/tmp/vkcnn-conv-bench
rm -rf "$work" && mkdir -p "$work"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/summary.txt" 2>&1
if [[ ",$steps," == *,tests,* ]]; then
  mkdir -p /tmp/vkcnn-vl && dpkg -x "$pack"/gl/vulkan-validationlayers_*.deb /tmp/vkcnn-vl
  (export VK_LAYER_PATH=/tmp/vkcnn-vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
   export LD_LIBRARY_PATH=/tmp/vkcnn-vl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH
   start=$(date +%s)
   "$pack/bin/test_convolution" > "$out/test_convolution.txt" 2>&1
   echo "test_convolution rc=$? in $(( $(date +%s) - start )) s: $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test_convolution.txt" | tr -s ' ' | tr '\n' ' ')") |
    tee -a "$out/summary.txt"
fi
if [[ ",$steps," == *,gemm,* ]]; then
  for size in "4096 4096 4096" "8192 8192 8192" "12544 128 576"; do
    timeout 120 "$pack/bin/vkcnn-bench-conv" gemm "$pack/gemm_ceiling.spv" $size --iterations 20
  done > "$out/gemm.jsonl" 2>&1
  cat "$out/gemm.jsonl" | tee -a "$out/summary.txt"
fi
if [[ ",$steps," == *,shapes,* ]]; then
  PYTHONUNBUFFERED=1 timeout 420 python3 "$pack/conv_shapes.py" --bench "$pack/bin/vkcnn-bench-conv" \
    --out "$work" --formats fp16 --batches 32,1 --tiles "$tiles" 2>&1 | tee -a "$out/summary.txt"
  cp "$work"/conv_fp16_b32.md "$work"/conv_fp16_b1.md "$out/" 2>/dev/null
fi
if [[ ",$steps," == *,shapes32,* ]]; then
  PYTHONUNBUFFERED=1 timeout 240 python3 "$pack/conv_shapes.py" --bench "$pack/bin/vkcnn-bench-conv" \
    --out "$work/fp32" --formats fp32 --batches 32,1 2>&1 | tee -a "$out/summary.txt"
fi
(cd "$work" && tar czf "$out/conv.tgz" .)
