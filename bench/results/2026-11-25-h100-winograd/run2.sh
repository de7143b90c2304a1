#!/usr/bin/env bash
# Run 2: the Winograd path built (winograd_input/output.comp + the 16-group 1x1 convolution):
# test_convolution's Winograd and grouped-tile cases under validation; the 12 shapes forced to
# winograd against the selector (before = main's build, after = this branch); vgg16 and resnet50
# float16 batch 1 through `vkcnn bench`, before/after alternated, relative L2 against PyTorch.
#   bash .dev-wino/run2.sh   (carry .dev-wino, .gl; results in $OUT)
set -uo pipefail
root=$(pwd); R=$root/.dev-wino
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/device.txt
mkdir -p /tmp/vkcnn-vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vkcnn-vl
(export VK_LAYER_PATH=/tmp/vkcnn-vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vkcnn-vl/usr/lib/x86_64-linux-gnu:$R/after/lib
 timeout 60 $R/after/bin/test_convolution -tc="*Winograd*,*grouped convolutions on the matrix units*" > $OUT/test_convolution.txt 2>&1
 echo "tests rc=$?"; tail -3 $OUT/test_convolution.txt)
for n in 1 32; do
  LD_LIBRARY_PATH=$R/before/lib timeout 40 $R/before/bin/vkcnn-bench-conv conv $R/direct_b$n.txt --fp16 --iterations 10 --tiles auto > $OUT/before_fp16_b$n.jsonl 2>&1
  VKCNN_CONVOLUTION_TILE=winograd LD_LIBRARY_PATH=$R/after/lib timeout 50 $R/after/bin/vkcnn-bench-conv conv $R/direct_b$n.txt --fp16 --iterations 10 --tiles winograd,auto > $OUT/after_fp16_b$n.jsonl 2>&1
  echo "shapes b$n rc=$?"
done
cd /tmp && PYTHONPATH=$root/scripts/bench timeout 80 python3 -c "
import torch, numpy as np, pytorch_side as p
for name in ('resnet50', 'vgg16'):
    m = p.build(name); p.export(m, f'/tmp/{name}.onnx', 17)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1235))
    with torch.inference_mode(): y = m.float()(x)
    np.save(f'/tmp/{name}_in.npy', x.numpy()); np.save(f'/tmp/{name}_out.npy', y.numpy())
" > /tmp/export.log 2>&1; echo "export rc=$?"; tail -2 /tmp/export.log
cd $root
for net in resnet50 vgg16; do
  for b in before after before after; do
    echo "== $net fp16 b1 $b"
    LD_LIBRARY_PATH=$R/$b/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$b timeout 30 $R/$b/bin/vkcnn bench /tmp/$net.onnx --fp16 --batch 1 --iterations 60 --input /tmp/${net}_in.npy --reference /tmp/${net}_out.npy 2>&1 | grep -iE "resident|gpu|error|L2" | head -5
  done
done > $OUT/networks.txt 2>&1
cat $OUT/networks.txt
