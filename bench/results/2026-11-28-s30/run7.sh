#!/usr/bin/env bash
# Session 30, run 7, the final code (S = working tree): the refitted cost model with the per-wave
# term, 256x128w8k16 kept from layers with a residual, 128x64w4k16 from layers wider than 64
# channels, the Winograd rule. test_convolution under validation (beside the models' export);
# networks against F (4da77e3), F S S F at batch 32, F S at batch 1. The tar in $OUT is remade
# after each step, so that a run cut short keeps what it has. Carried: .device-build (S), .gl,
# .dev-ab/F.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r7.tgz r7); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')") &
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,vgg16,mobilenet_v2,efficientnet_b0 --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40; snap
lib() { case $1 in S) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in resnet50 vgg16 mobilenet_v2 efficientnet_b0; do run F $net 32 1; run S $net 32 1; run S $net 32 2; run F $net 32 2; snap; done
for net in resnet50 vgg16; do run F $net 1 1; run S $net 1 1; done
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[FS]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
print("network | F ms | S ms | S/F | L2 F / S")
for k, v in t.items():
    a = statistics.mean(v["F"]); s = statistics.mean(v["S"])
    print(f"{k} | {a:.3f} | {s:.3f} | {s/a:.3f} | {l2.get((k,'F'), 0):.2g} / {l2.get((k,'S'), 0):.2g} | {v['F']} {v['S']}")
PY
echo "done $(( $(date +%s) - t0 )) s"; snap
