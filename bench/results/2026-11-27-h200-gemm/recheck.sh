#!/usr/bin/env bash
# 2026-11-27: gemm_ceiling.comp after its loops were written with shared macros (same work):
# the committed tile in the modes of runs 2, 6 and 7, against their figures.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
LD_LIBRARY_PATH=$D/lib timeout 120 $D/bin/vkcnn-bench-conv gemm $D/bin/gemm_ceiling.spv 8192 8192 8192 \
  --iterations 25 --modes 0,1,2,3,8,16 --gemm-tiles "2x4/4x2/2" > $OUT/gemm.jsonl 2> $OUT/gemm.err
echo "rc=$?"
python3 - $OUT/gemm.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "tflops" in j: print(j["warps"], j["fragments"], j["k"], "mode", j["mode"], j["tflops"], j["rel_l2"])
PY
