#!/usr/bin/env bash
# Session 23, run 1. F(2x2,3x3) on the matrix units (W) against the tip before the session's
# float16 path (A = .dev-ab/A, 57329c6: float16 unchanged since). Tests under validation (the new
# case first); every float16 3x3 stride-1 shape of six networks at batch 32 and 1: A's selector,
# W forced and W's first-guess rule, cuDNN in the same run; five networks in float16 at batch 32
# and two at batch 1 (A W), PyTorch in the same run. Carried: .device-build (W), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 120 $D/bin/test_convolution -tc='*F(2x2*' > $R/test_f2.txt 2>&1
 echo "test F(2x2) rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_f2.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_f2.txt | head -60
LD_LIBRARY_PATH=$D/lib timeout 30 $D/bin/vkcnn-pipeline-stats --max-local 64 > $R/pipeline_stats.txt 2>&1; grep -i "winograd" $R/pipeline_stats.txt
nets=vgg16,resnet18,resnet50,densenet121,googlenet,squeezenet1_1
PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$root/.dev-ab/A/lib:$D/lib timeout 150 python3 scripts/bench/conv_shapes.py --networks $nets \
  --only-3x3-stride-1 --bench $D/bin/vkcnn-bench-conv --out $R/A --formats fp16 --batches 1,32 --tiles auto --iterations 20 --warmup 0.02 --no-torch > $R/A.log 2>&1
echo "A rc=$? $(( $(date +%s) - t0 )) s"; tail -3 $R/A.log
PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$D/lib timeout 200 python3 scripts/bench/conv_shapes.py --networks $nets \
  --only-3x3-stride-1 --bench $D/bin/vkcnn-bench-conv --out $R/W --formats fp16 --batches 1,32 --tiles winograd,auto --iterations 20 --warmup 0.02 > $R/W.log 2>&1
echo "W rc=$? $(( $(date +%s) - t0 )) s"; tail -3 $R/W.log
python3 - $R <<'PY'
import json, sys
o = sys.argv[1]
def load(p):
    out = {}
    for b in (1, 32):
        try:
            for l in open(f"{p}/vkcnn_fp16_b{b}.jsonl"):
                r = json.loads(l)
                if "tile" in r: out[(b, r["name"], r["tile"])] = r["ms"]
        except FileNotFoundError: pass
    return out
a, w = load(o + "/A"), load(o + "/W")
try:
    j = json.load(open(o + "/W/conv_shapes.json"))
except Exception as e:
    print("no W json", e); sys.exit()
torch = {}
for tag, rows in j.get("rows", {}).items() if isinstance(j.get("rows"), dict) else []:
    pass
print("batch shape uses | A auto | W winograd | W auto | W/A")
for b in (1, 32):
    for i, s in enumerate(j["shapes"]):
        n = f"s{i}"
        A = a.get((b, n, "auto")); Wf = w.get((b, n, "winograd")); Wa = w.get((b, n, "auto"))
        if A and Wf:
            print(f"b{b} {s['desc']} {sum(s['count'].values())} | {A:.4f} | {Wf:.4f} | {Wa or 0:.4f} | {Wf/A:.2f}")
PY
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,densenet121,googlenet
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in W) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in ${nets//,/ }; do run A $net 32 1 fp16; run W $net 32 1 fp16; done
echo "fp16 b32 $(( $(date +%s) - t0 )) s"
for net in vgg16 resnet50; do run A $net 1 1 fp16; run W $net 1 1 fp16; done
echo "fp16 b1 $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[AW]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network format batch | A ms | W ms | W/A | eager | graph | W vs eager | W vs graph | L2 A / W")
for k, v in t.items():
    if not v["A"] or not v["W"]: print(k, dict(v)); continue
    n, fmt, b = k.rsplit("_", 2); p = statistics.mean(v["A"]); s = statistics.mean(v["W"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{n} {fmt} {b} | {p:.3f} | {s:.3f} | {s/p:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {g/s:.2f}x | {l2[(k,'A')]:.2g} / {l2[(k,'W')]:.2g}")
PY
cd /tmp && tar czf $OUT/r1.tgz r1; ls -la $OUT
