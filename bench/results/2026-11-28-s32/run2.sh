#!/usr/bin/env bash
# Session 32, run 2: why vgg16 got slower with bit stores (run 1: +0.9% at batch 32). One library
# (the working tree with two experiment hooks, not committed): F = VKCNN_FLOAT16_BIT_STORES=0,
# B = bit stores, BL = B with a VkImageFormatListCreateInfo {rgba16f, rgba16ui} on the mutable
# images (VKCNN_DEV_FORMAT_LIST), FM = float stores into mutable-format images (VKCNN_DEV_MUTABLE).
# Shapes (epilogue and vgg16's 3x3 at batch 32) and networks F B BL FM FM BL B F.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s); H=bench/results/2026-11-28-s32
R=/tmp/r2; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r2.tgz r2); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
with() {  # condition command...
  local c=$1; shift
  case $c in
    F) VKCNN_FLOAT16_BIT_STORES=0 "$@";;
    B) "$@";;
    BL) VKCNN_DEV_FORMAT_LIST=1 "$@";;
    FM) VKCNN_FLOAT16_BIT_STORES=0 VKCNN_DEV_MUTABLE=1 "$@";;
  esac
}
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16,resnet50,resnext50_32x4d --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
order="F B BL FM FM BL B F"
for l in $order; do
  for s in shapes_epilogue_b32 shapes_vgg_b32; do
    with $l timeout 60 $D/bin/vkcnn-bench-conv conv $H/$s.txt --fp16 --tiles auto --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$l\",/" >> $R/shapes.jsonl
  done
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1] + "/shapes.jsonl"):
    r = json.loads(l); t[r["name"]][r["lib"]].append(r["ms"] * 1000)
for k, v in t.items(): print(k, " ".join(f"{x} {min(y):.1f}" for x, y in v.items()), " ".join(f"{x}/F {min(y)/min(v['F']):.3f}" for x, y in v.items() if x != "F"))
PY
echo "shapes $(( $(date +%s) - t0 )) s"; snap
run() {  # condition net batch round
  with $1 timeout 40 env VKCNN_PIPELINE_CACHE_DIR=/tmp/cache $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in vgg16 resnet50 resnext50_32x4d; do i=0; for l in $order; do i=$((i+1)); run $l $net 32 $i; done; snap; done
for net in vgg16 resnet50; do i=0; for l in $order; do i=$((i+1)); run $l $net 1 $i; done; snap; done
echo "networks $(( $(date +%s) - t0 )) s"
cp $work/models/pytorch.json $R/ 2>/dev/null
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(o + "/*_*_fp16_*.json")):
    j = json.load(open(f)); name = f.split("/")[-1]; lib, rest = name.split("_", 1)
    t[rest.rsplit("_", 1)[0]][lib].append(j["resident_median_ms"])
for k, v in t.items():
    m = {x: statistics.mean(y) for x, y in v.items()}
    print(k, " ".join(f"{x} {m[x]:.3f}" for x in m), " ".join(f"{x}/F {m[x]/m['F']:.3f}" for x in m if x != "F"), {x: [round(z, 3) for z in y] for x, y in v.items()})
PY
echo "done $(( $(date +%s) - t0 )) s"; snap
