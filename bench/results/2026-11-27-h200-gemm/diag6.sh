#!/usr/bin/env bash
# Run 6 (2026-11-27): fragments loaded one k-step ahead, a chunk's last k-step multiplied after
# the barrier behind the next chunk's first loads (MODE + 8), against run 5's order (loads, then
# multiply-adds), with and without the global loads and the barriers.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
g() { timeout 150 $D/bin/vkcnn-bench-conv gemm $D/bin/gemm_ceiling.spv 8192 8192 8192 --iterations 25 "$@"; }
g --modes 0,8,1,9,2,10 --gemm-tiles "2x4/4x2/2;2x2/4x4/2;2x2/2x2/2;4x2/2x4/2" > $OUT/gemm.jsonl 2> $OUT/gemm.err
echo "rc=$?"
cfg=""; for t in 2x4/4x2/2 2x2/4x4/2 2x2/2x2/2; do for m in 0 8; do cfg="$cfg$t/$m;"; done; done
timeout 60 $D/bin/vkcnn-pipeline-stats --gemm $D/bin/gemm_ceiling.spv --gemm-configs "${cfg%;}" | cut -d'|' -f1-2
python3 - $OUT/gemm.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "tflops" in j: print(j["warps"], j["fragments"], j["k"], "mode", j["mode"], j["tflops"], j["rel_l2"])
    else: print(line.strip())
PY
