#!/usr/bin/env bash
# Session 28, run 5. What the tiled convolution's epilogue spends its time on: the short-reduction
# shapes (shapes_1x1.txt) on A (1b7ee79), N (the working tree: TILES_PER_WORKGROUP, the one-tile
# path as before) and four builds of N taking parts away (timings only): E1 no rounding to float16
# before the image store (roundToFloat16), E2 the epilogue's bias + ReLU written out (no neuron
# switch, slopes or residual test), E3 both, E4 E3 with the epilogue's fragment loop unrolled.
# Carried: .device-build, .gl, .dev-ab/{A,E1,E2,E3,E4}.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R; H=bench/results/2026-11-28-s28
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
for lib in A N E1 E2 E3 E4 N A; do L=$D/lib; [ $lib != N ] && L=$root/.dev-ab/$lib/lib:$D/lib
  LD_LIBRARY_PATH=$L timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_1x1.txt --fp16 --tiles auto,128x128,64x64k16,128x64w4k16 \
    --iterations 20 --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$lib\",/" >> $R/shapes.jsonl; done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict); libs = ["A", "N", "E1", "E2", "E3", "E4"]
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r: t[(r["name"], r["tile"])].setdefault(r["lib"], []).append(r["ms"] * 1000)
print(f'{"shape":14s} {"tile":12s} ' + " ".join(f"{k:>8s}" for k in libs))
for (n, tile), v in t.items():
    print(f'{n:14s} {tile:12s} ' + " ".join(f'{min(v.get(k, [0])):8.1f}' for k in libs))
PY
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r5.tgz r5
