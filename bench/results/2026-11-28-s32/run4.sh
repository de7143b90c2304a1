#!/usr/bin/env bash
# Session 32, run 4: the committed code (b8165d4, rg32ui bit stores). Under validation with
# synchronization validation: test_convolution and the suites whose kernels write images (every
# shader's f16bits variant on the GPU). Networks F B B F F B (F: VKCNN_FLOAT16_BIT_STORES=0, the
# same library); PyTorch in the same run.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r4.tgz r4); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
flag() { case $1 in F) echo 0;; *) echo 1;; esac; }
$D/bin/vkcnn info | grep -E "bit stores"
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_concat test_graph test_image test_layout test_squeeze_excitation test_arithmetic test_pooling test_neuron test_resize_pad test_softmax test_rearrange test_normalization test_convolution_transpose test_tensor test_temporary; do
   timeout 200 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done) &
PYTHONUNBUFFERED=1 timeout 220 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,resnet18,efficientnet_b0,vgg16,mobilenet_v3_large --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -30; snap
run() {  # lib net batch round
  VKCNN_FLOAT16_BIT_STORES=$(flag $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
order="F B B F F B"
for nb in "resnet50 32" "resnet50 1" "resnet18 1" "efficientnet_b0 32" "vgg16 1" "mobilenet_v3_large 32"; do
  set -- $nb; i=0; for l in $order; do i=$((i+1)); run $l $1 $2 $i; done; snap; done
echo "networks $(( $(date +%s) - t0 )) s"
cp $work/models/pytorch.json $R/ 2>/dev/null
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = collections.defaultdict(set)
for f in sorted(glob.glob(o + "/*_*_fp16_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)].add(round(j.get("relative_l2") or 0, 5))
try: r = json.load(open(o + "/pytorch.json"))["networks"]
except Exception: r = {}
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); p = r.get(n, {}).get(f"{fmt}_{b}", {})
    e = p.get("eager", {}).get("median_ms", 0); g = p.get("graph", {}).get("median_ms", 0)
    m = {x: statistics.mean(y) for x, y in v.items()}
    print(k, " ".join(f"{x} {m[x]:.3f}" for x in m), " ".join(f"{x}/F {m[x]/m['F']:.3f}" for x in m if x != "F"), f"eager {e:.3f} graph {g:.3f}", {x: ([round(z, 3) for z in y], sorted(l2[(k, x)])) for x, y in v.items()})
PY
echo "done $(( $(date +%s) - t0 )) s"; snap
