#!/usr/bin/env bash
# Session 23, run 2. The GEMM addressed as the transforms lay out their buffers (run 1 read
# [position][rows] where they wrote [row block][position][128 rows]: wrong past 128 rows). Tests
# under validation; the eight weightiest float16 batch-32 shapes with each dispatch's time, and
# other GEMM tiles (VKCNN_WINOGRAD_MATRIX_TILE); three networks (A W). Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R; H=bench/results/2026-11-27-h200-winograd-f2
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc='*inograd*,*encodeBatch*' > $R/test_w.txt 2>&1
 echo "tests rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_w.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_w.txt | head -60
export LD_LIBRARY_PATH=$D/lib
timeout 120 $D/bin/vkcnn-bench-conv conv $H/big_shapes.txt --fp16 --tiles auto,winograd --iterations 20 --warmup 0.05 > $R/shapes.jsonl 2>$R/shapes.err
echo "shapes rc=$? $(( $(date +%s) - t0 )) s"
for t in 2x2/4x4 4x2/2x4 1x4/8x2 1x8/8x1 4x4/2x2; do
  VKCNN_WINOGRAD_MATRIX_TILE=$t timeout 60 $D/bin/vkcnn-bench-conv conv $H/big_shapes.txt --fp16 --tiles winograd --iterations 20 --warmup 0.05 > $R/shapes_${t/\//_}.jsonl 2>>$R/shapes.err
  echo "tile $t rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json, sys, glob
o = sys.argv[1]
for f in [o + "/shapes.jsonl"] + sorted(glob.glob(o + "/shapes_*.jsonl")):
    print("==", f.split("/")[-1])
    for l in open(f):
        try: r = json.loads(l)
        except Exception: continue
        print(f"{r['name']:12s} {r['tile']:9s} {r['ms']:.4f} ms {r['tflops']:7.1f} TF/s parts {r.get('parts_ms')}")
PY
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18
PYTHONUNBUFFERED=1 timeout 100 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
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
cd /tmp && tar czf $OUT/r2.tgz r2; ls -la $OUT
