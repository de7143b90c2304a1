#!/usr/bin/env bash
# Session 21, run 9. W = the 128 x 32 tile as 16 warps of 8 x 1 (gemm_128x32w16) in the
# selector, M = the commit before (6720719: 8 warps of 8 x 2, gemm_128x32w8; .dev-ab/M). Tests
# under validation; all twelve networks in float32 at batch 32 M W W M with PyTorch (float32, TF32
# off) in the same run. Carried: .device-build (W), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r9; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in W) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc="*every portable GEMM tile*,*pieces of a batch*,*tuned configuration*,*tuneConvolutions*,*sampled sweep*,*every GEMM tile shape*,*residual added before*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnet18,vgg16,googlenet,densenet121,resnext50_32x4d,mobilenet_v2,squeezenet1_1,efficientnet_b0,regnet_y_800mf,shufflenet_v2_x1_0,mobilenet_v3_large
PYTHONUNBUFFERED=1 timeout 330 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp32 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run M $net 32 1; run W $net 32 1; run W $net 32 2; run M $net 32 2; done
echo "nets b32 $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[MW]_*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network | M ms | W ms | W/M | eager | graph | W vs eager | L2 M / W")
for k, v in t.items():
    n = k.rsplit("_", 1)[0]; p = statistics.mean(v["M"]); s = statistics.mean(v["W"])
    e = r[n]["fp32_b32"]["eager"]["median_ms"]; g = r[n]["fp32_b32"]["graph"]["median_ms"]
    print(f"{n} | {p:.3f} | {s:.3f} | {s/p:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {l2[(k,'M')]:.2g} / {l2[(k,'W')]:.2g}")
PY
cd /tmp && tar czf $OUT/r9.tgz r9; ls -la $OUT
