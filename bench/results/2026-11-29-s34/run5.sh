#!/usr/bin/env bash
# Session 34, run 5: what one dependent kernel costs at batch 1 (floor.py): chains of 16 and 64
# Tanh on maps of 4x8x8, 64x56x56, 256x14x14 and 512x28x28, float16, vkcnn resident (and its
# levels) against PyTorch's CUDA graph and eager in the same run. The per-op cost is the slope
# between the 16- and 64-long chains. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r5.tgz r5); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
work=/tmp/floor; mkdir -p $work
PYTHONUNBUFFERED=1 timeout 200 python3 bench/results/2026-11-29-s34/floor.py $work > $R/pytorch.txt 2>&1; cat $R/pytorch.txt | grep chain
cp $work/floor_pytorch.json $R/
for m in $work/chain_*.onnx; do
  n=$(basename $m .onnx)
  timeout 60 $D/bin/vkcnn bench $m --fp16 --iterations 300 --json $R/$n.json > $R/$n.txt 2>&1
  timeout 60 $D/bin/vkcnn profile $m --fp16 --iterations 50 --levels > $R/levels_$n.txt 2>&1
  echo "$n $(grep -E 'resident' $R/$n.txt) | levels $(tail -1 $R/levels_$n.txt)"
done
echo "done $(( $(date +%s) - t0 )) s"; snap
