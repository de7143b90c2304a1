#!/usr/bin/env bash
# Session 18, run 2: the split reduction as written (S, .device-build; convolution_tiled with z
# workgroups per tile, the last adding the partials in order). Tests under validation (every
# matrix-unit configuration forced, tiles split 2 and 3 ways and 64x64s16; the determinism case;
# pieces side by side). Then every split of the small tiles at b1 and of the large ones at b32,
# forced on every shape, for the cost model. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution -tc="*matrix-unit configuration*,*split over workgroups*,*pieces of a batch*,*grouped convolutions on the matrix*,*residual added before*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt | head -60
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r2
b1=auto,matrix_small,matrix_medium
for t in 32x64 64x64 64x128w8p2 128x128 64x32 64x16; do b1=$b1,$t,${t}s2,${t}s4,${t}s8; done
echo "$b1" > $R/tiles_b1.txt
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv --out /tmp/r2b1 \
  --formats fp16 --batches 1 --tiles $b1 --warmup 0.02 --no-torch > $R/shapes_b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - t0 )) s"; tail -1 $R/shapes_b1.log
b32=auto,128x128,128x128s2,128x128s4,64x64,64x64s2,64x64s4,64x128w8p2,64x128w8p2s2,64x128w8p2s4
echo "$b32" > $R/tiles_b32.txt
PYTHONUNBUFFERED=1 timeout 170 python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv --out /tmp/r2b32 \
  --formats fp16 --batches 32 --tiles $b32 --warmup 0.02 --no-torch > $R/shapes_b32.log 2>&1
echo "b32 rc=$? $(( $(date +%s) - t0 )) s"; tail -1 $R/shapes_b32.log
cp /tmp/r2b1/conv_shapes.json $R/b1.json; cp /tmp/r2b32/conv_shapes.json $R/b32.json
cd /tmp && tar czf $OUT/r2.tgz r2; ls -la $OUT
