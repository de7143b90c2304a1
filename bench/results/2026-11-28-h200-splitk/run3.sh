#!/usr/bin/env bash
# Session 18, run 3: S = the split reduction with the partials loaded back as fragments, and the
# selector's rule (32x64 split over workgroups for long reductions over few tiles). Tests under
# validation; b1 shapes with the splits forced; networks A S S A at b1 (and b32 for two).
# Carried: .device-build (S), .gl, .dev-ab (A = main).
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in S) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc="*matrix-unit configuration*,*split over workgroups*,*pieces of a batch*,*residual added before*,*sampled sweep*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt | head -40
b1=auto,matrix_small,matrix_medium,32x64,32x64s2,32x64s4,32x64s8,64x16s2,64x16s4,64x16s8,64x64s4
echo "$b1" > $R/tiles_b1.txt
LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r3 PYTHONUNBUFFERED=1 timeout 130 python3 scripts/bench/conv_shapes.py \
  --bench $D/bin/vkcnn-bench-conv --out /tmp/r3b1 --formats fp16 --batches 1 --tiles $b1 --warmup 0.02 --no-torch > $R/shapes_b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - t0 )) s"; tail -1 $R/shapes_b1.log; cp /tmp/r3b1/conv_shapes.json $R/b1.json
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnet18,resnext50_32x4d,densenet121,vgg16,mobilenet_v2
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 5 --warmup 2 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run A $net 1 1; run S $net 1 1; run S $net 1 2; run A $net 1 2; done
echo "nets b1 $(( $(date +%s) - t0 )) s"
for net in resnet50 resnext50_32x4d; do run A $net 32 1; run S $net 32 1; done
echo "nets b32 $(( $(date +%s) - t0 )) s"
LD_LIBRARY_PATH=$(lib S) timeout 30 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --iterations 20 > $R/profile_S_resnet50_b1.txt 2>&1
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}(L2 {e:.2g})" for l, m, e in v))
PY
cd /tmp && tar czf $OUT/r3.tgz r3; ls -la $OUT
