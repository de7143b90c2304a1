#!/usr/bin/env bash
# Session 32, run 5: run 4's networks moved 1-4% between processes, so the GPU time by levels
# (vkcnn profile --levels after a warm-up), F B B F F B, F = VKCNN_FLOAT16_BIT_STORES=0; the
# committed code (b8165d4).
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r5.tgz r5); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
flag() { case $1 in F) echo 0;; *) echo 1;; esac; }
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 100 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,mobilenet_v3_large --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
for nb in "resnet50 32" "resnet50 1" "mobilenet_v3_large 32"; do
  set -- $nb; i=0
  timeout 40 $D/bin/vkcnn bench $work/models/$1.onnx --fp16 --batch $2 --iterations 30 > /dev/null 2>&1  # warm-up
  for l in F B B F F B; do
    i=$((i + 1)); out=$R/levels_${l}_$1_b$2_$i.txt
    VKCNN_FLOAT16_BIT_STORES=$(flag $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn profile $work/models/$1.onnx --fp16 --batch $2 --iterations 30 --levels > $out 2>&1
    echo "$1 b$2 $l $(tail -1 $out)"
  done; snap
done
echo "done $(( $(date +%s) - t0 )) s"; snap
