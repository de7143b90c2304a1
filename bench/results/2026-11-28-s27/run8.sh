#!/usr/bin/env bash
# Session 27, run 8. densenet121 at batch 32 ran 1.0% slower with the pieces change on the H100
# in run 7 (+0.1% on the H200 in run 5): A (4956963) against N and N with
# VKCNN_CONVOLUTION_PIECES=separate (the pieces one by one, as in A), A N S S N A, and which of its
# layers N runs over pieces (profile). Carried: .device-build, .gl, .dev-ab/A.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r8; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks densenet121 --runs 1 --warmup 0 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "models $(( $(date +%s) - t0 )) s"
run() {  # variant round
  local L=$D/lib e=; [ $1 = A ] && L=$root/.dev-ab/A/lib:$D/lib; [ $1 = S ] && e=VKCNN_CONVOLUTION_PIECES=separate
  env $e LD_LIBRARY_PATH=$L VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/densenet121.onnx \
    --fp16 --batch 32 --iterations 30 --input $work/models/densenet121_b32_input.npy \
    --reference $work/models/densenet121_b32_output.npy > $R/$1_$2.txt 2>&1 || echo "FAILED $1"
  echo "$1 $2 $(grep 'GPU-resident' $R/$1_$2.txt)"
}
run A 1; run N 1; run S 1; run S 2; run N 2; run A 2
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn profile $work/models/densenet121.onnx --fp16 --batch 32 --iterations 5 > $R/profile_N.txt 2>&1
echo "dispatches over pieces: $(grep -c ' pieces' $R/profile_N.txt)"; grep ' pieces' $R/profile_N.txt | head
cd /tmp && tar czf $OUT/r8.tgz r8
