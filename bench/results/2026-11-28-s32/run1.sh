#!/usr/bin/env bash
# Session 32, run 1. B = the working tree: float16 images written as their bits through rgba16ui
# views (float16BitStores); F = the same library with VKCNN_FLOAT16_BIT_STORES=0 (float stores
# with the integer rounding, images not mutable-format: main's behaviour). Under validation with
# synchronization validation (B): test_convolution, test_concat, test_image, test_layout,
# test_graph. Epilogue shapes F B B F; networks at batch 1 and 32 F B B F; PyTorch in the same run.
# The tar in $OUT is remade after each step. Carried: .device-build (B), .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s); H=bench/results/2026-11-28-s32
R=/tmp/r1; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r1.tgz r1); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
flag() { case $1 in F) echo 0;; *) echo 1;; esac; }
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 60 $D/bin/test_convolution -tc='*float16 stores round*' > $R/test_rounding.txt 2>&1
 echo "rounding rc=$?: $(tail -3 $R/test_rounding.txt | head -2 | tr '\n' ' ')"
 for t in test_convolution test_concat test_image test_layout test_graph; do
   timeout 200 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done) &
PYTHONUNBUFFERED=1 timeout 230 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,resnet18,vgg16,mobilenet_v2,efficientnet_b0,resnext50_32x4d --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40; snap
for l in F B B F; do
  VKCNN_FLOAT16_BIT_STORES=$(flag $l) timeout 60 $D/bin/vkcnn-bench-conv conv $H/shapes_epilogue_b32.txt --fp16 --tiles auto --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$l\",/" >> $R/shapes.jsonl
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1] + "/shapes.jsonl"):
    r = json.loads(l); t[r["name"]][r["lib"]].append(r["ms"] * 1000)
for k, v in t.items(): print(k, "F", [round(x, 1) for x in v["F"]], "B", [round(x, 1) for x in v["B"]], round(min(v["B"]) / min(v["F"]), 3))
PY
echo "shapes $(( $(date +%s) - t0 )) s"; snap
run() {  # lib net batch round
  VKCNN_FLOAT16_BIT_STORES=$(flag $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in resnet50 resnet18 vgg16 mobilenet_v2 efficientnet_b0; do
  run F $net 1 1; run B $net 1 1; run B $net 1 2; run F $net 1 2; snap; done
echo "batch 1 $(( $(date +%s) - t0 )) s"
for net in resnet50 vgg16 resnext50_32x4d efficientnet_b0; do run F $net 32 1; run B $net 32 1; run B $net 32 2; run F $net 32 2; snap; done
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
