#!/usr/bin/env bash
# Session 20, run 1 (diagnostic, main's library e90b517): every large tile with its reduction split
# 1-8 ways at batch 1 on the shapes of vgg16, resnet50, resnet18 (session 18 forced splits on
# 32x64, 64x16 and 64x64s4 only); and a probe: vgg16's 3x3 512->512 layers at 1, 2, 4 (8) images
# with fixed tiles, to see whether time grows with workgroups below one per multiprocessor.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r1
probe=32x64,64x64,64x64k64,128x128,64x128w8,32x64s4,64x64s4,128x128s4
timeout 120 $D/bin/vkcnn-bench-conv conv bench/results/2026-11-27-h200-b1-splits/probe_shapes.txt --fp16 \
  --iterations 30 --warmup 0.2 --tiles $probe > $R/probe.txt 2>&1
echo "probe rc=$? $(( $(date +%s) - t0 )) s"; cat $R/probe.txt | head -60
b1=auto,32x64s4,64x64,64x64s2,64x64s4,64x64s8,64x64k64,64x64k64s2,64x64k64s4,128x128,128x128s2,128x128s4,128x128s8,64x128w8,64x128w8s2,64x128w8s4,64x128w8s8,128x64w8s2,128x64w8s4
echo "$b1" > $R/tiles_b1.txt
PYTHONUNBUFFERED=1 timeout 300 python3 scripts/bench/conv_shapes.py --networks vgg16,resnet50,resnet18 \
  --bench $D/bin/vkcnn-bench-conv --out /tmp/r1b1 --formats fp16 --batches 1 --tiles $b1 --warmup 0.05 --no-torch > $R/shapes_b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - t0 )) s"; tail -1 $R/shapes_b1.log; cp /tmp/r1b1/conv_shapes.json $R/b1.json; cp /tmp/r1b1/*.md $R/ 2>/dev/null
cd /tmp && tar czf $OUT/r1.tgz r1; ls -la $OUT
