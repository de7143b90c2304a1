#!/usr/bin/env bash
# After the epilogue change: how far the cost model's choices are from the tuner's (vkcnn tune),
# fp16, vgg16 and resnet50 at batch 1 and 32: untuned, tuned, untuned again, and the tuned profile.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
work=/tmp/ab; mkdir -p $work/models
[ -f $work/models/vgg16.onnx ] && [ -f $work/models/resnet50.onnx ] || PYTHONUNBUFFERED=1 timeout 200 \
  python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,vgg16 --runs 30 > $work/pytorch.log 2>&1
t0=$(date +%s)
for net in vgg16 resnet50; do for batch in 1 32; do
  bench() { VKCNN_PIPELINE_CACHE_DIR=$1 timeout 90 $D/bin/vkcnn bench $work/models/$net.onnx --fp16 --batch $batch \
    --iterations 30 --json $OUT/${net}_b${batch}_$2.json > /tmp/${net}_b${batch}_$2.txt 2>&1
    python3 -c "import json,sys; j=json.load(open('$OUT/${net}_b${batch}_$2.json')); print('$net b$batch $2', round(j['resident_median_ms'],3), round(j.get('gpu_median_ms',0),3))"; }
  rm -rf /tmp/tuned && mkdir -p /tmp/tuned /tmp/untuned
  bench /tmp/untuned untuned1
  VKCNN_PIPELINE_CACHE_DIR=/tmp/tuned timeout 200 $D/bin/vkcnn tune $work/models/$net.onnx --fp16 --batch $batch --iterations 3 > $OUT/tune_${net}_b${batch}.log 2>&1
  bench /tmp/tuned tuned
  bench /tmp/untuned untuned2
  VKCNN_PIPELINE_CACHE_DIR=/tmp/tuned $D/bin/vkcnn profile $work/models/$net.onnx --fp16 --batch $batch --iterations 3 > $OUT/profile_tuned_${net}_b${batch}.txt 2>&1
  VKCNN_PIPELINE_CACHE_DIR=/tmp/untuned $D/bin/vkcnn profile $work/models/$net.onnx --fp16 --batch $batch --iterations 3 > $OUT/profile_untuned_${net}_b${batch}.txt 2>&1
  echo "  $(( $(date +%s) - t0 )) s"
done; done 2>&1 | tee $OUT/summary.txt
cd $OUT && tar czf tune.tgz *.json *.log *.txt && rm -f *.json *.log profile_*
