#!/usr/bin/env bash
# Session 30, run 5. N = the working tree: the cost model with a per-wave term refitted on runs
# 1-4 (256x128w8k16, 64x64k16 and 64x128w4k16 in it), Winograd F(2x2) on the matrix units only
# from 512 input channels or below 8192 pixels. test_convolution under validation; networks
# against F (4da77e3, main's tip), F N N F, PyTorch in the same run.
# Carried: .device-build (N's library), .gl, .dev-ab/F.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,vgg16,mobilenet_v2,efficientnet_b0,regnet_y_800mf
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 2 --warmup 1 > $R/pytorch.log 2>&1; cp $work/models/pytorch.json $R/
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for b in 32 1; do for net in resnet50 vgg16 mobilenet_v2 efficientnet_b0 regnet_y_800mf; do
  [ $b = 1 ] && [ $net != resnet50 ] && [ $net != vgg16 ] && [ $net != mobilenet_v2 ] && continue
  run F $net $b 1; run N $net $b 1; run N $net $b 2; run F $net $b 2; done; done
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[FN]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
try: r = json.load(open(o + "/pytorch.json"))["networks"]
except Exception: r = {}
print("network | F ms | N ms | N/F | eager | graph | L2 F / N")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); a = statistics.mean(v["F"]); s = statistics.mean(v["N"])
    p = r.get(n, {}).get(f"{fmt}_{b}", {}); e = p.get("eager", {}).get("median_ms", 0); g = p.get("graph", {}).get("median_ms", 0)
    print(f"{k} | {a:.3f} | {s:.3f} | {s/a:.3f} | {e:.3f} | {g:.3f} | {l2.get((k,'F'), 0):.2g} / {l2.get((k,'N'), 0):.2g} | {v['F']} {v['N']}")
PY
for net in vgg16 regnet_y_800mf; do
  LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-N timeout 40 $D/bin/vkcnn profile $work/models/$net.onnx --fp16 --batch 32 --iterations 10 --levels > $R/levels_N_${net}_b32.txt 2>&1
done
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r5.tgz r5
