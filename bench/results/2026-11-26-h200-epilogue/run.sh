#!/usr/bin/env bash
# The tiled convolution's epilogue (2026-11-26) on the GPU machine: B = main before, L = the
# epilogue as a loop (run 1's A), A = the loop and a shared-memory-only subgroup barrier (run 2);
# run 3 (refit check): B = 56bd9d9 (the loop, the old cost model), A = the refitted cost model.
# Carried: .device-build (A, scripts/device-pack.sh), .dev-ab/before (libvkcnn.so of main before
# the change, where the shaders live, and its vkcnn-pipeline-stats), .dev-ab/loop/lib (L), .gl. Steps (STEPS, comma-separated): stats (pipeline
# statistics of both), tests (test_convolution's matrix-unit cases under validation, after),
# nets (PyTorch beside vkcnn B/A alternated, fp16 b32 and b1), shapes (per-shape fp16 tables).
set -uo pipefail
root=$(pwd); D=$root/.device-build; B=$root/.dev-ab/before/lib
steps=${STEPS:-stats,tests,nets}
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/device.txt 2>&1
t0=$(date +%s)
lib() { case $1 in B) echo $B:$D/lib;; L) echo $root/.dev-ab/loop/lib:$D/lib;; *) echo $D/lib;; esac; }
builds=${BUILDS:-B A}
if [[ ",$steps," == *,stats,* ]]; then
  for b in B A; do
    stats=$D/bin/vkcnn-pipeline-stats; [ $b = B ] && stats=$root/.dev-ab/before/bin/vkcnn-pipeline-stats
    timeout 60 $stats > /tmp/stats-$b.txt 2>&1
    echo "== $b" ; grep -E 'convolution_(tiled|matrix|gemm)' /tmp/stats-$b.txt | cut -d'|' -f1-3
  done > $OUT/stats.txt
  cp /tmp/stats-A.txt $OUT/pipeline-stats-after.txt
  echo "stats $(( $(date +%s) - t0 )) s"; grep -c tiled $OUT/stats.txt
fi
if [[ ",$steps," == *,tests,* ]]; then
  mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
  (export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
   export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
   timeout 150 $D/bin/test_convolution -tc="${TEST_CASES:-*matrix-unit configuration*,*residual added*,*grouped*}" > $OUT/test_convolution.txt 2>&1
   echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -3 $OUT/test_convolution.txt)
fi
if [[ ",$steps," == *,nets,* ]]; then
  work=/tmp/ab; mkdir -p $work/models
  nets=${NETS:-resnet50,vgg16,resnet18,resnext50_32x4d}
  batches=${BATCHES:-32 1}
  [ -f $work/models/pytorch.json ] || PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models \
    --networks $nets --runs 30 > $work/pytorch.log 2>&1 || tail -5 $work/pytorch.log
  cp $work/models/pytorch.json $OUT/ 2>/dev/null
  echo "pytorch $(( $(date +%s) - t0 )) s"
  run() {  # build net batch tag
    local b=$1 net=$2 batch=$3 tag=$4
    LD_LIBRARY_PATH=$(lib $b) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$b timeout 90 $D/bin/vkcnn bench $work/models/$net.onnx \
      --fp16 --batch $batch --iterations 30 --input $work/models/${net}_b${batch}_input.npy \
      --reference $work/models/${net}_b${batch}_output.npy --json $work/${b}_${net}_b${batch}_$tag.json \
      > $work/${b}_${net}_b${batch}_$tag.txt 2>&1 || echo "FAILED $b $net $batch"
  }
  for batch in $batches; do
    for net in ${nets//,/ }; do
      for b in $builds; do run $b $net $batch 1; done
      for b in $(echo $builds | tr ' ' '\n' | tac); do run $b $net $batch 2; done
    done
    echo "b$batch $(( $(date +%s) - t0 )) s"
  done
  LD_LIBRARY_PATH=$D/lib $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 3 > $work/profile_A_resnet50_b32.txt 2>&1
  LD_LIBRARY_PATH=$B:$D/lib $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 3 > $work/profile_B_resnet50_b32.txt 2>&1
  python3 - $work > $OUT/nets.md <<'PY'
import json, sys, glob, os, collections
w = sys.argv[1]
torch = json.load(open(f"{w}/models/pytorch.json"))
rows = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{w}/[ABL]_*.json")):
    j = json.load(open(f)); b, rest = os.path.basename(f)[:-5].split("_", 1)
    key = rest.rsplit("_", 1)[0]
    rows[key].setdefault(b, []).append(j)
print("| network/batch | B resident ms | L resident ms | A resident ms | A/B (best of each) | rel L2 B | rel L2 A |")
print("|---|---|---|---|---|---|---|")
for k, v in rows.items():
    def ms(b): return [round(x["resident_median_ms"], 3) for x in v.get(b, [])]
    def l2(b): return [x.get("relative_l2") for x in v.get(b, [])][:1]
    mb, ma = ms("B"), ms("A")
    r = f"{sorted(ma)[0] / sorted(mb)[0]:.3f}" if ma and mb else "-"
    print(f"| {k} | {mb} | {ms('L')} | {ma} | {r} | {l2('B')} | {l2('A')} |")
print()
print(json.dumps(torch)[:3000])
PY
  (cd $work && tar czf $OUT/nets.tgz *.json *.txt pytorch.log 2>/dev/null)
  cat $OUT/nets.md | head -20
fi
if [[ ",$steps," == *,shapes,* ]]; then
  for b in A B; do
    notorch=""; [ $b = B ] && notorch=--no-torch
    LD_LIBRARY_PATH=$(lib $b) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$b PYTHONUNBUFFERED=1 timeout ${SHAPES_TIMEOUT:-200} python3 scripts/bench/conv_shapes.py \
      --bench $D/bin/vkcnn-bench-conv --out /tmp/shapes-$b --formats fp16 --batches ${SHAPE_BATCHES:-32} \
      --tiles ${TILES:-auto} $notorch > $OUT/shapes-$b.log 2>&1
    echo "shapes $b rc=$? $(( $(date +%s) - t0 )) s"
    for f in /tmp/shapes-$b/conv_fp16_b*.md; do cp $f $OUT/${b}_$(basename $f); done
  done
fi
echo "all $(( $(date +%s) - t0 )) s"
