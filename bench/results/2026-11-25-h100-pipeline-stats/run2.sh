#!/usr/bin/env bash
# Shader audit run 2: pipeline statistics after the fix, the matrix-unit tests under validation,
# resnet50 float16 b1/b32 and the per-shape float16 b1 table (resnet50 shapes), before and after.
set -uo pipefail
root=$(pwd); R=$root/.dev-audit
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
cp -P $R/common/* $R/before/lib/; cp -P $R/common/* $R/after/lib/
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/device.txt
timeout 60 $R/after/bin/vkcnn-pipeline-stats --max-local 64 > $OUT/pipeline-stats-after.txt 2>&1
echo "stats rc=$?"; grep -v "Local_Memory_Size=0 " $OUT/pipeline-stats-after.txt | cut -c1-200
mkdir -p /tmp/vkcnn-vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vkcnn-vl
(export VK_LAYER_PATH=/tmp/vkcnn-vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vkcnn-vl/usr/lib/x86_64-linux-gnu:$R/after/lib
 timeout 45 $R/after/bin/test_convolution -tc="*matrix-unit configuration*,*residual added*" > $OUT/test_convolution.txt 2>&1
 echo "tests rc=$?"; tail -3 $OUT/test_convolution.txt)
cd /tmp && PYTHONPATH=$root/scripts/bench timeout 60 python3 -c "
import sys; sys.argv=['x']
import pytorch_side as p
p.export(p.build('resnet50'), '/tmp/resnet50.onnx', 17)" > /tmp/export.log 2>&1; echo "export rc=$?"; tail -2 /tmp/export.log
cd $root
for cfg in "1 60" "32 20"; do set -- $cfg
  for b in before after before after; do
    echo "== resnet50 fp16 b$1 $b"
    LD_LIBRARY_PATH=$R/$b/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$b timeout 30 $R/$b/bin/vkcnn bench /tmp/resnet50.onnx --fp16 --batch $1 --iterations $2 2>&1 | grep -iE "resident|error|L2" | head -3
  done
done > $OUT/networks.txt 2>&1
cat $OUT/networks.txt
for b in before after; do
  LD_LIBRARY_PATH=$R/$b/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$b PYTHONUNBUFFERED=1 timeout 50 python3 $R/conv_shapes.py \
    --bench $R/$b/bin/vkcnn-bench-conv --out /tmp/shapes-$b --formats fp16 --batches 1 --networks resnet50,resnet18 \
    --tiles auto,matrix_large,matrix_medium --no-torch > $OUT/shapes-$b.log 2>&1
  echo "shapes $b rc=$?"; cp /tmp/shapes-$b/conv_fp16_b1.md $OUT/conv_fp16_b1_$b.md 2>/dev/null; tail -2 $OUT/shapes-$b.log
done
