#!/usr/bin/env bash
# Session 22, run 7. P = Winograd with the points 0, 1, -1, -2, 1/2 (winograd.glsl), W1 = the
# points 0, +-1, +-2 (9f5e71a; .dev-ab/W1), A = 57329c6 (.dev-ab/A): the Winograd tests under
# validation; relative L2 and time of the five networks with 3x3 layers in float32 at batch 32
# (A W1 P P W1 A) and vgg16 at batch 1, PyTorch in the same run. Carried: .device-build (P), .gl,
# .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in P) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*Winograd*,*encodeBatch*,*three dispatches*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt | head -30
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,googlenet,densenet121
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in ${nets//,/ }; do run A $net 32 1 fp32; run W1 $net 32 1 fp32; run P $net 32 1 fp32; run P $net 32 2 fp32; run W1 $net 32 2 fp32; run A $net 32 2 fp32; done
run A vgg16 1 1 fp32; run W1 vgg16 1 1 fp32; run P vgg16 1 1 fp32
echo "nets $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/*_fp32_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network batch | A ms | W1 ms | P ms | P/W1 | eager | L2 A / W1 / P")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); m = {l: statistics.mean(v[l]) for l in ("A", "W1", "P")}
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]
    print(f"{n} {b} | {m['A']:.3f} | {m['W1']:.3f} | {m['P']:.3f} | {m['P']/m['W1']:.3f} | {e:.3f} | {l2[(k,'A')]:.2g} / {l2[(k,'W1')]:.2g} / {l2[(k,'P')]:.2g}")
PY
cd /tmp && tar czf $OUT/r7.tgz r7
