#!/usr/bin/env bash
# Session 33, run 3: fc7 at batch 1 takes 2 rows a slice (rowsPerSlice's rule, fitted at batch
# 32): 256 workgroups, 16 steps an invocation, about 16 warps a multiprocessor. A = b65f93e as
# chosen, R8 = VKCNN_FULLY_CONNECTED=batched8 (8 rows a slice for every fully connected layer:
# fc6 and fc8 take 8 already). vgg16 b1 levels A R8 R8 A after a warm-up. Carried: .device-build,
# .gl, .dev-ab (X = b65f93e's library).
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r3.tgz r3); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$root/.dev-ab/X/lib:$D/lib
work=/tmp/ab; mkdir -p $work/models
[ -f $work/models/vgg16_b1_input.npy ] || PYTHONUNBUFFERED=1 timeout 100 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16 --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
timeout 40 $D/bin/vkcnn bench $work/models/vgg16.onnx --fp16 --batch 1 --iterations 50 > /dev/null 2>&1  # warm-up
i=0
for l in A R8 R8 A R4 R4; do
  i=$((i + 1)); case $l in A) f=;; R8) f=batched8;; R4) f=batched4;; esac
  VKCNN_FULLY_CONNECTED=$f timeout 40 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 1 --iterations 30 --levels > $R/levels_${l}_vgg16_b1_$i.txt 2>&1
  echo "$l $(grep -E 'classifier' $R/levels_${l}_vgg16_b1_$i.txt | awk '{printf "%s %s | ", $2, $NF}') $(tail -1 $R/levels_${l}_vgg16_b1_$i.txt)"
done
echo "done $(( $(date +%s) - t0 )) s"; snap
