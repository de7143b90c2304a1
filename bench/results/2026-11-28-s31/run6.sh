#!/usr/bin/env bash
# Session 31, run 6. N = the working tree: fully_connected_batched's one-image path returns before
# the batch loop (its pipeline without the FC_IMAGES accumulators: fewer registers, more
# workgroups and weight loads in flight a multiprocessor) and adds a slice's partial sums by halves
# instead of one invocation adding 32 x K_ROWS in turn. H = a3889d0 (main's tip). test_convolution
# under validation (N); networks at batch 1 H N N H; vgg16's batch-1 levels.
# Carried: .device-build (N's library), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r6.tgz r6); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib N)
 timeout 200 $D/bin/test_convolution > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')") &
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16,resnet50,mobilenet_v2,efficientnet_b0 --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -30; snap
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 30 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in vgg16 resnet50 mobilenet_v2 efficientnet_b0; do run H $net 1 1; run N $net 1 1; run N $net 1 2; run H $net 1 2; snap; done
echo "networks $(( $(date +%s) - t0 )) s"
for l in H N; do
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 1 --iterations 20 --levels > $R/levels_${l}_vgg16_b1.txt 2>&1
  grep -E 'classifier|total' $R/levels_${l}_vgg16_b1.txt
done
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
    print(k, " ".join(f"{x} {m[x]:.3f}" for x in m), " ".join(f"{x}/H {m[x]/m['H']:.3f}" for x in m if x != "H"), f"eager {e:.3f} graph {g:.3f}", {x: ([round(z, 3) for z in y], sorted(l2[(k, x)])) for x, y in v.items()})
PY
echo "done $(( $(date +%s) - t0 )) s"; snap
