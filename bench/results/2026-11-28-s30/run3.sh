#!/usr/bin/env bash
# Session 30, run 3. Run 2's batch sweep again (97 split shapes of the cost model's regime at
# batch 32, every candidate tile through encodeBatch, wall time): run 2 timed each shape's first
# five configurations with the clocks still rising after the shape's setup (up to 3x slow). Now
# 0.3 s of warm-up before a shape's first configuration; 128x128 timed again last as a check.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R; H=bench/results/2026-11-28-s30
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r3
tiles=auto,128x128,64x64,64x64k64,32x64,128x64w8,64x128w8,128x128p2,64x128w8p2,64x16,64x32,128x64w4k16,64x64k16,64x128w4k16,256x128w8k16,128x128
timeout 400 $D/bin/vkcnn-bench-conv conv $H/shapes_pieces_b32.txt --fp16 --tiles $tiles --pieces-batch --warmup 0.03 \
  > $R/pieces.jsonl 2> $R/pieces.err
echo "pieces rc=$? $(( $(date +%s) - t0 )) s, $(wc -l < $R/pieces.jsonl) lines"
cd /tmp && tar czf $OUT/r3.tgz r3
