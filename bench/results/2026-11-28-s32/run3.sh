#!/usr/bin/env bash
# Session 32, run 3: bit stores through rg32ui (B2, the working tree: two float16 values a 32-bit
# word, as packHalf2x16 makes them) against rgba16ui (B, runs 1-2, .dev-ab/B) and float stores
# (F = B2's library with VKCNN_FLOAT16_BIT_STORES=0). Pipeline statistics of both bit variants
# (registers: vgg16's 3x3 layers on 256x128w8k16 were 3% slower with B); the rounding case under
# validation (B2); shapes and networks F B B2 B2 B F.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s); H=bench/results/2026-11-28-s32
R=/tmp/r3; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r3.tgz r3); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in B) echo $root/.dev-ab/B/lib:$D/lib;; *) echo $D/lib;; esac; }
flag() { case $1 in F) echo 0;; *) echo 1;; esac; }
LD_LIBRARY_PATH=$D/lib $D/bin/vkcnn info | grep -E "bit stores|matrix units" 
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc='*float16 stores round*' > $R/test_rounding.txt 2>&1
 echo "rounding rc=$?: $(tail -3 $R/test_rounding.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_concat > $R/test_concat.txt 2>&1
 echo "concat rc=$?: $(tail -3 $R/test_concat.txt | head -2 | tr '\n' ' ')") &
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16,resnet50,resnext50_32x4d --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -30
for l in B B2; do
  b=$D/bin/vkcnn-pipeline-stats; [ $l = B ] && b=$root/.dev-ab/B/bin/vkcnn-pipeline-stats
  LD_LIBRARY_PATH=$(lib $l) timeout 120 $b --variants f16,f16bits > $R/stats_$l.txt 2>&1; echo "stats $l rc=$?"
done
head -3 $R/stats_B2.txt | cut -c1-300; grep -E "convolution_tiled_f16(bits)? .*256x128" $R/stats_B.txt $R/stats_B2.txt | cut -c1-300 | head -16
echo "stats $(( $(date +%s) - t0 )) s"; snap
order="F B B2 B2 B F"
for l in $order; do
  for s in shapes_epilogue_b32 shapes_vgg_b32; do
    LD_LIBRARY_PATH=$(lib $l) VKCNN_FLOAT16_BIT_STORES=$(flag $l) timeout 60 $D/bin/vkcnn-bench-conv conv $H/$s.txt --fp16 --tiles auto --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$l\",/" >> $R/shapes.jsonl
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
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_FLOAT16_BIT_STORES=$(flag $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in vgg16 resnet50 resnext50_32x4d; do i=0; for l in $order; do i=$((i+1)); run $l $net 32 $i; done; snap; done
i=0; for l in $order; do i=$((i+1)); run $l resnet50 1 $i; done; snap
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list)); l2 = collections.defaultdict(set)
for f in sorted(glob.glob(o + "/*_*_fp16_*.json")):
    j = json.load(open(f)); name = f.split("/")[-1]; lib, rest = name.split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"]); l2[(key, lib)].add(round(j.get("relative_l2") or 0, 5))
for k, v in t.items():
    m = {x: statistics.mean(y) for x, y in v.items()}
    print(k, " ".join(f"{x} {m[x]:.3f}" for x in m), " ".join(f"{x}/F {m[x]/m['F']:.3f}" for x in m if x != "F"), {x: ([round(z, 3) for z in y], sorted(l2[(k, x)])) for x, y in v.items()})
PY
echo "done $(( $(date +%s) - t0 )) s"; snap
