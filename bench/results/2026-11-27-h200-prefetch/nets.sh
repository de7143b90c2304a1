#!/usr/bin/env bash
# 2026-11-27 (session 17): the twelve networks after this session's changes, scripts/bench-gpu.sh
# (untuned, 30 iterations; fp16 b1 and b32, fp32 b32), PyTorch in the same run. Two calls:
#   bash nets.sh
#   NETS=vgg16,mobilenet_v2,efficientnet_b0,googlenet,shufflenet_v2_x1_0,mobilenet_v3_large bash nets.sh
# Carried: .device-build, .gl.
set -uo pipefail
VKCNN_BENCH_ITERATIONS=30 VKCNN_BENCH_CONFIGS="${CONFIGS:-fp16:1 fp16:32 fp32:32}" timeout ${NETS_TIMEOUT:-450} \
  bash scripts/bench-gpu.sh $OUT/nets ${NETS:-resnext50_32x4d,resnet18,squeezenet1_1,regnet_y_800mf,densenet121,resnet50} > $OUT/nets.log 2>&1
echo "nets rc=$?"
cat $OUT/nets/results.md 2>/dev/null | head -60
