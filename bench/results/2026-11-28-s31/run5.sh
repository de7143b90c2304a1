#!/usr/bin/env bash
# Session 31, run 5. S = e3338bb (the final code: M of runs 3-4), F = 7804c56. Under validation
# with synchronization validation: test_convolution, test_graph, test_squeeze_excitation (S).
# Networks the change touches at batch 1 F S S F, at batch 32 F S S F; PyTorch in the same run.
# Carried: .device-build (S), .gl, .dev-ab/F.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r5.tgz r5); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in S) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_graph test_squeeze_excitation; do
   timeout 200 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done) &
PYTHONUNBUFFERED=1 timeout 220 python3 scripts/bench/pytorch_side.py $work/models --networks mobilenet_v3_large,googlenet,shufflenet_v2_x1_0,squeezenet1_1,mobilenet_v2,efficientnet_b0,resnet18 --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -30; snap
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in mobilenet_v3_large googlenet shufflenet_v2_x1_0 squeezenet1_1 mobilenet_v2 efficientnet_b0 resnet18; do
  run F $net 1 1; run S $net 1 1; run S $net 1 2; run F $net 1 2; snap; done
echo "batch 1 $(( $(date +%s) - t0 )) s"
for net in mobilenet_v3_large efficientnet_b0; do run F $net 32 1; run S $net 32 1; run S $net 32 2; run F $net 32 2; snap; done
echo "networks $(( $(date +%s) - t0 )) s"
cp $work/models/pytorch.json $R/ 2>/dev/null
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = collections.defaultdict(set)
for f in sorted(glob.glob(o + "/*_*_fp16_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)].add(round(j.get("relative_l2") or 0, 5))
try: r = json.load(open(o + "/pytorch.json"))["networks"]
except Exception: r = {}
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); p = r.get(n, {}).get(f"{fmt}_{b}", {})
    e = p.get("eager", {}).get("median_ms", 0); g = p.get("graph", {}).get("median_ms", 0)
    m = {x: statistics.mean(y) for x, y in v.items()}
    print(k, " ".join(f"{x} {m[x]:.3f}" for x in m), " ".join(f"{x}/F {m[x]/m['F']:.3f}" for x in m if x != "F"), f"eager {e:.3f} graph {g:.3f}", {x: ([round(z, 3) for z in y], sorted(l2[(k, x)])) for x, y in v.items()})
PY
echo "done $(( $(date +%s) - t0 )) s"; snap
