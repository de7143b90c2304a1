#!/usr/bin/env bash
# Session 25, run 9. N = depthwise convolutions with 4 destination pixels an invocation (the
# row's texels shared between them at stride 1) against R = 86dad0a (one pixel an invocation, rows
# of taps unrolled, .dev-ab/R); also the six depthwise shapes of shapes_dw.txt, R and N.
# The depthwise/sweep cases of test_convolution under validation with synchronization validation;
# profiles of four networks at batch 32, R and N (depthwise kernels compared); networks A/B (R N N
# R) at batch 32 and three at batch 1, PyTorch in the same run.
# Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r9; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc='*depthwise*,*sampled sweep*,*residual added*,*float16 and unorm8*' > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
work=/tmp/ab; mkdir -p $work/models
nets=mobilenet_v2,efficientnet_b0,mobilenet_v3_large
PYTHONUNBUFFERED=1 timeout 220 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do
  for c in R N; do
    LD_LIBRARY_PATH=$(lib $c) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$c timeout 60 $D/bin/vkcnn profile $work/models/$net.onnx --fp16 --batch 32 --iterations 10 --json $R/profile_${net}_b32_$c.json > $R/profile_${net}_b32_$c.txt 2>&1
  done
done
echo "profiles $(( $(date +%s) - t0 )) s"
for c in R N; do
  LD_LIBRARY_PATH=$(lib $c) timeout 100 $D/bin/vkcnn-bench-conv conv bench/results/2026-11-27-s25/shapes_dw.txt --fp16 --tiles auto --iterations 20 --warmup 0.3 2>>$R/shapes.err | sed "s/^{/{\"variant\":\"$c\",/" >> $R/shapes.jsonl
done
echo "shapes $(( $(date +%s) - t0 )) s"
for net in ${nets//,/ }; do run R $net 32 1; run N $net 32 1; run N $net 32 2; run R $net 32 2; done
echo "batch 32 $(( $(date +%s) - t0 )) s"
for net in mobilenet_v2 efficientnet_b0 mobilenet_v3_large; do run R $net 1 1; run N $net 1 1; run N $net 1 2; run R $net 1 2; done
echo "batch 1 $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[RN]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network format batch | R ms | N ms | N/R | eager | graph | N vs eager | N vs graph | L2 R / N")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); a = statistics.mean(v["R"]); s = statistics.mean(v["N"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{n} {fmt} {b} | {a:.3f} | {s:.3f} | {s/a:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {g/s:.2f}x | {l2[(k,'R')]:.2g} / {l2[(k,'N')]:.2g} | {v['R']} {v['N']}")
for net in "mobilenet_v2,efficientnet_b0,mobilenet_v3_large".split(","):
    s = {}
    for c in "RN":
        try: p = json.load(open(f"{o}/profile_{net}_b32_{c}.json"))
        except Exception: continue
        agg = collections.Counter()
        for k in p["kernels"]:
            kind = ("pool" if "Pool" in k["label"] and "Global" not in k["label"] else
                    "depthwise" if k["label"].endswith("Conv'") and not k.get("configuration") else "other")
            agg[kind] += k["median_ms"]
        s[c] = (p["total_ms"], agg)
    if len(s) == 2:
        print(f"{net} b32 profile R {s['R'][0]:.3f} N {s['N'][0]:.3f}; depthwise {s['R'][1]['depthwise']:.3f} -> {s['N'][1]['depthwise']:.3f}")
PY
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(list); names = []
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if r["name"] not in names: names.append(r["name"])
    t[(r["name"], r["variant"])].append(r["ms"])
for n in names: print(f"{n:14s} R {t[(n,'R')][0]*1000:7.1f} us  N {t[(n,'N')][0]*1000:7.1f} us")
PY
cd /tmp && tar czf $OUT/r9.tgz r9
