#!/usr/bin/env bash
# Session 31, run 7. C2 = N (run 6) with the one-image loop's tap and slice moved on by a fixed
# step instead of divided out each step. The fully connected cases under validation (C2); vgg16's
# batch-1 levels H N C2 C2 N H (H = a3889d0). Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r7.tgz r7); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib C2)
 timeout 100 $D/bin/test_convolution -tc='*fully connected*' > $R/test_fc.txt 2>&1
 echo "fully connected cases rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_fc.txt | head -2 | tr '\n' ' ')") &
[ -f $work/models/vgg16_b1_input.npy ] || PYTHONUNBUFFERED=1 timeout 100 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16 --runs 1 --warmup 1 > $R/pytorch.log 2>&1
wait; echo "models $(( $(date +%s) - t0 )) s"; snap
i=0
LD_LIBRARY_PATH=$(lib H) timeout 40 $D/bin/vkcnn bench $work/models/vgg16.onnx --fp16 --batch 1 --iterations 50 > /dev/null 2>&1  # warm-up
for l in H N C2 C2 N H; do
  i=$((i + 1))
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 1 --iterations 30 --levels > $R/levels_${l}_vgg16_b1_$i.txt 2>&1
  echo "$l $(grep -E 'classifier' $R/levels_${l}_vgg16_b1_$i.txt | awk '{printf "%s ", $2}') $(tail -1 $R/levels_${l}_vgg16_b1_$i.txt)"
done
echo "done $(( $(date +%s) - t0 )) s"; snap
