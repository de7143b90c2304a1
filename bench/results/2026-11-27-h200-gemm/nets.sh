#!/usr/bin/env bash
# The networks not re-run since session 15's changes, and float32: scripts/bench-gpu.sh (untuned,
# 30 iterations; fp16 b1 and b32, fp32 b32), PyTorch in the same run.
set -uo pipefail
VKCNN_BENCH_ITERATIONS=30 VKCNN_BENCH_CONFIGS="${CONFIGS:-fp16:1 fp16:32 fp32:32}" timeout ${NETS_TIMEOUT:-420} \
  bash scripts/bench-gpu.sh $OUT/nets ${NETS:-resnext50_32x4d,resnet18,squeezenet1_1,regnet_y_800mf,densenet121,resnet50} > $OUT/nets.log 2>&1
echo "nets rc=$?"
cat $OUT/nets/results.md 2>/dev/null | head -60
