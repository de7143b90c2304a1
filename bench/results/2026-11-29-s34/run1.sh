#!/usr/bin/env bash
# Session 34, run 1: the source activation (a batch norm and ReLU applied by the convolution as it
# reads, ConvolutionDescriptor::sourceActivation) on densenet121, whose 62 pre-activation batch
# norms stood in a level each. One library: A = VKCNN_FUSE_SOURCE_ACTIVATION=0 (the graph as
# before: the shaders' activation is a specialization constant, 0 there), B = fused. densenet121
# b1 levels A B B A after a warm-up, resident A B B A with relative L2 against PyTorch's float32,
# b32 resident A B B A, a per-dispatch profile of each; PyTorch's eager and CUDA graph in the same
# run. Under validation (while the models are exported): test_convolution's source-activation
# cases (every matrix-unit configuration forced) and test_graph. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r1.tgz r1); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in "test_convolution -tc=*source?activation*" test_graph; do
   set -- $t; timeout 250 $D/bin/$t > $R/$1.txt 2>&1
   echo "$1 rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$1.txt | head -2 | tr '\n' ' ')"
 done) &
work=/tmp/m; mkdir -p $work
PYTHONUNBUFFERED=1 timeout 250 python3 scripts/bench/pytorch_side.py $work --networks densenet121 --runs 50 --warmup 10 --dtypes fp16 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait; cp $work/pytorch.json $R/ 2>/dev/null; snap
M=$work/densenet121.onnx
cond() { [ $1 = A ] && echo 0 || echo 1; }
timeout 60 $D/bin/vkcnn bench $M --fp16 --batch 1 --iterations 50 > /dev/null 2>&1
i=0
for l in A B B A; do
  i=$((i + 1))
  VKCNN_FUSE_SOURCE_ACTIVATION=$(cond $l) timeout 60 $D/bin/vkcnn profile $M --fp16 --batch 1 --iterations 30 --levels > $R/levels_${l}_b1_$i.txt 2>&1
  echo "$l levels $(tail -1 $R/levels_${l}_b1_$i.txt)"
done
for l in A B B A; do
  i=$((i + 1))
  VKCNN_FUSE_SOURCE_ACTIVATION=$(cond $l) timeout 60 $D/bin/vkcnn bench $M --fp16 --batch 1 --iterations 300 \
    --input $work/densenet121_b1_input.npy --reference $work/densenet121_b1_output.npy --json $R/${l}_b1_$i.json > $R/${l}_b1_$i.txt 2>&1
  echo "$l b1 $(grep -E 'resident|relative' $R/${l}_b1_$i.txt | tr '\n' ' ')"
done
snap
for l in A B B A; do
  i=$((i + 1))
  VKCNN_FUSE_SOURCE_ACTIVATION=$(cond $l) timeout 90 $D/bin/vkcnn bench $M --fp16 --batch 32 --iterations 30 \
    --input $work/densenet121_b32_input.npy --reference $work/densenet121_b32_output.npy --json $R/${l}_b32_$i.json > $R/${l}_b32_$i.txt 2>&1
  echo "$l b32 $(grep -E 'resident|relative' $R/${l}_b32_$i.txt | tr '\n' ' ')"
done
for l in A B; do
  VKCNN_FUSE_SOURCE_ACTIVATION=$(cond $l) timeout 60 $D/bin/vkcnn profile $M --fp16 --batch 1 --iterations 30 > $R/dispatches_${l}_b1.txt 2>&1
  VKCNN_FUSE_SOURCE_ACTIVATION=$(cond $l) timeout 90 $D/bin/vkcnn profile $M --fp16 --batch 32 --iterations 10 > $R/dispatches_${l}_b32.txt 2>&1
  echo "$l $(tail -1 $R/dispatches_${l}_b1.txt) | $(tail -1 $R/dispatches_${l}_b32.txt)"
done
python3 -c "import json; r=json.load(open('$R/pytorch.json'))['networks']['densenet121']; print('pytorch densenet121', {k: (v['eager']['median_ms'], v['graph']['median_ms']) for k, v in r.items() if isinstance(v, dict) and 'eager' in v})"
echo "done $(( $(date +%s) - t0 )) s"; snap
