#!/usr/bin/env bash
# 2026-11-27: two tiles for batch 1's latency-bound layers, 32x64k64 (64-deep chunks: half the
# chunks) and 32x64p2 (two chunks in flight), forced on every shape at b1 and b32 beside the
# configurations the selector picks there; test_convolution's forced configurations under
# validation first. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*matrix-unit configuration*" > $OUT/test_convolution.txt 2>&1
 echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/test_convolution.txt)
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn-pipeline-stats --variants f16 2>&1 | grep 'tiled_f16 32x64' | cut -d'|' -f1-3
LD_LIBRARY_PATH=$D/lib PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/conv_shapes.py \
  --bench $D/bin/vkcnn-bench-conv --out /tmp/shapes --formats fp16 --batches 1,32 --no-torch \
  --tiles auto,32x64,32x64k64,32x64p2,64x64,64x64k64,64x128w8p2,128x128,matrix_small,matrix_medium > $OUT/shapes.log 2>&1
echo "shapes rc=$? $(( $(date +%s) - t0 )) s"
cp /tmp/shapes/conv_shapes.json /tmp/shapes/*.md $OUT/ 2>/dev/null
python3 - /tmp/shapes/conv_shapes.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for run, rows in d["runs"].items():
    tot = {}
    for r in rows:
        for k, v in r.items():
            if k.startswith("vk_") and v: tot[k] = tot.get(k, 0) + v * r["count"]
    best = sum(min(v for k, v in r.items() if k.startswith("vk_") and v) * r["count"] for r in rows)
    best_wo = sum(min(v for k, v in r.items() if k.startswith("vk_") and v and k not in ("vk_32x64k64", "vk_32x64p2")) * r["count"] for r in rows)
    print(run, "sum x uses ms:", {k: round(v, 2) for k, v in sorted(tot.items())}, "oracle", round(best, 3), "oracle without the new tiles", round(best_wo, 3))
PY
