#!/usr/bin/env bash
# Run 5 (2026-11-27, session 17): G, the im2col fetch remapped (variants/G.diff): a warp's lanes
# run along 32 output rows of one texel slot (one layer) instead of 4 rows x 8 slots (8 layers
# per fetch instruction). Against F (.device-build, main as committed). test_convolution's forced
# configurations with G under validation; shapes at b32 and b1, F G G F; resnet50 and vgg16
# F G G F at b1 and b32. Carried: .device-build (F), .gl, .dev-ab (G).
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
here=bench/results/2026-11-27-h200-prefetch
R=/tmp/run5; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in F) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib G) timeout 100 $D/bin/test_convolution \
   -tc="*matrix-unit configuration*,*side by side*" > $R/test_convolution_G.txt 2>&1
 echo "test_convolution G rc=$? $(( $(date +%s) - t0 )) s: $(tail -2 $R/test_convolution_G.txt | head -1)")
bc() {  # lib tag shapes args...
  local l=$(lib $1); local tag=$2; local shapes=$3; shift 3
  LD_LIBRARY_PATH=$l VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-bc timeout 150 $D/bin/vkcnn-bench-conv conv \
    $here/$shapes --fp16 --iterations 20 "$@" > $R/$tag.jsonl 2> $R/$tag.err
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
}
for r in 1 2; do for v in F G; do
  bc $v $v-b32-$r shapes_b32.txt --tiles auto,128x128,64x64 --residual
  bc $v $v-b1-$r shapes_b1.txt --tiles auto,64x64,32x64,64x128w8p2 --residual
done; done
python3 - $R <<'PY'
import json, sys, collections
o = sys.argv[1]
for b in ["b32", "b1"]:
    t = collections.defaultdict(dict); tags = [f"{v}-{b}-{r}" for r in (1, 2) for v in "FG"]
    for tag in tags:
        for line in open(f"{o}/{tag}.jsonl"):
            j = json.loads(line)
            if "ms" in j: t[(j["name"], j["tile"])][tag] = j["ms"]
    print(f"\n| {b} (residual) | tile | " + " | ".join(tags) + " | G/F |")
    print("|---" * (len(tags) + 3) + "|")
    for (n, tile), v in t.items():
        f = min(v[f"F-{b}-1"], v[f"F-{b}-2"]); g = min(v[f"G-{b}-1"], v[f"G-{b}-2"])
        print(f"| {n} | {tile} | " + " | ".join(f"{v.get(k, 0):.4f}" for k in tags) + f" | {g / f:.3f} |")
PY
work=/tmp/ab; mkdir -p $work/models
nets=${NETS:-resnet50,vgg16}
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 5 --warmup 2 > $work/pytorch.log 2>&1 || tail -5 $work/pytorch.log
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 90 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $work/${1}_${2}_b$3_$4.json > $work/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do for b in 1 32; do run F $net $b 1; run G $net $b 1; run G $net $b 2; run F $net $b 2; done; done
echo "nets $(( $(date +%s) - t0 )) s"
python3 - $work <<'PY'
import json, glob, os, sys, collections
w = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{w}/*_*_b*_[12].json")):
    b, rest = os.path.basename(f)[:-5].split("_", 1)
    j = json.load(open(f)); rows[rest.rsplit("_", 1)[0]][b].append((j["resident_median_ms"], j["gpu_median_ms"], j.get("relative_l2")))
print("| network fp16 | F resident / GPU ms | G resident / GPU ms | G/F resident (best) | G/F GPU (best) | rel L2 F / G |")
print("|---|---|---|---|---|---|")
for k, v in rows.items():
    cell = lambda b: " ".join(f"{x[0]:.4f}/{x[1]:.4f}" for x in sorted(v[b]))
    ra = min(x[0] for x in v["F"]); rf = min(x[0] for x in v["G"]); ga = min(x[1] for x in v["F"]); gf = min(x[1] for x in v["G"])
    print(f"| {k} | {cell('F')} | {cell('G')} | {rf / ra:.3f} | {gf / ga:.3f} | {v['F'][0][2]} / {v['G'][0][2]} |")
PY
(cd $work && cp *.json *.txt pytorch.log $R/ 2>/dev/null)
tar czf $OUT/run5.tgz -C /tmp run5
