#!/usr/bin/env bash
# Session 21, run 3. P = the portable tiles' rule counting every piece of a split batch (the
# pieces run side by side), F = the commit before (7a78fa1, addSlice; .dev-ab/F). Tests under
# validation; float32 networks at batch 32 F P P F with PyTorch (float32, TF32 off) in the same
# run; float32 profiles at batch 32. Carried: .device-build (P), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in P) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*pieces of a batch*,*every portable GEMM tile*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnet18,googlenet,densenet121,resnext50_32x4d,mobilenet_v2
PYTHONUNBUFFERED=1 timeout 240 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp32 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run F $net 32 1; run P $net 32 1; run P $net 32 2; run F $net 32 2; done
echo "nets b32 $(( $(date +%s) - t0 )) s"
for net in resnet50 resnet18 googlenet; do
  LD_LIBRARY_PATH=$(lib P) timeout 40 $D/bin/vkcnn profile $work/models/$net.onnx --fp32 --batch 32 --iterations 5 > $R/profile_P_${net}_fp32_b32.txt 2>&1
done
grep -h total $R/profile_*.txt
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]
t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/[FP]_*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms") or 0, j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v))
r = json.load(open(o + "/pytorch.json"))
for n, e in r["networks"].items():
    print(n, " ".join(f"{k} eager {e[k]['eager']['median_ms']:.3f} graph {e[k]['graph']['median_ms']:.3f}" for k in ("fp32_b32", "fp32_b1")))
PY
cd /tmp && tar czf $OUT/r3.tgz r3; ls -la $OUT
