#!/usr/bin/env bash
# Session 20, run 4 (data, main's library e90b517 + vkcnn-bench-conv --cold): every batch-1 shape
# of vgg16, resnet50, resnet18, densenet121, mobilenet_v2 with its weights and source from DRAM
# (a 256 MiB fill before each timed encode), as inside a network: one chunk in flight against two
# (p2), each split 1-8 ways, for the batch-1 rule. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r4
b1=auto,matrix_small,32x64,32x64s2,32x64s4,32x64s8,64x64,64x64s2,64x64s4,64x64s8,64x64p2,64x64p2s2,64x64p2s4,64x64p2s8,128x128,128x128s2,128x128s4,128x128s8,128x128p2,128x128p2s2,128x128p2s4,128x128p2s8,64x128w8p2,64x128w8p2s2,64x128w8p2s4,64x128w8p2s8,64x64k64,64x64k64s4
echo "$b1" > $R/tiles_b1.txt
PYTHONUNBUFFERED=1 timeout 420 python3 scripts/bench/conv_shapes.py --networks vgg16,resnet50,resnet18,densenet121,mobilenet_v2 \
  --bench $D/bin/vkcnn-bench-conv --out /tmp/r4b1 --formats fp16 --batches 1 --tiles $b1 --warmup 0.03 --iterations 15 --cold --no-torch > $R/shapes_b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $R/shapes_b1.log; cp /tmp/r4b1/conv_shapes.json $R/b1.json; cp /tmp/r4b1/*.md $R/ 2>/dev/null
cd /tmp && tar czf $OUT/r4.tgz r4; ls -la $OUT
