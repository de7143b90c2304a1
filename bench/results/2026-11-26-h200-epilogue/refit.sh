#!/usr/bin/env bash
# Every tile forced on every shape (but the two 128-row narrow tiles, 64x64p2 and matrix_large,
# which no earlier fit chose) (fp16, batch 32 then 1, no PyTorch) after the epilogue change,
# for scripts/bench/fit_cost_model.py: the tiles' constants were fitted on the unrolled epilogue.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/refit-cache
tiles=auto,matrix_small,matrix_medium,128x128,64x64,64x64k64,32x64,128x64w8,64x128w8,128x128p2,64x128w8p2,64x16,64x32
echo "$tiles" > $OUT/tiles.txt
PYTHONUNBUFFERED=1 timeout ${SHAPES_TIMEOUT:-480} python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv \
  --out /tmp/refit --formats fp16 --batches 32,1 --tiles $tiles --no-torch > $OUT/shapes.log 2>&1
echo "shapes rc=$?"; tail -3 $OUT/shapes.log
cp /tmp/refit/conv_shapes.json $OUT/ 2>/dev/null; cp /tmp/refit/conv_fp16_b*.md $OUT/ 2>/dev/null; ls $OUT
