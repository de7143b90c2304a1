#!/usr/bin/env bash
# Session 19, run 7: the split reduction's width at batch 1. The rule splits 32x64 tiles at most 8
# ways; resnet50's and resnet18's layer4 3x3 512->512 @7² (16 tiles, 144 chunks) take 29 us there.
# Every resnet18 / resnet50 b1 shape with 32x64 split 4, 8, 12 and 16 ways and 64x64 split 8 ways
# forced, the tip's library. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-shapes PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/conv_shapes.py \
  --bench $D/bin/vkcnn-bench-conv --out /tmp/r7shapes --formats fp16 --batches 1 --networks resnet18,resnet50 \
  --tiles auto,32x64s4,32x64s8,32x64s12,32x64s16,64x64s8 --warmup 0.02 --no-torch > $R/shapes.log 2>&1
echo "shapes rc=$? $(( $(date +%s) - t0 )) s"; cp /tmp/r7shapes/* $R/ 2>/dev/null
python3 - $R <<'PY'
import json, sys
j = json.load(open(sys.argv[1] + "/conv_shapes.json"))
for e in j["runs"]["fp16_b1"]:
    cols = {k[3:]: v for k, v in e.items() if k.startswith("vk_") and v and k not in ("vk_best",)}
    print(f"{e['desc']:26s} {e['nets']:24s} {e['cfg_auto'].split('(')[-1].rstrip(')'):12s} " +
          " ".join(f"{k}={v*1000:.1f}" for k, v in cols.items()))
PY
cd /tmp && tar czf $OUT/r7.tgz r7; ls -la $OUT
