#!/usr/bin/env bash
# Session 26, run 1. Winograd F(2x2,3x3) with the GEMMs and the output transform fused
# (winograd_matrix_fused.comp) against the three-dispatch form (VKCNN_WINOGRAD_MATRIX=unfused) and
# the direct tiles: the Winograd test under validation (both forms); every 3x3 stride-1 float16
# shape of vgg16 and the resnets at batch 32 and 1, forced; vgg16, resnet50, resnet18 at batch 32
# and 1 with the committed rule (256 channels a side), U F F U. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R; H=bench/results/2026-11-28-s26
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution -tc='*Winograd F(2x2*' > $R/test_winograd.txt 2>&1
 echo "test rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_winograd.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_winograd.txt | head -40
export LD_LIBRARY_PATH=$D/lib
bench() {  # label shapes tiles [env...]
  local label=$1 shapes=$2 tiles=$3; shift 3
  env "$@" timeout 200 $D/bin/vkcnn-bench-conv conv $shapes --fp16 --tiles $tiles --iterations 20 --warmup 0.3 2>>$R/err.txt \
    | sed "s/^{/{\"variant\":\"$label\",/" >> $R/shapes.jsonl
  echo "$label $(( $(date +%s) - t0 )) s"
}
bench direct $H/shapes_3x3_b32.txt auto,64x64,128x128
bench fused $H/shapes_3x3_b32.txt winograd
bench unfused $H/shapes_3x3_b32.txt winograd VKCNN_WINOGRAD_MATRIX=unfused
bench fused64x128 $H/shapes_3x3_b32.txt winograd VKCNN_WINOGRAD_FUSED_TILE=2x4/2x2
bench b1direct $H/shapes_3x3_b1.txt auto
bench b1fused $H/shapes_3x3_b1.txt winograd
bench b1unfused $H/shapes_3x3_b1.txt winograd VKCNN_WINOGRAD_MATRIX=unfused
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict); names = []
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" not in r: print(r); continue
    if r["name"] not in names: names.append(r["name"])
    t[r["name"]][r["variant"] + ":" + r["tile"]] = (r["ms"], r.get("config", ""))
for n in names:
    print(n, "  ".join(f"{k}={v[0]*1000:.1f}({v[1][-18:]})" for k, v in t[n].items()))
PY
head -5 $R/err.txt
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16,resnet50,resnet18 --runs 3 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # form net batch round
  local e=VKCNN_WINOGRAD_MATRIX=fused; [ $1 = U ] && e=VKCNN_WINOGRAD_MATRIX=unfused
  env $e VKCNN_PIPELINE_CACHE_DIR=/tmp/cache timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in vgg16 resnet50 resnet18; do for b in 32 1; do run U $net $b 1; run F $net $b 1; run F $net $b 2; run U $net $b 2; done; done
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[UF]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
for k, v in t.items():
    a = statistics.mean(v["U"]); s = statistics.mean(v["F"])
    print(f"{k} | U {a:.3f} | F {s:.3f} | F/U {s/a:.3f} | L2 {l2[(k,'U')]:.2g} / {l2[(k,'F')]:.2g} | {v['U']} {v['F']}")
PY
cd /tmp && tar czf $OUT/r1.tgz r1
