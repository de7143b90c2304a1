#!/usr/bin/env bash
# Session 30, run 2. The cost model's regime at batch 32 where the layer limit splits the batch:
# a Graph runs the pieces as one dispatch (encodeBatch), which run 1's timestamps (one dispatch a
# piece, each alone) do not show. Every candidate tile forced on those 97 shapes, wall time of the
# batch through encodeBatch (vkcnn-bench-conv --pieces-batch); Winograd beside the direct tiles on
# their 3x3 stride-1 ones; and run 1's timestamped sweep again on the 66 unsplit shapes of the
# regime (a second sample against its noise). F = main's library with the bench tool's new flag.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R; H=bench/results/2026-11-28-s30
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r2
tiles=auto,128x128,64x64,64x64k64,32x64,128x64w8,64x128w8,128x128p2,64x128w8p2,64x16,64x32,128x64w4k16,64x64k16,64x128w4k16,256x128w8k16
timeout 330 $D/bin/vkcnn-bench-conv conv $H/shapes_pieces_b32.txt --fp16 --tiles $tiles --pieces-batch --warmup 0.03 \
  > $R/pieces.jsonl 2> $R/pieces.err
echo "pieces rc=$? $(( $(date +%s) - t0 )) s, $(wc -l < $R/pieces.jsonl) lines"
timeout 60 $D/bin/vkcnn-bench-conv conv $H/shapes_pieces_3x3_b32.txt --fp16 --tiles auto,winograd,128x128,256x128w8k16,64x64,64x64k64 \
  --pieces-batch --warmup 0.03 > $R/pieces_winograd.jsonl 2> $R/pieces_winograd.err
echo "pieces winograd rc=$? $(( $(date +%s) - t0 )) s"; cat $R/pieces_winograd.jsonl | cut -c1-200
timeout 120 $D/bin/vkcnn-bench-conv conv $H/shapes_whole_b32.txt --fp16 --tiles $tiles --warmup 0.02 \
  > $R/whole.jsonl 2> $R/whole.err
echo "whole rc=$? $(( $(date +%s) - t0 )) s, $(wc -l < $R/whole.jsonl) lines"
cd /tmp && tar czf $OUT/r2.tgz r2
