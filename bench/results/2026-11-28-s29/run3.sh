#!/usr/bin/env bash
# Session 29, run 3. The final code (F = working tree: the cursor, the trimmed chunk with the lane
# mask behind a uniform branch, the epilogue's fragments in pairs): test_convolution under
# validation, the shapes against C (4ea2b0a, the cursor alone), C F F C, and networks against
# A (d9f3acf), A F F A, PyTorch in the same run.
# Carried: .device-build (F's library), .gl, .dev-ab/{A,C}.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R; H=bench/results/2026-11-28-s29
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,vgg16,mobilenet_v2,efficientnet_b0
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 2 --warmup 1 > $R/pytorch.log 2>&1; cp $work/models/pytorch.json $R/
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in F) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution; do
   timeout 130 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done)
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
for l in C F F C; do
  for s in shapes_1x1 shapes_3x3_b32 shapes_3x3_b1; do
    LD_LIBRARY_PATH=$(lib $l) timeout 60 $D/bin/vkcnn-bench-conv conv $H/$s.txt --fp16 --tiles auto \
      --iterations 20 --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$l\",\"set\":\"$s\",/" >> $R/shapes.jsonl
  done
done
echo "shapes $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict); libs = ["C", "F"]
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r: t[(r["set"][7:], r["name"], r.get("config", "")[-24:])].setdefault(r["lib"], []).append(r["ms"] * 1000)
for (st, n, c), v in t.items():
    m = {k: min(v.get(k, [1])) for k in libs}
    print(f'{st:7s} {n:12s} {c:24s} ' + " ".join(f'{m[k]:8.1f}' for k in libs) + f'  {m["F"]/m["C"]:.3f}')
PY
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for b in 32 1; do for net in resnet50 vgg16 mobilenet_v2 efficientnet_b0; do
  [ $b = 1 ] && [ $net != resnet50 ] && [ $net != vgg16 ] && continue
  run A $net $b 1; run F $net $b 1; run F $net $b 2; run A $net $b 2; done; done
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[AF]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
try: r = json.load(open(o + "/pytorch.json"))["networks"]
except Exception: r = {}
print("network | A ms | F ms | F/A | eager | graph | L2 A / F")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); a = statistics.mean(v["A"]); s = statistics.mean(v["F"])
    p = r.get(n, {}).get(f"{fmt}_{b}", {}); e = p.get("eager", {}).get("median_ms", 0); g = p.get("graph", {}).get("median_ms", 0)
    print(f"{k} | {a:.3f} | {s:.3f} | {s/a:.3f} | {e:.3f} | {g:.3f} | {l2.get((k,'A'), 0):.2g} / {l2.get((k,'F'), 0):.2g} | {v['A']} {v['F']}")
PY
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r3.tgz r3
