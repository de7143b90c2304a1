#!/usr/bin/env bash
# Run 5 (2026-11-27): B in shared memory as [N][K] (the matrix units' B operand layout, fragments
# loaded column-major; MODE + 4) against [K][N] row-major, with and without the global loads and
# barriers: is the fragment load of a row-major B what costs run 2's 500 -> 296 TFLOP/s?
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
g() { timeout 150 $D/bin/vkcnn-bench-conv gemm $D/bin/gemm_ceiling.spv 8192 8192 8192 --iterations 25 "$@"; }
{
g --modes 0,4,1,5,2,6,3,7 --gemm-tiles "2x4/4x2/2;2x2/4x4/2;2x2/2x2/2"
g --modes 0,4 --gemm-tiles "2x4/4x2/2;4x2/2x4/2;2x4/2x2/2;4x2/2x2/2;1x2/2x2/2"
} > $OUT/gemm.jsonl 2> $OUT/gemm.err
echo "rc=$?"
python3 - $OUT/gemm.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "tflops" in j: print(j["warps"], j["fragments"], j["k"], "mode", j["mode"], j["tflops"], j["rel_l2"])
    else: print(line.strip())
PY
