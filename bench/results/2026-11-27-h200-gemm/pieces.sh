#!/usr/bin/env bash
# 2026-11-27: do the pieces of a batch the layer limit splits run side by side? The costliest
# batch-32 shapes that need pieces (pieces_shapes_b32.txt), each timed per dispatch (timestamps,
# as conv_shapes.py) and with --pieces: wall time of its pieces one after another against side
# by side, as a Graph runs them. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
LD_LIBRARY_PATH=$D/lib timeout 240 $D/bin/vkcnn-bench-conv conv bench/results/2026-11-27-h200-gemm/pieces_shapes_b32.txt \
  --fp16 --iterations 10 --tiles auto,auto --pieces > $OUT/pieces.jsonl 2> $OUT/pieces.err
echo "rc=$?"
python3 - $OUT/pieces.jsonl <<'PY'
import json, sys
t = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "tile" in j: t[j["name"]] = j["ms"]
    elif "pieces" in j:
        print(f'{j["name"]:40s} pieces {j["pieces"]} timestamps {t.get(j["name"], 0):.4f} serial {j["serial_ms"]:.4f} side by side {j["concurrent_ms"]:.4f} ratio {j["concurrent_ms"] / j["serial_ms"]:.2f}')
    else: print(line.strip())
PY
