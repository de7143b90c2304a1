#!/usr/bin/env bash
# Step 1 (estimate before any shader): the ten costliest 3x3 stride-1 batch-32 shapes (+2), each as
# the direct 3x3 convolution (d3x3), as the 16-group 1x1 convolution Winograd F(2x2,3x3) would run
# (g16: 16 Cin -> 16 Cout at ceil(H/2) x ceil(W/2)) and as one of its 16 per-position GEMMs alone
# (p1x1: Cin -> Cout at ceil(H/2)², x16 for the whole). Run on the GPU machine from the checkout:
#   bash .dev-wino/run1.sh $OUT   (carry .dev-wino, .gl)
set -uo pipefail
pack=$(cd "$(dirname "$0")" && pwd)
out=$1
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac; done
ldconfig
export LD_LIBRARY_PATH=$pack/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
b=$pack/bin/vkcnn-bench-conv
timeout 90 $b conv $pack/shapes_b32.txt --fp16 --iterations 10 --tiles auto,128x128,64x64,64x128w8,64x32 > "$out/fp16_b32.jsonl" 2>&1
timeout 45 $b conv $pack/shapes_b32.txt --fp32 --iterations 5 --tiles auto > "$out/fp32_b32.jsonl" 2>&1
timeout 30 $b conv $pack/shapes_b1.txt --fp16 --iterations 10 --tiles auto,64x64,64x32 > "$out/fp16_b1.jsonl" 2>&1
timeout 20 $b conv $pack/shapes_b1.txt --fp32 --iterations 5 --tiles auto > "$out/fp32_b1.jsonl" 2>&1
wc -l "$out"/*.jsonl
