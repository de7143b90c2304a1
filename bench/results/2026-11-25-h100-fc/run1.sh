#!/usr/bin/env bash
# FC run 1 (before): vgg16 per-layer profile, fp32/fp16 at batch 32 and 1, and PyTorch eager.
set -uo pipefail
root=$PWD; R=$root/.dev-fc
for f in $root/.gl/*.deb; do case "$f" in *validation*) ;; *) dpkg -x "$f" / ;; esac; done; ldconfig
W=/tmp/fcw; mkdir -p $W
if [ ! -f $W/vgg16.onnx ]; then
  PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $W --networks vgg16 --runs 30 > $OUT/pytorch.log 2>&1; echo "pytorch rc=$?"
  cp $W/pytorch.json $OUT/ 2>/dev/null
fi
tail -5 $OUT/pytorch.log
export LD_LIBRARY_PATH=$R/before/lib VKCNN_PIPELINE_CACHE_DIR=$W/cache
vk=$R/before/bin/vkcnn
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
for fmt in fp32 fp16; do for b in 32 1; do
  timeout 40 $vk profile $W/vgg16.onnx --$fmt --batch $b --iterations 5 > $OUT/profile_${fmt}_b${b}.txt 2>&1
  echo "== $fmt b$b"; grep -E "Gemm|Pool|total" $OUT/profile_${fmt}_b${b}.txt
done; done
