#!/usr/bin/env bash
# Final call of 2026-11-27: the 128x128w4 tile (4 warps of 64x64, tuning only) on the GPU:
# test_convolution's forced configurations under validation, its registers, every b32 shape
# against 128x128 and cuDNN; then scripts/bench-gpu.sh on NETS (fp16 b1 and b32, fp32 b32).
# Carried: .device-build (scripts/device-pack.sh + vkcnn-bench-conv, vkcnn-pipeline-stats), .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc="*matrix-unit configuration*" > $OUT/test_convolution.txt 2>&1
 echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/test_convolution.txt)
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn-pipeline-stats --variants f16 2>&1 | grep tiled | cut -d'|' -f1-3 > $OUT/stats.txt
grep -E "128x128" $OUT/stats.txt
LD_LIBRARY_PATH=$D/lib PYTHONUNBUFFERED=1 timeout ${SHAPES_TIMEOUT:-200} python3 scripts/bench/conv_shapes.py \
  --bench $D/bin/vkcnn-bench-conv --out /tmp/shapes --formats fp16 --batches 32 \
  --tiles ${TILES:-auto,128x128,128x128w4,64x128w8p2,64x64} > $OUT/shapes.log 2>&1
echo "shapes rc=$? $(( $(date +%s) - t0 )) s"
cp /tmp/shapes/conv_fp16_b32.md /tmp/shapes/conv_shapes.json $OUT/ 2>/dev/null
python3 - /tmp/shapes/conv_shapes.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["runs"]["fp16_b32"]
rows.sort(key=lambda r: -(r.get("vk_auto") or 0) * r["count"])
w = {"a": 0, "b": 0}
for r in rows:
    a, b = r.get("vk_128x128"), r.get("vk_128x128w4")
    if a and b: w["a" if a <= b else "b"] += 1
print("shapes where 128x128 / 128x128w4 is faster:", w)
for r in rows[:14]:
    print(r["desc"], "x", r["count"], {k: r.get("vk_" + k) for k in ["auto", "128x128", "128x128w4", "64x128w8p2", "64x64"]}, "torch", r.get("torch"))
PY
if [ -n "${NETS:-}" ]; then
  VKCNN_BENCH_ITERATIONS=30 VKCNN_BENCH_CONFIGS="${CONFIGS:-fp16:1 fp16:32 fp32:32}" timeout ${NETS_TIMEOUT:-300} \
    bash scripts/bench-gpu.sh $OUT/nets $NETS > $OUT/nets.log 2>&1
  echo "nets rc=$? $(( $(date +%s) - t0 )) s"
  cat $OUT/nets/results.md 2>/dev/null | head -40
fi
