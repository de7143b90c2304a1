#!/usr/bin/env bash
# Run 1 (2026-11-27, session 17): the tiled convolution's epilogue with the residual texels and
# the bias read before its loop (B, .device-build) against main (A, .dev-ab/A/lib). First the
# forced matrix-unit configurations under validation with B; then resnet50's costly b32 shapes
# with and without a residual, A and B, each configuration warmed 0.1 s right before its round
# (and A once with --warmup 0, close to the tool's old 30 ms warm-up); then networks A B B A.
# Carried: .device-build (+ vkcnn-bench-conv in bin/), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; A=$root/.dev-ab/A/lib; t0=$(date +%s)
here=bench/results/2026-11-27-h200-prefetch
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/clocks.csv 2>&1 &
smi=$!
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 120 $D/bin/test_convolution > $OUT/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/test_convolution.txt)
bc() {  # lib tag args...
  local lib=$D/lib; [ $1 = A ] && lib=$A:$D/lib; local tag=$2; shift 2
  LD_LIBRARY_PATH=$lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache timeout 150 $D/bin/vkcnn-bench-conv conv \
    $here/shapes_b32.txt --fp16 --iterations 20 --tiles auto,128x128,64x64 "$@" > $OUT/$tag.jsonl 2> $OUT/$tag.err
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
}
bc A A-old --warmup 0
bc A A-res --residual
bc B B-res --residual
bc A A-plain
bc B B-plain
kill $smi
python3 - $OUT <<'PY'
import json, sys, collections
o = sys.argv[1]; t = collections.defaultdict(dict)
for tag in ["A-old", "A-plain", "B-plain", "A-res", "B-res"]:
    for line in open(f"{o}/{tag}.jsonl"):
        j = json.loads(line)
        if "ms" in j: t[(j["name"], j["tile"])][tag] = j["ms"]
print("| shape | tile | A old warm-up | A | B | A residual | B residual |")
print("|---|---|---|---|---|---|---|")
for (n, tile), v in t.items():
    print(f"| {n} | {tile} | " + " | ".join(f"{v.get(k, 0):.4f}" for k in ["A-old", "A-plain", "B-plain", "A-res", "B-res"]) + " |")
PY
work=/tmp/ab; mkdir -p $work/models
nets=${NETS:-resnet50,resnext50_32x4d,vgg16}
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 30 > $work/pytorch.log 2>&1 || tail -5 $work/pytorch.log
cp $work/models/pytorch.json $OUT/ 2>/dev/null
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  local lib=$D/lib; [ $1 = A ] && lib=$A:$D/lib
  LD_LIBRARY_PATH=$lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 90 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 30 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $work/${1}_${2}_b$3_$4.json > $work/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do for b in 32 1; do run A $net $b 1; run B $net $b 1; run B $net $b 2; run A $net $b 2; done; done
echo "nets $(( $(date +%s) - t0 )) s"
LD_LIBRARY_PATH=$D/lib $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 5 > $OUT/profile_B_resnet50_b32.txt 2>&1
LD_LIBRARY_PATH=$A:$D/lib $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 5 > $OUT/profile_A_resnet50_b32.txt 2>&1
python3 - $work <<'PY'
import json, glob, os, sys, collections
w = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{w}/[AB]_*.json")):
    b, rest = os.path.basename(f)[:-5].split("_", 1)
    j = json.load(open(f)); rows[rest.rsplit("_", 1)[0]][b].append((j["resident_median_ms"], j.get("relative_l2")))
print("| network fp16 | A ms | B ms | B/A (best of each) | rel L2 A / B |")
print("|---|---|---|---|---|")
for k, v in rows.items():
    a = sorted(x[0] for x in v["A"]); b = sorted(x[0] for x in v["B"])
    print(f"| {k} | {a} | {b} | {b[0] / a[0]:.3f} | {v['A'][0][1]} / {v['B'][0][1]} |")
PY
(cd $work && tar czf $OUT/nets.tgz *.json *.txt pytorch.log 2>/dev/null)
