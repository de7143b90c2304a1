#!/usr/bin/env bash
# Session 19, run 1. Libraries: R = this session's tip (FullyConnected::encodeBatch + the cost
# model refit; .device-build), F = encodeBatch without the refit (.dev-ab/F). P = R with
# VKCNN_FULLY_CONNECTED=pieces: one fully connected encode per piece, as main before this session.
# Tests under validation; vgg16 P R R P (fp16 b32), P R (fp32 b32); the refit F R at b32 and b1;
# profiles of vgg16 b32. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in R|P) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*encodeBatch*,*batched shader*,*fully connected over whole*,*large fully connected*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -40
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,resnext50_32x4d,densenet121
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round [fp32]
  local env=""; [ $1 = P ] && env="VKCNN_FULLY_CONNECTED=pieces"
  local prec=--fp16 tag=fp16; [ "${5:-}" = fp32 ] && prec="" tag=fp32
  env LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 $env timeout 90 $D/bin/vkcnn bench $work/models/$2.onnx \
    $prec --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_${tag}_b$3_$4.json > $R/${1}_${2}_${tag}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $tag"
}
run P vgg16 32 1; run R vgg16 32 1; run R vgg16 32 2; run P vgg16 32 2
run P vgg16 32 1 fp32; run R vgg16 32 1 fp32
echo "vgg16 $(( $(date +%s) - t0 )) s"
run F resnet50 32 1; run R resnet50 32 1; run R resnet50 32 2; run F resnet50 32 2
for net in resnet18 resnext50_32x4d densenet121 vgg16; do run F $net 32 1; run R $net 32 1; done
echo "refit b32 $(( $(date +%s) - t0 )) s"
for net in resnet50 resnet18 vgg16 densenet121 resnext50_32x4d; do run F $net 1 1; run R $net 1 1; done
echo "refit b1 $(( $(date +%s) - t0 )) s"
for l in P R; do
  env LD_LIBRARY_PATH=$(lib $l) $([ $l = P ] && echo VKCNN_FULLY_CONNECTED=pieces) timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 32 --iterations 5 > $R/profile_${l}_vgg16_b32.txt 2>&1
done
grep -h "classifier\|total" $R/profile_*_vgg16_b32.txt | awk '{print}' | tail -12
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms", j.get("gpu_ms", 0)) or 0, j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v))
PY
cd /tmp && tar czf $OUT/r1.tgz r1; ls -la $OUT
