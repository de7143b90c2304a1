#!/usr/bin/env bash
# Session 28, run 6. The epilogue's neuron and residual as specialization constants of the tiled
# pipelines that read ahead (EPILOGUE_OPS): the new case and the cases around forced tiles, pieces
# and residuals under validation; the short-reduction shapes on A (1b7ee79) and N; networks at
# batch 32 and 1, A N N A, with PyTorch in the same run; resnet50's levels profile.
# Carried: .device-build, .gl, .dev-ab/A.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R; H=bench/results/2026-11-28-s28
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 280 $D/bin/test_convolution -tc="*fixed in a tile*,*every matrix-unit configuration*,*pieces in one*,*residual added before*,*every neuron type fused*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
export LD_LIBRARY_PATH=$D/lib
for lib in A N N A; do L=$D/lib; [ $lib != N ] && L=$root/.dev-ab/$lib/lib:$D/lib
  LD_LIBRARY_PATH=$L timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_1x1.txt --fp16 --tiles auto \
    --iterations 20 --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$lib\",/" >> $R/shapes.jsonl; done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r: t[r["name"]].setdefault(r["lib"], []).append(r["ms"] * 1000)
for n, v in t.items(): print(f'{n:14s} A {min(v["A"]):7.1f}  N {min(v["N"]):7.1f}  N/A {min(v["N"])/min(v["A"]):.3f}')
PY
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnet18,vgg16,mobilenet_v2,efficientnet_b0,densenet121
PYTHONUNBUFFERED=1 timeout 300 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for b in 32 1; do for net in resnet50 resnet18 vgg16 mobilenet_v2 efficientnet_b0 densenet121; do run A $net $b 1; run N $net $b 1; run N $net $b 2; run A $net $b 2; done; done
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
timeout 60 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 10 --levels > $R/levels_resnet50_b32_N.txt 2>&1; tail -1 $R/levels_resnet50_b32_N.txt
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r6.tgz r6
