#!/usr/bin/env bash
# Session 25, run 3. N = the cost models charge a candidate whose pipeline has no dispatch yet in
# the command buffer 8 us (its first dispatch in a submission), against A = main before it
# (0a6a451, .dev-ab/A). test_convolution whole and test_graph under validation with
# synchronization validation; six networks at batch 1 (A N N A) and two at batch 32 (A N N A),
# PyTorch in the same run; resnet50's batch-1 profiles, A and N. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_graph; do
   timeout 200 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done)
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnet18,googlenet,densenet121,mobilenet_v2,vgg16
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run A $net 1 1; run N $net 1 1; run N $net 1 2; run A $net 1 2; done
echo "batch 1 $(( $(date +%s) - t0 )) s"
for net in resnet50 densenet121; do run A $net 32 1; run N $net 32 1; run N $net 32 2; run A $net 32 2; done
echo "batch 32 $(( $(date +%s) - t0 )) s"
for c in A N; do
  LD_LIBRARY_PATH=$(lib $c) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$c timeout 60 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 1 --iterations 20 --json $R/profile_resnet50_b1_$c.json > $R/profile_resnet50_b1_$c.txt 2>&1
  LD_LIBRARY_PATH=$(lib $c) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$c timeout 60 $D/bin/vkcnn profile $work/models/resnet18.onnx --fp16 --batch 1 --iterations 20 --json $R/profile_resnet18_b1_$c.json > $R/profile_resnet18_b1_$c.txt 2>&1
done
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = {}
for f in sorted(glob.glob(o + "/[AN]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)] = j.get("relative_l2")
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network format batch | A ms | N ms | N/A | eager | graph | N vs eager | N vs graph | L2 A / N")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); a = statistics.mean(v["A"]); s = statistics.mean(v["N"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{n} {fmt} {b} | {a:.3f} | {s:.3f} | {s/a:.3f} | {e:.3f} | {g:.3f} | {e/s:.2f}x | {g/s:.2f}x | {l2[(k,'A')]:.2g} / {l2[(k,'N')]:.2g} | {v['A']} {v['N']}")
for net in ("resnet50", "resnet18"):
    pa = json.load(open(f"{o}/profile_{net}_b1_A.json")); pn = json.load(open(f"{o}/profile_{net}_b1_N.json"))
    print(net, "profile total A", round(pa["total_ms"], 4), "N", round(pn["total_ms"], 4))
    a = {k["label"]: k for k in pa["kernels"]}
    for k in pn["kernels"]:
        u = a.get(k["label"])
        if u and u["configuration"] != k["configuration"]:
            print(f'  {k["label"][:50]:50s} {u["configuration"]:14s} {u["median_ms"]*1e3:6.1f} -> {k["configuration"]:14s} {k["median_ms"]*1e3:6.1f}')
PY
cd /tmp && tar czf $OUT/r3.tgz r3
