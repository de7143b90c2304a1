#!/usr/bin/env bash
# Session 23, run 6. The float16 input transform through shared memory (a workgroup reads its
# 8 x 4 blocks' source pixels of 8 slices along rows of one layer; run 4's per-(block, slice) reads
# ran at 1.3 TB/s). The F(2x2) and encodeBatch tests under validation; run 2's eight shapes with
# each dispatch's time; every float16 3x3 stride-1 shape of six networks at batch 32 and 1 (W
# forced and W's rule; A from run 1, cuDNN in the same run); vgg16, resnet50, resnet18 in float16
# at batch 32 (A W W A), PyTorch in the same run. Carried: .device-build (W), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R; H=bench/results/2026-11-27-h200-winograd-f2
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 120 $D/bin/test_convolution -tc='*inograd*,*encodeBatch*' > $R/test_w.txt 2>&1
 echo "tests rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_w.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_w.txt | head -40
LD_LIBRARY_PATH=$D/lib timeout 30 $D/bin/vkcnn-pipeline-stats --max-local 64 > $R/pipeline_stats.txt 2>&1; grep -i "winograd_matrix" $R/pipeline_stats.txt
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn-bench-conv conv $H/big_shapes.txt --fp16 --tiles winograd --iterations 20 --warmup 0.05 > $R/shapes.jsonl 2>$R/shapes.err
python3 - $R <<'PY'
import json, sys
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    print(f"{r['name']:12s} {r['ms']:.4f} ms parts {' '.join(f'{x:.4f}' for x in (r.get('parts_ms') or [])[:3])}")
PY
nets=vgg16,resnet18,resnet50,densenet121,googlenet,squeezenet1_1
PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$D/lib timeout 200 python3 scripts/bench/conv_shapes.py --networks $nets \
  --only-3x3-stride-1 --bench $D/bin/vkcnn-bench-conv --out $R/W --formats fp16 --batches 1,32 --tiles winograd,auto --iterations 20 --warmup 0.02 > $R/W.log 2>&1
echo "W rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $R/W.log
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
for net in ${nets//,/ }; do run A $net 32 1 fp16; run W $net 32 1 fp16; run W $net 32 2 fp16; run A $net 32 2 fp16; done
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
    n, fmt, b = k.rsplit("_", 2); p = statistics.mean(v["A"]); s = statistics.mean(v["W"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{n} {fmt} {b} | {p:.3f} | {s:.3f} | {s/p:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {g/s:.2f}x | {l2[(k,'A')]:.2g} / {l2[(k,'W')]:.2g} | {v['A']} {v['W']}")
PY
cd /tmp && tar czf $OUT/r6.tgz r6; ls -la $OUT
