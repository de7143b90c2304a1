#!/usr/bin/env bash
# Issue #11's workgroup-scope GEMM ceiling in one command on the GPU machine:
#   bash scripts/bench/wgscope-gpu.sh PACK OUT [TILES] [SIZES] [VARIANTS]
# PACK holds what a Debian build machine prepared: bin/vkcnn-bench-wgscope,
# gemm_workgroup_{direct,staged,tensor}.spv (build/bench/), and gl/ (the loader .debs, as for
# conv-gpu.sh). TILES: MxNxKwT,... (vkcnn-bench-wgscope gemm); SIZES: the square problem sizes;
# VARIANTS: direct, staged, tensor (gemm_workgroup.comp). Results go to OUT: summary.txt (the GPU,
# the driver), info.jsonl (what the driver reports about VK_KHR_cooperative_matrix and
# VK_NV_cooperative_matrix2), gemm.jsonl (one line a configuration and size: the check against
# the CPU, then the timing).
set -uo pipefail
pack=$(cd "$1" && pwd)
out=$2
tiles=${3:-64x64x16w128,64x64x32w128,128x64x16w128,64x128x16w128,128x128x16w128,128x128x16w256,128x128x32w256,128x128x64w256,128x256x16w256,128x256x32w256,256x128x16w256,256x128x32w256,256x256x16w256}
sizes=${4:-4096 8192}
variants=${5:-direct staged tensor}
mkdir -p "$out"
for f in "$pack"/gl/*.deb; do
  case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac
done
ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$out/summary.txt" 2>&1
bin=$pack/bin/vkcnn-bench-wgscope
timeout 60 "$bin" info > "$out/info.jsonl" 2>&1
cat "$out/info.jsonl"
# One process a configuration, each under its own timeout (25 s was too short at 8192³ on a
# freshly started machine: filling the buffers through ReBAR takes seconds): a configuration can hang the GPU (seen:
# 64x64x32w128 direct) or kill the driver's compiler.
for size in $sizes; do
  for variant in $variants; do
    for tile in ${tiles//,/ }; do
      timeout 40 "$bin" gemm "$variant=$pack/gemm_workgroup_$variant.spv" "$tile" $size $size $size \
        --iterations 20 2>/dev/null | grep '"variant"'
      rc=${PIPESTATUS[0]}
      [[ $rc != 0 ]] && echo "{\"variant\": \"$variant\", \"tile\": \"$tile\", \"size\": $size, \"rc\": $rc}"
    done
  done
done > "$out/gemm.jsonl"
cat "$out/gemm.jsonl"
