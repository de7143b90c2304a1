#!/usr/bin/env bash
# Session 24, run 6. Two tall tiles for 64-column layers (256x64: 8 x 1 warps of 2 x 4 fragments,
# 16 deep; 128x64w4: 4 x 1 warps of 2 x 4, 32 deep), forced: "every matrix-unit configuration,
# forced" under validation (it runs every tile of the table), then the 64-channel shapes of vgg16
# and resnet50 at batch 32 (and two at batch 1) against 64x64, 128x64w8 and the selector. Carried:
# .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R; H=bench/results/2026-11-27-h200-s24
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc='*every matrix-unit configuration*' > $R/test_tiles.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_tiles.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
export LD_LIBRARY_PATH=$D/lib
for o in 1 2; do
  timeout 120 $D/bin/vkcnn-bench-conv conv $H/shapes_64.txt --fp16 --tiles auto,64x64,128x64w8,256x64,128x64w4 --iterations 20 --warmup 0.3 >> $R/shapes.jsonl 2>>$R/shapes.err
  echo "shapes $o $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(list)
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    t[(r["name"], r["tile"])].append(r["ms"])
for (n, tile), v in t.items(): print(f"{n:12s} {tile:9s} " + " ".join(f"{x:.4f}" for x in v))
PY
cd /tmp && tar czf $OUT/r6.tgz r6; ls -la $OUT
