#!/usr/bin/env bash
# Session 22, run 5. W = run 4 with the rule also fitted to run 4 (winogradChosen: 48 input,
# 32 output channels, 1 GFLOP, 32 blocks three quarters full), A = the main tip before the session (57329c6; .dev-ab/A).
# test_convolution whole and test_graph under validation; all twelve networks in float32 at batch 32 (A W), six at batch 1 (A W),
# two in float16 at batch 32 (A W, the matrix-unit path: unchanged but for encodeBatch), with
# PyTorch (float32 TF32 off, float16) in the same run. Carried: .device-build (W), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in W) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnet18,vgg16,googlenet,densenet121,resnext50_32x4d,mobilenet_v2,squeezenet1_1,efficientnet_b0,regnet_y_800mf,shufflenet_v2_x1_0,mobilenet_v3_large
PYTHONUNBUFFERED=1 timeout 240 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in ${nets//,/ }; do run A $net 32 1 fp32; run W $net 32 1 fp32; done
echo "fp32 b32 $(( $(date +%s) - t0 )) s"
for net in resnet50 resnet18 vgg16 googlenet densenet121 squeezenet1_1 mobilenet_v2; do run A $net 1 1 fp32; run W $net 1 1 fp32; run W $net 1 2 fp32; run A $net 1 2 fp32; done
echo "fp32 b1 $(( $(date +%s) - t0 )) s"
for net in resnet50 densenet121; do run A $net 32 1 fp16; run W $net 32 1 fp16; done
echo "fp16 b32 $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[AW]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network format batch | A ms | W ms | W/A | eager | graph | W vs eager | W vs graph | L2 A / W")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); p = statistics.mean(v["A"]); s = statistics.mean(v["W"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{n} {fmt} {b} | {p:.3f} | {s:.3f} | {s/p:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {g/s:.2f}x | {l2[(k,'A')]:.2g} / {l2[(k,'W')]:.2g}")
PY
cd /tmp && tar czf $OUT/r5.tgz r5; ls -la $OUT
