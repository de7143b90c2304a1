#!/usr/bin/env bash
# Session 33, run 4: pooling windows up to 4x4 as specialization constants (the taps' loops
# unrolled, no branch between their fetches). A = 1d362f2, P = A with it. Levels after a warm-up,
# A P P A: vgg16 b1 and b32, resnet50 b1, googlenet b1 (the pooling rows printed). Under
# validation: test_pooling with P. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r4.tgz r4); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib P)
 timeout 200 $D/bin/test_pooling > $R/test_pooling.txt 2>&1
 echo "test_pooling rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_pooling.txt | head -2 | tr '\n' ' ')") &
need=; for n in vgg16 resnet50 googlenet; do [ -f $work/models/${n}_b1_input.npy ] || need=$need,$n; done
[ -z "$need" ] || PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks ${need#,} --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait; snap
for nb in "vgg16 1" "resnet50 1" "googlenet 1" "vgg16 32"; do
  set -- $nb; i=0
  LD_LIBRARY_PATH=$(lib A) timeout 60 $D/bin/vkcnn bench $work/models/$1.onnx --fp16 --batch $2 --iterations 30 > /dev/null 2>&1  # warm-up
  for l in A P P A; do
    i=$((i + 1)); out=$R/levels_${l}_$1_b$2_$i.txt
    LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 60 $D/bin/vkcnn profile $work/models/$1.onnx --fp16 --batch $2 --iterations 30 --levels > $out 2>&1
    echo "$1 b$2 $l pools $(grep -i 'pool' $out | grep -v -i global | awk '{s += $2} END {printf "%.4f", s}') $(tail -1 $out)"
  done; snap
done
echo "done $(( $(date +%s) - t0 )) s"; snap
