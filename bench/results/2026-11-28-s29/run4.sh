#!/usr/bin/env bash
# Session 29, run 4. After the leaner main loop: every dense tile of the cost model and four
# larger candidates (256x128w8k16, 128x128w4k16, 256x64w8k16, 128x128k16; tuning-only) forced on
# resnet50's, vgg16's and resnet18's dense batch-32 shapes; their registers; test_convolution under
# validation with them in the table (its forced-configuration cases run every tile).
# Carried: .device-build (the working tree), .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R; H=bench/results/2026-11-28-s29
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
timeout 60 $D/bin/vkcnn-pipeline-stats --variants f16 > $R/stats.txt 2>&1
grep -E "tiled_f16 (256x128w8k16|128x128w4k16|256x64w8k16|128x128k16|128x128|128x64w4k16)( |$)" $R/stats.txt | cut -d'|' -f1-3
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib timeout 170 $D/bin/test_convolution > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
tiles=auto,128x128,64x64,64x64k64,32x64,128x64w8,64x128w8,128x128p2,64x128w8p2,128x64w4k16,64x64k16,64x128w4k16,256x128w8k16,128x128w4k16,256x64w8k16,128x128k16
timeout 300 $D/bin/vkcnn-bench-conv conv $H/shapes_nets_b32.txt --fp16 --tiles $tiles --iterations 20 --warmup 0.2 \
  2>>$R/err.txt > $R/sweep.jsonl
echo "sweep $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for l in open(sys.argv[1] + "/sweep.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r: t[r["name"]][r["tile"]] = r["ms"] * 1000
for n, v in t.items():
    best = min((x for x in v.items() if x[0] != "auto"), key=lambda x: x[1])
    new = {k: v[k] for k in ("256x128w8k16", "128x128w4k16", "256x64w8k16", "128x128k16") if k in v}
    print(f'{n:22s} auto {v.get("auto", 0):8.1f}  best {best[0]:13s} {best[1]:8.1f}  ' + " ".join(f"{k}={x:.1f}" for k, x in new.items()))
PY
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r4.tgz r4
