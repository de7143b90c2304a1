#!/usr/bin/env bash
# Session 32, run 7: 37c8189 (the DispatchRecorder makes only the pipeline it dispatches).
# test_convolution, test_graph and test_concat under validation with synchronization validation;
# resnet50 at batch 1 F (VKCNN_FLOAT16_BIT_STORES=0) and B: pipelines made by the first run.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r7.tgz r7); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_graph test_concat; do
   timeout 170 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done) &
PYTHONUNBUFFERED=1 timeout 60 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50 --runs 1 --warmup 1 > $R/pytorch.log 2>&1
wait; grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -30; snap
for l in F B; do
  f=1; [ $l = F ] && f=0
  LD_LIBRARY_PATH=$D/lib VKCNN_FLOAT16_BIT_STORES=$f VKCNN_PIPELINE_CACHE=0 timeout 40 $D/bin/vkcnn bench $work/models/resnet50.onnx --fp16 --batch 1 --iterations 10 > $R/bench_$l.txt 2>&1
  echo "$l: $(grep -i -E 'pipelines|resident' $R/bench_$l.txt | head -4 | tr '\n' ' ')"
done
echo "done $(( $(date +%s) - t0 )) s"; snap
