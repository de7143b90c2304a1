#!/usr/bin/env bash
# Session 24, run 8. convolution_narrow.comp, second design: 4 pixels along x and 2 output slices
# an invocation, each weight block loaded once a tap for its 4 pixels (run 7's one invocation a
# pixel computing every slice lost). The narrow, sweep and matrix-unit cases under validation; the
# first layers, narrow against the tiles, float16 and float32; six networks at batch 1 and 32
# against M (main's tip without it, .dev-ab/M), M N N M. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r8; mkdir -p $R; H=bench/results/2026-11-27-h200-s24
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 120 $D/bin/test_convolution -tc='*convolution_narrow*,*sampled*,*clip*,*windows*' > $R/test_narrow.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_narrow.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -30
export LD_LIBRARY_PATH=$D/lib
timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_first.txt --fp16 --tiles narrow,64x64,64x64p2 --iterations 20 --warmup 0.2 > $R/first_fp16.jsonl 2>$R/first.err
timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_first.txt --fp32 --tiles narrow,gemm_128x16w8,gemm_large --iterations 20 --warmup 0.2 > $R/first_fp32.jsonl 2>>$R/first.err
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
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in ${nets//,/ }; do for b in 1 32; do run M $net $b 1 fp16; run N $net $b 1 fp16; run N $net $b 2 fp16; run M $net $b 2 fp16; done; done
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[MN]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
print("network format batch | M ms | N ms | N/M | L2 M / N")
for k, v in t.items():
    p = statistics.mean(v["M"]); s = statistics.mean(v["N"])
    print(f"{k} | {p:.3f} | {s:.3f} | {s/p:.3f} | {l2[(k,'M')]:.2g} / {l2[(k,'N')]:.2g} | {v['M']} {v['N']}")
PY
cd /tmp && tar czf $OUT/r8.tgz r8; ls -la $OUT
