#!/usr/bin/env bash
# Run 4 (2026-11-27): workgroup size against registers. The driver takes up to 255 registers
# whenever one workgroup of 256 fits (run 3: the 128x128 ceiling at 240, one workgroup per
# multiprocessor); a workgroup of 512 invocations caps it at 128, one of 128 lets two resident.
# Timings and registers of such tiles, modes 0 and 3, warmed 0.4 s each.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
T=${TILES:-4x4/2x2/2;4x4/4x2/1;8x2/2x4/1;4x4/2x4/1;2x2/4x2/2;2x2/2x4/2;2x4/4x2/2;2x2/4x4/2}
cfg=""; IFS=';'; for t in $T; do for m in 0 3; do cfg="$cfg$t/$m;"; done; done; unset IFS
timeout 60 $D/bin/vkcnn-pipeline-stats --gemm $D/bin/gemm_ceiling.spv --gemm-configs "${cfg%;}" > $OUT/stats.txt 2>&1
timeout 200 $D/bin/vkcnn-bench-conv gemm $D/bin/gemm_ceiling.spv 8192 8192 8192 --iterations 25 --modes 0,3 \
  --gemm-tiles "$T" > $OUT/gemm.jsonl 2> $OUT/gemm.err
echo "rc=$?"
cut -d'|' -f1-2 $OUT/stats.txt
python3 - $OUT/gemm.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "tflops" in j: print(j["warps"], j["fragments"], j["k"], "mode", j["mode"], j["tflops"], j["rel_l2"])
    else: print(line.strip())
PY
