#!/usr/bin/env bash
# Session 23, run 5. The fitted rule (256 channels a side from 1.5 GFLOP, or 128 from 200000
# pixels) and the 2 x 2-warp tile of 4 x 4 fragments for 128 columns. test_convolution whole and
# test_graph under validation; all twelve networks in float16 at batch 32 and six at batch 1
# (A = .dev-ab/A, 57329c6, float16 unchanged since; A W, batch 1 A W W A), vgg16 in float32 at
# batch 32 (W alone), PyTorch in the same run. Carried: .device-build (W), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,googlenet,densenet121,resnext50_32x4d,mobilenet_v2,squeezenet1_1,efficientnet_b0,regnet_y_800mf,shufflenet_v2_x1_0,mobilenet_v3_large
PYTHONUNBUFFERED=1 timeout 240 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in W) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in ${nets//,/ }; do run A $net 32 1 fp16; run W $net 32 1 fp16; done
echo "fp16 b32 $(( $(date +%s) - t0 )) s"
for net in vgg16 resnet50 resnet18 googlenet squeezenet1_1 mobilenet_v2; do run A $net 1 1 fp16; run W $net 1 1 fp16; run W $net 1 2 fp16; run A $net 1 2 fp16; done
echo "fp16 b1 $(( $(date +%s) - t0 )) s"
run W vgg16 32 1 fp32
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
    n, fmt, b = k.rsplit("_", 2)
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    s = statistics.mean(v["W"])
    if not v["A"]:
        print(f"{n} {fmt} {b} | - | {s:.3f} | - | {e:.3f} | {g:.3f} | {e/s:.2f}x | {g/s:.2f}x | {l2[(k,'W')]:.2g}"); continue
    p = statistics.mean(v["A"])
    print(f"{n} {fmt} {b} | {p:.3f} | {s:.3f} | {s/p:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {g/s:.2f}x | {l2[(k,'A')]:.2g} / {l2[(k,'W')]:.2g}")
PY
cd /tmp && tar czf $OUT/r5.tgz r5; ls -la $OUT
