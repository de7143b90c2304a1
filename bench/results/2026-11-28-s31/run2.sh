#!/usr/bin/env bash
# Session 31, run 2. Run 1's R (OpFConvert to float16 and back under RoundingModeRTE) stored
# truncated values on the H200, so: P0 = float16 rounding by packHalf2x16/unpackHalf2x16 (no
# float controls), P1 = the same with RoundingModeRTE declared, C = F with the first-dispatch
# charge only below two waves (s30's diff, without the rounding change); F = 7804c56. The
# rounding case under validation with each library; the epilogue shapes F P0 P1 P0 F; networks F
# C C F (resnet50) and F P0 P0 F. Carried: .device-build (R's test binary), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s); H=bench/results/2026-11-28-s31
R=/tmp/r2; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r2.tgz r2); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,mobilenet_v2,resnext50_32x4d --runs 1 --warmup 1 > $R/pytorch.log 2>&1 &
for l in F P0 P1; do
  VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1 LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib $l) \
    timeout 60 $D/bin/test_convolution -tc='*float16 stores round*' > $R/test_rounding_$l.txt 2>&1
  echo "rounding $l rc=$?: $(tail -3 $R/test_rounding_$l.txt | head -2 | tr '\n' ' ')"
done
grep -A3 'ERROR' $R/test_rounding_P0.txt | head -12
for l in F P0 P1 P0 F; do
  LD_LIBRARY_PATH=$(lib $l) timeout 60 $D/bin/vkcnn-bench-conv conv $H/shapes_epilogue_b32.txt --fp16 --tiles auto --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$l\",/" >> $R/shapes.jsonl
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1] + "/shapes.jsonl"):
    r = json.loads(l); t[r["name"]][r["lib"]].append(r["ms"] * 1000)
for k, v in t.items(): print(k, {x: [round(y, 1) for y in v[x]] for x in v}, "P0/F", round(min(v["P0"]) / min(v["F"]), 3), "P1/F", round(min(v["P1"]) / min(v["F"]), 3))
PY
echo "shapes $(( $(date +%s) - t0 )) s"; snap
wait; echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
run F resnet50 32 1; run C resnet50 32 1; run C resnet50 32 2; run F resnet50 32 2; snap
for net in resnet50 resnext50_32x4d mobilenet_v2; do run F $net 32 3; run P0 $net 32 1; run P0 $net 32 2; run F $net 32 4; snap; done
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = collections.defaultdict(set)
for f in sorted(glob.glob(o + "/*_*_fp16_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)].add(round(j.get("relative_l2") or 0, 5))
for k, v in t.items():
    print(k, {x: (round(statistics.mean(y), 3), [round(z, 3) for z in y], sorted(l2[(k, x)])) for x, y in v.items()})
PY
for l in F C; do
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 10 --levels > $R/levels_${l}_resnet50_b32.txt 2>&1
  tail -1 $R/levels_${l}_resnet50_b32.txt
done
echo "done $(( $(date +%s) - t0 )) s"; snap
