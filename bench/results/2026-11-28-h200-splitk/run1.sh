#!/usr/bin/env bash
# Session 18, run 1. (a) Diagnostic D (never committed; variants/diag-ksplit.diff): the reduction
# split across VKCNN_DIAG_KSPLIT workgroups along z with no reduction (racy output, timing only),
# batch 1, fp16, the selector's choice and three forced configurations, Z = 1, 2, 4.
# (b) Every tile forced on every shape, b32 and b1, main's library (A), for the cost-model refit.
# Carried: .device-build, .gl, .dev-ab (A, D).
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/device.txt 2>&1
export VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-run1
mkdir -p $OUT/r1
for Z in 1 2 4; do
  LD_LIBRARY_PATH=$root/.dev-ab/D/lib:$D/lib VKCNN_DIAG_KSPLIT=$Z PYTHONUNBUFFERED=1 timeout 150 \
    python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv --out /tmp/diag-z$Z \
    --formats fp16 --batches 1 --tiles auto,matrix_small,matrix_medium,32x64 --warmup 0.02 --no-torch \
    > $OUT/r1/diag-z$Z.log 2>&1
  echo "diag Z=$Z rc=$?"; cp /tmp/diag-z$Z/conv_shapes.json $OUT/r1/diag-z$Z.json 2>/dev/null
done
tiles=auto,matrix_small,matrix_medium,matrix_large,128x128,64x64,64x64k64,32x64,128x64w8,64x128w8,128x128p2,64x128w8p2,64x16,64x32
echo "$tiles" > $OUT/r1/tiles.txt
LD_LIBRARY_PATH=$root/.dev-ab/A/lib:$D/lib PYTHONUNBUFFERED=1 timeout 330 python3 scripts/bench/conv_shapes.py \
  --bench $D/bin/vkcnn-bench-conv --out /tmp/refit --formats fp16 --batches 32,1 --tiles $tiles \
  --warmup 0.02 --no-torch > $OUT/r1/refit.log 2>&1
echo "refit rc=$?"; tail -2 $OUT/r1/refit.log
cp /tmp/refit/conv_shapes.json $OUT/r1/refit.json 2>/dev/null; cp /tmp/refit/conv_fp16_b*.md $OUT/r1/ 2>/dev/null
cd $OUT && tar czf r1.tgz r1 && rm -rf r1; ls -la $OUT
