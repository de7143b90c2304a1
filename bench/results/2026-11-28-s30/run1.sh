#!/usr/bin/env bash
# Session 30, run 1. The cost model's data after session 29's main loop: every tile of the table
# (the model's, the tuning-only ones) and the split-k shaders ("legacy") forced on every
# convolution shape of the nine networks at batch 32 and 1 (F = 4da77e3, main's tip); Winograd
# forced beside the direct tiles on the 3x3 stride-1 shapes. No PyTorch (earlier runs have its side).
# Carried: .device-build (the working tree), .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r1
tiles=auto,legacy,128x128,64x64,64x64k64,32x64,128x64w8,64x128w8,128x128p2,64x128w8p2,64x16,64x32,128x64w4k16,64x64k16,64x128w4k16,256x128w8k16
echo "$tiles" > $R/tiles.txt
PYTHONUNBUFFERED=1 timeout 420 python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv \
  --out $R/refit --formats fp16 --batches 32,1 --tiles $tiles --warmup 0.02 --no-torch > $R/refit.log 2>&1
echo "refit rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $R/refit.log
PYTHONUNBUFFERED=1 timeout 120 python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv \
  --out $R/winograd --formats fp16 --batches 32,1 --only-3x3-stride-1 \
  --tiles auto,winograd,128x128,256x128w8k16,128x64w4k16,64x64 --warmup 0.02 --no-torch > $R/winograd.log 2>&1
echo "winograd rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $R/winograd.log
cd /tmp && tar czf $OUT/r1.tgz r1
