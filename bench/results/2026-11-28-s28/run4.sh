#!/usr/bin/env bash
# Session 28, run 4. Several row tiles a workgroup (TILES_PER_WORKGROUP, the next tile's first
# chunk fetched before the epilogue): the forced-configuration, grouped, pieces and residual cases
# of test_convolution under validation with the new tiles, their registers, and the short-reduction
# shapes (shapes_1x1.txt) with every new tile beside the committed ones. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R; H=bench/results/2026-11-28-s28
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
timeout 120 $D/bin/vkcnn-pipeline-stats > $R/stats.txt 2>&1; grep -i "tiled " $R/stats.txt | grep -i "t4\|t16\|128x128 \|64x64k16 \|64x64k64 " | head -30
T=auto,128x128,64x64k16,64x64k64,128x64w4k16,64x64k16t4,64x64k16t16,64x64k64t4,64x64k64t16,128x128t4,128x64w4k16t4,128x64w4k16t16
timeout 200 $D/bin/vkcnn-bench-conv conv $H/shapes_1x1.txt --fp16 --tiles $T --iterations 20 --warmup 0.2 > $R/shapes.jsonl 2> $R/err.txt
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict); tiles = []
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r:
        t[r["name"]][r["tile"]] = r["ms"] * 1000
        if r["tile"] not in tiles: tiles.append(r["tile"])
print("shape        " + " ".join(f"{x[:13]:>13s}" for x in tiles))
for n, v in t.items(): print(f"{n:12s} " + " ".join(f"{v.get(x, 0):13.1f}" for x in tiles))
PY
echo "shapes $(( $(date +%s) - t0 )) s"
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 280 $D/bin/test_convolution -tc="*every matrix-unit configuration*,*grouped convolutions on the matrix*,*pieces in one*,*residual added before*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_convolution.txt | head -40
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r4.tgz r4
