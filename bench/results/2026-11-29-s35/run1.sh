#!/usr/bin/env bash
# Session 35, run 1: (a) the GPU check session 34 owed (its `inline` epilogue loops) and the two
# shader tidy-ups (convolution_matrix.glsl's fetchRound mask behind SOURCE_ACTIVATION, the depthwise
# fast path's one bounds test) under validation with synchronization validation; (b) every
# convolution shape of the nine networks against cuDNN in one run, float16, batch 32 (selector's
# choice) and batch 1 (selector's choice and Winograd forced); (c) the GEMM ceiling at 8192^3.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r1.tgz r1); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 240 $D/bin/test_convolution -tc='*matrix-unit configuration*,*every neuron type*,*pipeline already run*,*source activation*,*depthwise*' > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -n 3 $R/test_convolution.txt | head -n 2 | tr '\n' ' ')")
snap
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r1
PYTHONUNBUFFERED=1 timeout 300 python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv \
  --out $R/b32 --formats fp16 --batches 32 --tiles auto > $R/b32.log 2>&1
echo "b32 rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 $R/b32.log; snap
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv \
  --out $R/b1 --formats fp16 --batches 1 --tiles auto --cold > $R/b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 $R/b1.log; snap
PYTHONUNBUFFERED=1 timeout 120 python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv \
  --out $R/b1w --formats fp16 --batches 1 --only-3x3-stride-1 --tiles auto,winograd,64x128w8p2,64x64p2 \
  --cold --no-torch > $R/b1w.log 2>&1
echo "b1w rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 $R/b1w.log; snap
timeout 120 $D/bin/vkcnn-bench-conv gemm $D/bin/gemm_ceiling.spv 8192 8192 8192 --modes 0 > $R/gemm.txt 2>&1
echo "gemm rc=$? $(( $(date +%s) - t0 )) s"; cat $R/gemm.txt | tail -n 20
echo "done $(( $(date +%s) - t0 )) s"; snap
