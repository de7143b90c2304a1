#!/usr/bin/env bash
# Session 34, run 2: the source activation in float32 (the portable GEMM tiles apply it as they
# fetch, where the matrix-unit shaders wait until they store): densenet121 float32 at batch 1 and
# 32, A = VKCNN_FUSE_SOURCE_ACTIVATION=0, B = fused, A B B A, resident with relative L2 against
# PyTorch's float32; PyTorch's float32 eager and CUDA graph (TF32 off) in the same run; a
# per-dispatch profile of each at batch 32. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r2.tgz r2); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
work=/tmp/m; mkdir -p $work
[ -f /tmp/m/densenet121.onnx ] || PYTHONUNBUFFERED=1 timeout 250 python3 scripts/bench/pytorch_side.py $work --networks densenet121 --runs 30 --warmup 10 --dtypes fp32 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"; cp $work/pytorch.json $R/ 2>/dev/null
M=$work/densenet121.onnx
cond() { [ $1 = A ] && echo 0 || echo 1; }
timeout 60 $D/bin/vkcnn bench $M --fp32 --batch 1 --iterations 50 > /dev/null 2>&1
i=0
for b in 1 32; do
  it=200; [ $b = 32 ] && it=20
  for l in A B B A; do
    i=$((i + 1))
    VKCNN_FUSE_SOURCE_ACTIVATION=$(cond $l) timeout 120 $D/bin/vkcnn bench $M --fp32 --batch $b --iterations $it \
      --input $work/densenet121_b${b}_input.npy --reference $work/densenet121_b${b}_output.npy --json $R/${l}_fp32_b${b}_$i.json > $R/${l}_fp32_b${b}_$i.txt 2>&1
    echo "$l b$b $(grep -E 'resident|relative' $R/${l}_fp32_b${b}_$i.txt | tr '\n' ' ')"
  done; snap
done
for l in A B; do
  VKCNN_FUSE_SOURCE_ACTIVATION=$(cond $l) timeout 120 $D/bin/vkcnn profile $M --fp32 --batch 32 --iterations 5 > $R/dispatches_${l}_fp32_b32.txt 2>&1
  echo "$l $(tail -1 $R/dispatches_${l}_fp32_b32.txt)"
done
python3 -c "import json; r=json.load(open('$R/pytorch.json'))['networks']['densenet121']; print('pytorch densenet121', {k: (v['eager']['median_ms'], v['graph']['median_ms']) for k, v in r.items() if isinstance(v, dict) and 'eager' in v})"
echo "done $(( $(date +%s) - t0 )) s"; snap
