#!/usr/bin/env bash
# Session 27, run 4. As run 2, with a tile inside one piece fetching through a workgroup-uniform
# index (run 3: the per-row index cost the 1x1 layers 3-8%), the split shapes of run 3 with both
# libraries, googlenet added. A batch's pieces in one dispatch (convolution_tiled_pieces): the new case
# and the cases around pieces, residuals and grouped tiles under validation; the split shapes of
# run 1 as encodeBatch runs them (one dispatch) against one encode a piece side by side; networks
# at batch 32, A = 4956963 (.dev-ab/A), N = the working tree, A N N A; resnet50's profile.
# Carried: .device-build, .gl, .dev-ab/A.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R; H=bench/results/2026-11-28-s27
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution -tc="*pieces in one*,*pieces of a batch*,*encodeBatch runs*,*residual added before*,*grouped convolutions on the matrix*,*Winograd F(2x2*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A25 'ERROR\|FAILED' $R/test_*.txt | head -60
export LD_LIBRARY_PATH=$D/lib
$D/bin/vkcnn info | grep -i 'per-row'
for lib in N A; do L=$D/lib; [ $lib = A ] && L=$root/.dev-ab/A/lib:$D/lib; LD_LIBRARY_PATH=$L timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_pieces_subset.txt --fp16 --pieces --tiles auto --iterations 20 --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$lib\",/" >> $R/shapes.jsonl; done
echo "shapes rc=$? $(( $(date +%s) - t0 )) s"; head -3 $R/err.txt
python3 - $R <<'PY'
import json, sys
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "error" in r: print(r); continue
    if "ms" in r and r["name"].endswith("_one"): print(f'{r["name"]:12s} one dispatch {r["ms"]*1000:7.1f} {r["config"][-24:]}')
    if "batch_ms" in r: print(f'{r["lib"]} {r["name"]:12s} serial {r["serial_ms"]*1000:7.1f} side by side {r["concurrent_ms"]*1000:7.1f} encodeBatch {r["batch_ms"]*1000:7.1f} ({r["batch_config"]})')
PY
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnext50_32x4d,densenet121,vgg16,googlenet
PYTHONUNBUFFERED=1 timeout 280 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in resnet50 resnext50_32x4d densenet121 vgg16 googlenet; do run A $net 32 1; run N $net 32 1; run N $net 32 2; run A $net 32 2; done
echo "batch 32 $(( $(date +%s) - t0 )) s"
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
timeout 60 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 10 > $R/profile_resnet50_b32_N.txt 2>&1
grep -c pieces $R/profile_resnet50_b32_N.txt; tail -1 $R/profile_resnet50_b32_N.txt
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r4.tgz r4
