#!/usr/bin/env bash
# Session 22, run 1. F(4x4,3x3) Winograd through float32 buffers (W) against the main tip before it
# (A, 57329c6; .dev-ab/A): its tests under validation, pipeline statistics, every float32
# batch-32 3x3 stride-1 shape of five networks with the tiles forced and cuDNN (TF32 off) in the
# same run, and the five networks A W W A with PyTorch. Carried: .device-build (W), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in W) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 120 $D/bin/test_convolution -tc="*Winograd*,*every portable GEMM tile*,*tuned configuration*,*tuneConvolutions*,*residual added before*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn-pipeline-stats --max-local 64 --variants f32 > $R/pipeline-stats.txt 2>&1
grep -i "winograd" $R/pipeline-stats.txt | head
export LD_LIBRARY_PATH=$D/lib
tiles=auto,winograd,gemm_128x32w16,gemm_128x16w8
PYTHONUNBUFFERED=1 timeout 240 python3 scripts/bench/conv_shapes.py --networks vgg16,resnet18,resnet50,densenet121,googlenet \
  --only-3x3-stride-1 --bench $D/bin/vkcnn-bench-conv --out /tmp/r1s --formats fp32 --batches 32 --tiles $tiles --iterations 10 --warmup 0.02 --pieces > $R/shapes.log 2>&1
echo "shapes rc=$? $(( $(date +%s) - t0 )) s"; tail -4 $R/shapes.log
cp /tmp/r1s/conv_shapes.json /tmp/r1s/*.md /tmp/r1s/*.jsonl $R/ 2>/dev/null
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet18,resnet50,densenet121,googlenet
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp32 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run A $net 32 1; run W $net 32 1; run W $net 32 2; run A $net 32 2; done
echo "nets b32 $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[AW]_*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network | A ms | W ms | W/A | eager | graph | W vs eager | L2 A / W")
for k, v in t.items():
    n = k.rsplit("_", 1)[0]; p = statistics.mean(v["A"]); s = statistics.mean(v["W"])
    e = r[n]["fp32_b32"]["eager"]["median_ms"]; g = r[n]["fp32_b32"]["graph"]["median_ms"]
    print(f"{n} | {p:.3f} | {s:.3f} | {s/p:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {l2[(k,'A')]:.2g} / {l2[(k,'W')]:.2g}")
PY
cd /tmp && tar czf $OUT/r1.tgz r1; ls -la $OUT
