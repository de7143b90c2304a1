#!/usr/bin/env bash
# Session 35, run 2: push descriptors (VK_KHR_push_descriptor; P = default, pushed, S =
# VKCNN_NO_PUSH_DESCRIPTORS=1, descriptor sets as before) under validation with synchronization
# validation (test_context, test_graph, the pieces and forced-configuration cases of
# test_convolution), then the twelve networks at batch 1, float16, resident and end to end, P S S P,
# with PyTorch (eager, CUDA graph) in the same run. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r2.tgz r2); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_context test_graph "test_convolution -tc=*pieces*,*matrix-unit*,*split over workgroups*"; do
   n=${t%% *}; timeout 200 $D/bin/$t > $R/$n.txt 2>&1
   echo "$n rc=$? $(( $(date +%s) - t0 )) s: $(tail -n 3 $R/$n.txt | head -n 2 | tr '\n' ' ')"
 done)
snap
export LD_LIBRARY_PATH=$D/lib
work=/tmp/m2; mkdir -p $work
PYTHONUNBUFFERED=1 timeout 240 python3 scripts/bench/pytorch_side.py $work --runs 3 --warmup 1 --dtypes fp16 > $R/pytorch.log 2>&1
echo "pytorch rc=$? $(( $(date +%s) - t0 )) s"; cp $work/pytorch.json $R/ 2>/dev/null; snap
nets="resnet18 resnet50 mobilenet_v2 squeezenet1_1 googlenet densenet121 shufflenet_v2_x1_0 efficientnet_b0 vgg16 mobilenet_v3_large resnext50_32x4d regnet_y_800mf"
cond() { [ $1 = P ] && echo 0 || echo 1; }
timeout 60 $D/bin/vkcnn bench $work/resnet50.onnx --fp16 --iterations 100 > /dev/null 2>&1
i=0
for l in P S S P; do
  i=$((i + 1))
  for m in $nets; do
    VKCNN_NO_PUSH_DESCRIPTORS=$(cond $l) timeout 40 $D/bin/vkcnn bench $work/$m.onnx --fp16 --iterations 150 \
      --input $work/${m}_b1_input.npy --reference $work/${m}_b1_output.npy > $R/${l}_${m}_b1_$i.txt 2>&1
    echo "$l $m b1 $(grep -E 'resident' $R/${l}_${m}_b1_$i.txt | grep -o 'median [0-9.]*') e2e $(grep -E 'end-to-end' $R/${l}_${m}_b1_$i.txt | grep -o 'median [0-9.]*') $(grep -o 'encoded in [0-9.]*' $R/${l}_${m}_b1_$i.txt) $(grep -o 'reference: [0-9.e-]*' $R/${l}_${m}_b1_$i.txt)"
  done
  snap
  [ $(( $(date +%s) - t0 )) -gt 540 ] && break
done
echo "done $(( $(date +%s) - t0 )) s"; snap
