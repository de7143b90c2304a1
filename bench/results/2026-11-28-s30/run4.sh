#!/usr/bin/env bash
# Session 30, run 4. Runs 2 and 3 timed the split batches by wall time, which drifted within a
# shape (128x128 timed again last: up to 2.5x its first time). Now vkcnn-bench-conv --batch: the
# pieces through encodeBatch with timestamps at the barriers (profileLevels), the same warm-up
# and repeat of the first configuration as the one-dispatch timings. Every candidate tile on the
# 97 split shapes of the cost model's regime at batch 32, 128x128 again last as a check; Winograd
# beside the direct tiles on their 3x3 stride-1 ones. Library: F's behaviour (the header gained
# an unused field). Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R; H=bench/results/2026-11-28-s30
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r4
tiles=auto,128x128,64x64,64x64k64,32x64,128x64w8,64x128w8,128x128p2,64x128w8p2,64x16,64x32,128x64w4k16,64x64k16,64x128w4k16,256x128w8k16,128x128
timeout 300 $D/bin/vkcnn-bench-conv conv $H/shapes_pieces_b32.txt --fp16 --tiles $tiles --batch --warmup 0.02 \
  > $R/batch.jsonl 2> $R/batch.err
echo "batch rc=$? $(( $(date +%s) - t0 )) s, $(wc -l < $R/batch.jsonl) lines"
timeout 60 $D/bin/vkcnn-bench-conv conv $H/shapes_pieces_3x3_b32.txt --fp16 --tiles auto,winograd,128x128,256x128w8k16,64x64 \
  --batch --warmup 0.02 > $R/batch_winograd.jsonl 2> $R/batch_winograd.err
echo "winograd rc=$? $(( $(date +%s) - t0 )) s"; cut -c1-120 $R/batch_winograd.jsonl
cd /tmp && tar czf $OUT/r4.tgz r4
