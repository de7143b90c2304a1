#!/usr/bin/env bash
# Session 22, run 8. The final tip (T: the Winograd points, shared memory reflected and checked)
# under validation with synchronization validation: test_convolution whole, test_graph,
# test_squeeze_excitation; every pipeline the library makes (vkcnn-pipeline-stats); float32 and
# float16 networks at batch 32, A (57329c6) T T A, PyTorch in the same run. Carried:
# .device-build (T), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r8; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in T) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_graph test_squeeze_excitation; do
   timeout 150 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done)
grep -B3 -A12 'ERROR\|FAILED' $R/test_*.txt | head -30
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn-pipeline-stats --max-local 64 --variants f16,f32 > $R/pipeline-stats.txt 2>&1
echo "pipeline-stats rc=$?"; grep -i "winograd\|local_memory_size=[1-9]" $R/pipeline-stats.txt | head
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,densenet121
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in ${nets//,/ }; do for f in fp32 fp16; do run A $net 32 1 $f; run T $net 32 1 $f; run T $net 32 2 $f; run A $net 32 2 $f; done; done
echo "nets $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[AT]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network format batch | A ms | T ms | T/A | eager | graph | T vs eager | L2 A / T")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); p = statistics.mean(v["A"]); s = statistics.mean(v["T"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{n} {fmt} {b} | {p:.3f} | {s:.3f} | {s/p:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {l2[(k,'A')]:.2g} / {l2[(k,'T')]:.2g}")
PY
cd /tmp && tar czf $OUT/r8.tgz r8
