#!/usr/bin/env bash
# 2026-11-27: which configuration is fastest for a split batch's pieces side by side? The 16
# costliest split b32 shapes (pieces_shapes_b32.txt), --pieces for each forced configuration.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
LD_LIBRARY_PATH=$D/lib timeout 200 $D/bin/vkcnn-bench-conv conv bench/results/2026-11-27-h200-gemm/pieces_shapes_b32.txt \
  --fp16 --iterations 10 --tiles ${TILES:-auto,32x64,64x64,64x64k64,128x128,64x128w8p2,64x128w8,128x64w8} --pieces > $OUT/pieces.jsonl 2> $OUT/pieces.err
echo "rc=$?"
python3 - $OUT/pieces.jsonl <<'PY'
import json, sys, collections
side = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "pieces" in j: side[j["name"]][j["pieces_tile"]] = j["concurrent_ms"]
for name, v in side.items():
    best = min(v, key=v.get)
    print(f"{name:34s} auto {v['auto']:.4f} best {best} {v[best]:.4f} ({v[best] / v['auto']:.2f}) | " + " ".join(f"{k} {x:.3f}" for k, x in v.items() if k != "auto"))
PY
