#!/usr/bin/env bash
# Session 24, run 5. The session's final code (N) against its start (B = 5319091, .dev-ab/B):
# test_convolution whole, test_graph and test_squeeze_excitation under validation with
# synchronization validation; seven networks in float16 at batch 32 (B N N B) and vgg16, resnet50
# at batch 1, PyTorch in the same run; resnext50's profile at batch 32. Carried: .device-build,
# .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_graph test_squeeze_excitation; do
   timeout 240 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done)
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,densenet121,googlenet,mobilenet_v2,resnext50_32x4d
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in ${nets//,/ }; do run B $net 32 1 fp16; run N $net 32 1 fp16; run N $net 32 2 fp16; run B $net 32 2 fp16; done
for net in vgg16 resnet50; do run B $net 1 1 fp16; run N $net 1 1 fp16; run N $net 1 2 fp16; run B $net 1 2 fp16; done
echo "networks $(( $(date +%s) - t0 )) s"
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn profile $work/models/resnext50_32x4d.onnx --fp16 --batch 32 --iterations 10 --json $R/profile_resnext50_b32.json > $R/profile_resnext50_b32.txt 2>&1
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 32 --iterations 10 --json $R/profile_vgg16_b32.json > $R/profile_vgg16_b32.txt 2>&1
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[BN]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = (j.get("relative_l2"), j.get("device_bytes", 0) / 2**20)
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network format batch | B ms | N ms | N/B | eager | graph | N vs eager | N vs graph | L2 B / N | MiB B / N")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); p = statistics.mean(v["B"]); s = statistics.mean(v["N"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{n} {fmt} {b} | {p:.3f} | {s:.3f} | {s/p:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {g/s:.2f}x | {l2[(k,'B')][0]:.2g} / {l2[(k,'N')][0]:.2g} | {l2[(k,'B')][1]:.0f} / {l2[(k,'N')][1]:.0f} | {v['B']} {v['N']}")
j = json.load(open(o + "/profile_resnext50_b32.json")); agg = collections.Counter()
for k in j["kernels"]: agg[k["configuration"].split(" ")[0] if k["configuration"] else k["label"].split(" ")[0]] += k["median_ms"]
print("resnext50 b32 profile total", round(j["total_ms"], 3), agg.most_common(12))
PY
cd /tmp && tar czf $OUT/r5.tgz r5; ls -la $OUT
