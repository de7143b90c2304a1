#!/usr/bin/env bash
# Session 28, run 2. Is the image path's store rate what bounds the layers with short reductions?
# Micro models (micro.py: Relu, Add, MaxPool, 1x1 convolutions, batch 32) through `vkcnn profile`
# in float16 and float32, and the 1x1 shapes through vkcnn-bench-conv with forced tiles.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R; H=bench/results/2026-11-28-s28
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
M=/tmp/micro; python3 $H/micro.py $M > $R/micro.log 2>&1 || tail -5 $R/micro.log
echo "models $(( $(date +%s) - t0 )) s"
for m in relu64 relu256 relu64_224 addrelu64 pool64_224 conv64x256 conv64x256res conv256x64; do
  for p in fp16 fp32; do
    timeout 60 $D/bin/vkcnn profile $M/$m.onnx --$p --iterations 20 > $R/${m}_$p.txt 2>&1
    echo "== $m $p"; grep -v "loading\|^#\|values on\|->" $R/${m}_$p.txt | cut -c1-120
  done
done
timeout 120 $D/bin/vkcnn-bench-conv conv $H/shapes_1x1.txt --fp16 --tiles auto,128x128,64x64,64x64k16,128x64w4k16,64x128w4k16,128x64w8 \
  --iterations 20 --warmup 0.2 > $R/shapes.jsonl 2> $R/err.txt
python3 - $R <<'PY'
import json, sys
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r: print(f'{r["name"]:14s} {r["tile"]:12s} {r["ms"]*1000:8.1f} us {r["config"][-30:]}')
PY
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r2.tgz r2
