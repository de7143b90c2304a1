#!/usr/bin/env bash
# Where the GEMM ceiling's time goes (2026-11-27): bench/gemm_ceiling.comp with parts taken away
# (MODE 0 the GEMM, 1 no global loads, 2 no barriers either, 3 multiply-adds only), on the
# committed tiles and on larger warp tiles. Carried: .device-build (with vkcnn-bench-conv and
# gemm_ceiling.spv in bin/), .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/device.txt 2>&1
export LD_LIBRARY_PATH=$D/lib
g() { timeout 120 $D/bin/vkcnn-bench-conv gemm $D/bin/gemm_ceiling.spv "$@"; }
# Warm the clocks first (METHOD.md).
g 8192 8192 8192 --iterations 40 --gemm-tiles "2x4/4x2/2" > /dev/null 2>&1
{
g 8192 8192 8192 --iterations 25 --modes 0,1,2,3
g 8192 8192 8192 --iterations 25 --modes 0,1,2,3 --gemm-tiles "${TILES:-2x2/4x4/2;4x2/2x4/2;2x4/4x2/1;4x2/4x4/1;2x4/4x4/1;4x4/2x2/2;2x2/2x2/2;2x2/4x2/2;2x4/2x2/2;2x2/2x2/4}"
g 4096 4096 4096 --iterations 25 --modes 0,3
} > $OUT/gemm.jsonl 2> $OUT/gemm.err
python3 - $OUT/gemm.jsonl > $OUT/gemm.md <<'PY'
import json, sys, collections
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "gemm" not in j: print(line.strip()); continue
    key = (j["M"], j["gemm"], j["warps"], j["fragments"], j["k"])
    rows.setdefault(key, {})[j["mode"]] = (j["tflops"], j["rel_l2"])
print("| size | tile | warps | fragments/warp | k | 0 GEMM | 1 no loads | 2 no barriers | 3 MMA only | rel L2 |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (m, name, w, f, k), v in rows.items():
    c = [f"{v[i][0]:.1f}" if i in v else "" for i in range(4)]
    print(f"| {m}³ | {name} | {w} | {f} | {k} | " + " | ".join(c) + f" | {v.get(0, (0, ''))[1]} |")
PY
cat $OUT/gemm.md; tail -5 $OUT/gemm.err
