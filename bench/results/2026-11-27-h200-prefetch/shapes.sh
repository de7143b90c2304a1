#!/usr/bin/env bash
# 2026-11-27 (session 17): every b32 shape, the selector's choice only, each warmed 0.1 s before its
# round (without it, shapes-cold/: clocks low, up to 2.5x slow), cuDNN beside it, pieces
# side by side (conv_shapes.py --pieces). Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
LD_LIBRARY_PATH=$D/lib PYTHONUNBUFFERED=1 timeout ${SHAPES_TIMEOUT:-300} python3 scripts/bench/conv_shapes.py \
  --bench $D/bin/vkcnn-bench-conv --out $OUT --formats fp16 --batches 32 --pieces \
  --tiles ${TILES:-auto} --warmup ${WARMUP:-0.1} > $OUT/shapes.log 2>&1
echo "rc=$?"; tail -3 $OUT/shapes.log
head -16 $OUT/conv_fp16_b32.md | cut -c1-220; grep -A12 "Per network" $OUT/conv_fp16_b32.md
