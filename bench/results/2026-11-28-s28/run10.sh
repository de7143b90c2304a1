#!/usr/bin/env bash
# Session 28, run 10. The first-dispatch charge counted per tile and epilogue whatever the
# epilogue's operations (run 9: shufflenet_v2's 1x1 layers had moved to 128x128): the cases around
# it under validation, and networks at batch 32 (resnet50 also at 1) against A (1b7ee79), A N N A.
# Carried: .device-build, .gl, .dev-ab/A.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r10; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution -tc="*already run*,*fixed in a tile*,*every matrix-unit configuration*,*pieces*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
export LD_LIBRARY_PATH=$D/lib
work=/tmp/ab; mkdir -p $work/models
nets=shufflenet_v2_x1_0,resnet50,regnet_y_800mf,mobilenet_v2
PYTHONUNBUFFERED=1 timeout 240 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in shufflenet_v2_x1_0 resnet50 regnet_y_800mf mobilenet_v2; do run A $net 32 1; run N $net 32 1; run N $net 32 2; run A $net 32 2; done
run A resnet50 1 1; run N resnet50 1 1; run N resnet50 1 2; run A resnet50 1 2
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[AN]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
try: r = json.load(open(o + "/pytorch.json"))["networks"]
except Exception: r = {}
print("network | A ms | N ms | N/A | eager | graph | L2 A / N")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); a = statistics.mean(v["A"]); s = statistics.mean(v["N"])
    p = r.get(n, {}).get(f"{fmt}_{b}", {}); e = p.get("eager", {}).get("median_ms", 0); g = p.get("graph", {}).get("median_ms", 0)
    print(f"{k} | {a:.3f} | {s:.3f} | {s/a:.3f} | {e:.3f} | {g:.3f} | {l2.get((k,'A'), 0):.2g} / {l2.get((k,'N'), 0):.2g} | {v['A']} {v['N']}")
PY
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r10.tgz r10
