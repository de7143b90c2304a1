#!/usr/bin/env bash
# Session 28, run 3. What the short reductions' time is made of: resnet50's 1x1 layers of layer1
# and layer2 and two 3x3 layers (shapes_1x1.txt) on the committed library (N) and three builds of
# convolution_tiled.glsl with parts taken away (timings only, wrong results): V1 no image stores
# in the epilogue, V2 no reduction (no chunk fetched or multiplied), V3 neither.
# Carried: .device-build, .gl, .dev-ab/V1, .dev-ab/V2, .dev-ab/V3.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R; H=bench/results/2026-11-28-s28
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
for lib in N V1 V2 V3 N; do L=$D/lib; [ $lib != N ] && L=$root/.dev-ab/$lib/lib:$D/lib
  LD_LIBRARY_PATH=$L timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_1x1.txt --fp16 --tiles auto,128x128,64x64k16,128x64w4k16 \
    --iterations 20 --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$lib\",/" >> $R/shapes.jsonl; done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict)
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r: t[(r["name"], r["tile"])].setdefault(r["lib"], []).append(r["ms"] * 1000)
print(f'{"shape":14s} {"tile":12s} ' + " ".join(f"{k:>8s}" for k in ["N", "V1", "V2", "V3"]))
for (n, tile), v in t.items():
    print(f'{n:14s} {tile:12s} ' + " ".join(f'{min(v.get(k, [0])):8.1f}' for k in ["N", "V1", "V2", "V3"]))
PY
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r3.tgz r3
