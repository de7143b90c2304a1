#!/usr/bin/env bash
# Session 26, run 3. Convolution tiles with 16-deep stages (convolution_tiles.h, tuning-only
# entries: 64x64k16, 128x128k16, 128x128w4k16, 64x128w4k16, 128x64w4k16, 128x64w8k16), after the
# GEMM ceiling's run 2 (2x2 warps of 4x4 at k16: 168.7 TFLOP/s against the committed tile's 150.3;
# 64x64 at k16 98.8 against 92.0). Every forced configuration under validation; every float16
# shape of vgg16, resnet50, resnet18 at batch 32 and 1 on the committed tiles and the new ones;
# registers. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution -tc='*every matrix-unit configuration*' > $R/test_forced.txt 2>&1
 echo "test rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_forced.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_forced.txt | head -40
export LD_LIBRARY_PATH=$D/lib
timeout 100 $D/bin/vkcnn-pipeline-stats --variants f16 > $R/stats.txt 2>&1; grep -i 'convolution_tiled ' $R/stats.txt | head -40
tiles=auto,64x64,64x64k16,128x128,128x128k16,128x128w4k16,64x128w8,64x128w4k16,128x64w8,128x64w8k16,128x64w4k16
PYTHONUNBUFFERED=1 timeout 330 python3 scripts/bench/conv_shapes.py --networks vgg16,resnet50,resnet18 \
  --bench $D/bin/vkcnn-bench-conv --out /tmp/r3s --formats fp16 --batches 32 --tiles $tiles --warmup 0.1 --iterations 10 > $R/shapes_b32.log 2>&1
echo "b32 rc=$? $(( $(date +%s) - t0 )) s"; tail -3 $R/shapes_b32.log; cp /tmp/r3s/conv_shapes.json $R/b32.json; cp /tmp/r3s/*.md $R/ 2>/dev/null
python3 - $R/b32.json <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["runs"]["fp16_b32"]
pairs = [("64x64", "64x64k16"), ("128x128", "128x128k16"), ("128x128", "128x128w4k16"),
         ("64x128w8", "64x128w4k16"), ("128x64w8", "128x64w8k16"), ("128x64w8", "128x64w4k16")]
tot = {}
for r in sorted(rows, key=lambda r: -r["vk_auto"] * r["count"]):
    cols = {k[3:]: v for k, v in r.items() if k.startswith("vk_") and isinstance(v, (int, float)) and k != "vk_best"}
    best = min(cols, key=cols.get)
    tot.setdefault("auto", 0); tot["auto"] += cols["auto"] * r["count"]
    old = min(v for k, v in cols.items() if "k16" not in k)
    tot.setdefault("best_old", 0); tot["best_old"] += old * r["count"]
    tot.setdefault("best_all", 0); tot["best_all"] += cols[best] * r["count"]
    print(f'{r["desc"]:26s} x{r["count"]:<2d} auto {cols["auto"]*1000:7.1f} best {best:14s} {cols[best]*1000:7.1f}  ' +
          "  ".join(f'{b}/{a} {cols[b]/cols[a]:.2f}' for a, b in pairs if a in cols and b in cols))
print({k: round(v, 3) for k, v in tot.items()})
PY
cd /tmp && tar czf $OUT/r3.tgz r3
