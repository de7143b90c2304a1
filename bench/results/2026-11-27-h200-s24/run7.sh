#!/usr/bin/env bash
# Session 24, run 7. convolution_narrow.comp for layers of at most 4 input channels (first
# layers): test_convolution whole under validation with synchronization validation; the first
# layers of vgg16, resnet50, mobilenet_v2 and squeezenet at batch 32 and 1, narrow against the
# tiles the selector used to pick, float16 and float32; six networks in float16 at batch 32 and 1
# and two in float32 at batch 32, B (the session's start) N N B. Carried: .device-build, .gl,
# .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R; H=bench/results/2026-11-27-h200-s24
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -30
export LD_LIBRARY_PATH=$D/lib
timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_first.txt --fp16 --tiles narrow,64x64,32x64,64x64p2,128x128 --iterations 20 --warmup 0.2 > $R/first_fp16.jsonl 2>$R/first.err
timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_first.txt --fp32 --tiles narrow,gemm_128x16w8,gemm_128x32w16,gemm_large,gemm_small --iterations 20 --warmup 0.2 > $R/first_fp32.jsonl 2>>$R/first.err
echo "first layers $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/first_*.jsonl")):
    for l in open(f):
        try: r = json.loads(l)
        except Exception: continue
        print(f"{f.split('/')[-1][6:10]} {r['name']:12s} {r['tile']:15s} {r['ms']:.4f} ms")
PY
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,mobilenet_v2,squeezenet1_1,googlenet
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in ${nets//,/ }; do for b in 1 32; do run B $net $b 1 fp16; run N $net $b 1 fp16; run N $net $b 2 fp16; run B $net $b 2 fp16; done; done
for net in vgg16 resnet50; do run B $net 32 1 fp32; run N $net 32 1 fp32; run N $net 32 2 fp32; run B $net 32 2 fp32; done
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[BN]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network format batch | B ms | N ms | N/B | eager | graph | N vs eager | N vs graph | L2 B / N")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); p = statistics.mean(v["B"]); s = statistics.mean(v["N"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{n} {fmt} {b} | {p:.3f} | {s:.3f} | {s/p:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {g/s:.2f}x | {l2[(k,'B')]:.2g} / {l2[(k,'N')]:.2g} | {v['B']} {v['N']}")
PY
cd /tmp && tar czf $OUT/r7.tgz r7; ls -la $OUT
