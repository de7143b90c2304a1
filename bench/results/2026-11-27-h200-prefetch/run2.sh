#!/usr/bin/env bash
# Run 2 (2026-11-27, session 17). P (.device-build): the residual read ahead only where the encode
# has one (specialization constant RESIDUAL), and global pooling's shared memory sized by its
# workgroup. Libraries in .dev-ab: A (main), V (the residual change alone), and three diagnostic
# builds of V's convolution_tiled.comp, never committed: D1 no epilogue (the accumulators summed
# into one value, written only if impossible), D2 the raw sums stored (no bias, neuron, rounding),
# D3 no source texel fetches (the window read as ones; weights still loaded). Tests under
# validation with P; the shapes of run 1 with each library; networks A P P A and profiles.
# Carried: .device-build (+ vkcnn-bench-conv in bin/), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
here=bench/results/2026-11-27-h200-prefetch
R=/tmp/run2; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_pooling test_graph test_squeeze_excitation; do
   timeout 120 $D/bin/$t > $R/$t.txt 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -2 $R/$t.txt | head -1)"
 done)
lib() { case $1 in P) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
bc() {  # lib tag args...
  local l=$(lib $1); local tag=$2; shift 2
  LD_LIBRARY_PATH=$l VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-bc timeout 150 $D/bin/vkcnn-bench-conv conv \
    $here/shapes_b32.txt --fp16 --iterations 20 --tiles auto,128x128,64x64 "$@" > $R/$tag.jsonl 2> $R/$tag.err
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
}
bc A A-plain; bc V V-plain; bc D1 D1-plain; bc D2 D2-plain; bc D3 D3-plain
bc A A-res --residual; bc V V-res --residual; bc A A-plain2
python3 - $R <<'PY'
import json, sys, collections
o = sys.argv[1]; t = collections.defaultdict(dict)
tags = ["A-plain", "A-plain2", "V-plain", "D1-plain", "D2-plain", "D3-plain", "A-res", "V-res"]
for tag in tags:
    for line in open(f"{o}/{tag}.jsonl"):
        j = json.loads(line)
        if "ms" in j: t[(j["name"], j["tile"])][tag] = j["ms"]
print("| shape | tile | " + " | ".join(tags) + " |")
print("|---" * (len(tags) + 2) + "|")
for (n, tile), v in t.items():
    print(f"| {n} | {tile} | " + " | ".join(f"{v.get(k, 0):.4f}" for k in tags) + " |")
PY
work=/tmp/ab; mkdir -p $work/models
nets=${NETS:-resnet50,resnext50_32x4d,densenet121}
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $work/pytorch.log 2>&1 || tail -5 $work/pytorch.log
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 90 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 30 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $work/${1}_${2}_b$3_$4.json > $work/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do for b in 32 1; do run A $net $b 1; run P $net $b 1; run P $net $b 2; run A $net $b 2; done; done
echo "nets $(( $(date +%s) - t0 )) s"
for v in A P; do LD_LIBRARY_PATH=$(lib $v) $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 5 > $R/profile_${v}_resnet50_b32.txt 2>&1; done
python3 - $work <<'PY'
import json, glob, os, sys, collections
w = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{w}/[AP]_*.json")):
    b, rest = os.path.basename(f)[:-5].split("_", 1)
    j = json.load(open(f)); rows[rest.rsplit("_", 1)[0]][b].append((j["resident_median_ms"], j.get("relative_l2")))
print("| network fp16 | A ms | P ms | P/A (best of each) | rel L2 A / P |")
print("|---|---|---|---|---|")
for k, v in rows.items():
    a = sorted(x[0] for x in v["A"]); b = sorted(x[0] for x in v["P"])
    print(f"| {k} | {a} | {b} | {b[0] / a[0]:.3f} | {v['A'][0][1]} / {v['P'][0][1]} |")
PY
(cd $work && cp *.json *.txt pytorch.log $R/ 2>/dev/null)
tar czf $OUT/run2.tgz -C /tmp run2
