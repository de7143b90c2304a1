#!/usr/bin/env bash
# Session 26, run 5. As run 4, the tile kept to layers of at least two waves of it (denseWaves; N =
# the working tree) against A = 2db807f's library (.dev-ab/A): the new case, the forced
# configurations, the first-dispatch case and test_graph under validation; networks at batch 32
# and 1, A N N A; where N runs the tile (profiles). Carried: .device-build, .gl, .dev-ab/A.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc='*waves of work*,*every matrix-unit configuration*,*already run in the command buffer*,*pieces of a batch*' > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,mobilenet_v2,googlenet
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in vgg16 resnet18 mobilenet_v2 googlenet; do run A $net 32 1; run N $net 32 1; run N $net 32 2; run A $net 32 2; done
echo "batch 32 $(( $(date +%s) - t0 )) s"
for net in vgg16 resnet50 resnet18; do run A $net 1 1; run N $net 1 1; run N $net 1 2; run A $net 1 2; done
echo "batch 1 $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}; gpu = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(o + "/[AN]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); gpu[key][lib].append(j["gpu_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network | A ms | N ms | N/A | GPU A | GPU N | eager | graph | L2 A / N")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); a = statistics.mean(v["A"]); s = statistics.mean(v["N"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{k} | {a:.3f} | {s:.3f} | {s/a:.3f} | {statistics.mean(gpu[k]['A']):.3f} | {statistics.mean(gpu[k]['N']):.3f} | {e:.3f} | {g:.3f} | {l2[(k,'A')]:.2g} / {l2[(k,'N')]:.2g} | {v['A']} {v['N']}")
PY
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 1 --iterations 10 > $R/profile_vgg16_b1_N.txt 2>&1
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn profile $work/models/resnet18.onnx --fp16 --batch 32 --iterations 10 > $R/profile_resnet18_b32_N.txt 2>&1
echo "128x64w4k16 dispatches: vgg16 b1 $(grep -c 128x64w4k16 $R/profile_vgg16_b1_N.txt), resnet18 b32 $(grep -c 128x64w4k16 $R/profile_resnet18_b32_N.txt)"
cd /tmp && tar czf $OUT/r5.tgz r5
