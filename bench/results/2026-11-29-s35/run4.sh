#!/usr/bin/env bash
# Session 35, run 4: the direct (grouped) convolution shader multiplies a texel by the weights'
# 4-column block (4 loads a slice and tap instead of weightRow's 16) where the destination slice is
# one block. O = before, N = after (libraries in .dev-ab). (a) N under validation with
# synchronization validation: test_convolution's grouped, swept and channel-window cases; (b) the
# grouped shapes of resnext50_32x4d and regnet_y_800mf at batch 32 and 1 (cold), the selector's
# choice, the direct shader forced (legacy) and the narrow tiles, O and N; (c) resnext50_32x4d
# and regnet_y_800mf at batch 32 and 1, float16, resident, O N N O. Carried: .device-build, .gl,
# .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r4.tgz r4); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
S=bench/results/2026-11-29-s35
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib N)
 timeout 150 $D/bin/test_convolution -tc='*grouped*,*sampled sweep*,*channel windows*,*groups with channels*' > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -n 3 $R/test_convolution.txt | head -n 2 | tr '\n' ' ')")
snap
work=/tmp/m4; mkdir -p $work
PYTHONUNBUFFERED=1 timeout 120 python3 scripts/bench/pytorch_side.py $work --networks resnext50_32x4d,regnet_y_800mf --runs 1 --warmup 1 --dtypes fp16 > $R/pytorch.log 2>&1 &
tiles=auto,legacy,64x16,128x16,64x32
for l in O N; do
  LD_LIBRARY_PATH=$(lib $l) timeout 100 $D/bin/vkcnn-bench-conv conv $S/shapes_grouped.txt --fp16 --tiles $tiles --warmup 0.05 > $R/shapes_${l}_b32.txt 2>&1
  echo "shapes $l b32 rc=$? $(( $(date +%s) - t0 )) s"
  LD_LIBRARY_PATH=$(lib $l) timeout 100 $D/bin/vkcnn-bench-conv conv $S/shapes_grouped_b1.txt --fp16 --cold --tiles $tiles --warmup 0.05 > $R/shapes_${l}_b1.txt 2>&1
  echo "shapes $l b1 rc=$? $(( $(date +%s) - t0 )) s"; snap
done
wait
echo "models $(( $(date +%s) - t0 )) s"
i=0
for l in O N N O; do
  i=$((i + 1))
  for m in resnext50_32x4d regnet_y_800mf; do for b in 32 1; do
    LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn bench $work/$m.onnx --fp16 --batch $b --iterations 80 \
      --input $work/${m}_b${b}_input.npy --reference $work/${m}_b${b}_output.npy > $R/${l}_${m}_b${b}_$i.txt 2>&1
    echo "$l $m b$b $(grep -E 'resident' $R/${l}_${m}_b${b}_$i.txt | grep -o 'median [0-9.]*') $(grep -o 'reference: [0-9.e-]*' $R/${l}_${m}_b${b}_$i.txt)"
  done; done
  snap
done
echo "done $(( $(date +%s) - t0 )) s"; snap
