#!/usr/bin/env bash
# 2026-11-27: the per-shape table at batch 32 (fp16) with cuDNN beside it, six configurations per
# shape (fewer leave the clocks low: `final/` against `b1tiles/`), and each split batch's pieces
# side by side as a Graph runs them (--pieces). Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
LD_LIBRARY_PATH=$D/lib PYTHONUNBUFFERED=1 timeout 400 python3 scripts/bench/conv_shapes.py \
  --bench $D/bin/vkcnn-bench-conv --out $OUT --formats fp16 --batches 32 --pieces \
  --tiles auto,128x128,64x64,64x128w8p2,32x64,64x64k64 > $OUT/shapes.log 2>&1
echo "rc=$?"; tail -3 $OUT/shapes.log
head -20 $OUT/conv_fp16_b32.md | cut -c1-220; grep -A3 "Sum over" $OUT/conv_fp16_b32.md
