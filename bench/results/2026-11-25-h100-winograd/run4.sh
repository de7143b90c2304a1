#!/usr/bin/env bash
# Run 4: the committed rule (512 -> 512+ channels, one image, <= 32x32): test_convolution's Winograd
# case under validation; per-shape b1 (forced winograd and the selector); resnet50 and vgg16
# float16 batch 1 before/after alternated, resnet50 batch 32 once each (a control: the rule does
# not pick Winograd there), relative L2 against PyTorch's float32 output.
set -uo pipefail
root=$(pwd); R=$root/.dev-wino
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/device.txt
mkdir -p /tmp/vkcnn-vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vkcnn-vl
(export VK_LAYER_PATH=/tmp/vkcnn-vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vkcnn-vl/usr/lib/x86_64-linux-gnu:$R/after/lib
 timeout 40 $R/after/bin/test_convolution -tc="*Winograd*" > $OUT/test_convolution.txt 2>&1
 echo "tests rc=$?"; tail -2 $OUT/test_convolution.txt)
VKCNN_CONVOLUTION_TILE=winograd LD_LIBRARY_PATH=$R/after/lib timeout 30 $R/after/bin/vkcnn-bench-conv conv $R/direct_b1.txt --fp16 --iterations 20 --tiles winograd,auto > $OUT/after_fp16_b1.jsonl 2>&1
LD_LIBRARY_PATH=$R/before/lib timeout 30 $R/before/bin/vkcnn-bench-conv conv $R/direct_b1.txt --fp16 --iterations 20 --tiles auto > $OUT/before_fp16_b1.jsonl 2>&1
cd /tmp && PYTHONPATH=$root/scripts/bench timeout 80 python3 -c "
import torch, numpy as np, pytorch_side as p
for name in ('resnet50', 'vgg16'):
    m = p.build(name); p.export(m, f'/tmp/{name}.onnx', 17)
    for b in (1, 32):
        x = torch.randn(b, 3, 224, 224, generator=torch.Generator().manual_seed(1234 + b))
        with torch.inference_mode(): y = m.float()(x)
        np.save(f'/tmp/{name}_b{b}_in.npy', x.numpy()); np.save(f'/tmp/{name}_b{b}_out.npy', y.numpy())
" > /tmp/export.log 2>&1; echo "export rc=$?"; tail -2 /tmp/export.log
cd $root
for cfg in "resnet50 1 60" "vgg16 1 60" "resnet50 32 20"; do set -- $cfg
  for b in before after before after; do
    [ $2 = 32 ] && [ $b = before ] && [ -n "${done32:-}" ] && continue
    echo "== $1 fp16 b$2 $b"
    LD_LIBRARY_PATH=$R/$b/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$b timeout 30 $R/$b/bin/vkcnn bench /tmp/$1.onnx --fp16 --batch $2 --iterations $3 --input /tmp/$1_b$2_in.npy --reference /tmp/$1_b$2_out.npy 2>&1 | grep -iE "resident|error|L2" | head -3
    [ $2 = 32 ] && [ $b = after ] && done32=1
  done
done > $OUT/networks.txt 2>&1
cat $OUT/networks.txt
LD_LIBRARY_PATH=$R/after/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-after timeout 30 $R/after/bin/vkcnn profile /tmp/vgg16.onnx --fp16 --batch 1 > $OUT/profile_vgg16_b1.txt 2>&1
grep -iE "winograd|512->512" $OUT/profile_vgg16_b1.txt | head -20
