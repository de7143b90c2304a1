#!/usr/bin/env bash
# Session 31, run 1. R = the working tree: the matrix units' float16 stores rounded by the
# hardware's conversion, declared round-to-nearest-even (RoundingModeRTE), the matrix path
# conditional on shaderRoundingModeRTEFloat16; RC = R with the first-dispatch charge only below
# two waves (s30 variants/next-charge-below-two-waves.diff); F = 7804c56 (main's tip).
# test_convolution under validation (R); per shape F R R F; networks F R RC RC R F; resnet50's
# levels. The tar in $OUT is remade after each step. Carried: .device-build (R), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s); H=bench/results/2026-11-28-s31
R=/tmp/r1; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r1.tgz r1); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
LD_LIBRARY_PATH=$D/lib $D/bin/vkcnn info > $R/info.txt 2>&1; grep -i -E 'matrix|rounding' $R/info.txt | head -5
lib() { case $1 in R) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 60 $D/bin/test_convolution -tc='*float16 stores round*' > $R/test_rounding.txt 2>&1
 echo "rounding rc=$?: $(tail -3 $R/test_rounding.txt | head -2 | tr '\n' ' ')"
 timeout 200 $D/bin/test_convolution > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')") &
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,vgg16,mobilenet_v2,resnext50_32x4d --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40; snap
for l in F R R F; do
  LD_LIBRARY_PATH=$(lib $l) timeout 60 $D/bin/vkcnn-bench-conv conv $H/shapes_epilogue_b32.txt --fp16 --tiles auto --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$l\",/" >> $R/shapes.jsonl
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1] + "/shapes.jsonl"):
    r = json.loads(l); t[r["name"]][r["lib"]].append(r["ms"] * 1000)
for k, v in t.items(): print(k, "F", [round(x, 1) for x in v["F"]], "R", [round(x, 1) for x in v["R"]], round(min(v["R"]) / min(v["F"]), 3))
PY
echo "shapes $(( $(date +%s) - t0 )) s"; snap
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in resnet50 mobilenet_v2 resnext50_32x4d; do run F $net 32 1; run R $net 32 1; run RC $net 32 1; run RC $net 32 2; run R $net 32 2; run F $net 32 2; snap; done
run F vgg16 32 1; run R vgg16 32 1; run R vgg16 32 2; run F vgg16 32 2
run F resnet50 1 1; run R resnet50 1 1; run RC resnet50 1 1
echo "networks $(( $(date +%s) - t0 )) s"; snap
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/*_*_fp16_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
try: r = json.load(open(o + "/../ab/models/pytorch.json"))["networks"]
except Exception: r = {}
print("network | F | R | RC | R/F | RC/F | eager | graph | L2 F / R / RC")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); m = {x: statistics.mean(v[x]) if v[x] else float("nan") for x in ("F", "R", "RC")}
    p = r.get(n, {}).get(f"{fmt}_{b}", {}); e = p.get("eager", {}).get("median_ms", 0); g = p.get("graph", {}).get("median_ms", 0)
    print(f"{k} | {m['F']:.3f} | {m['R']:.3f} | {m['RC']:.3f} | {m['R']/m['F']:.3f} | {m['RC']/m['F']:.3f} | {e:.3f} | {g:.3f} | {l2.get((k,'F'))} / {l2.get((k,'R'))} / {l2.get((k,'RC'))} | {dict(v)}")
PY
cp $work/models/pytorch.json $R/ 2>/dev/null
for l in R RC; do
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 10 --levels > $R/levels_${l}_resnet50_b32.txt 2>&1
  tail -1 $R/levels_${l}_resnet50_b32.txt
done
echo "done $(( $(date +%s) - t0 )) s"; snap
