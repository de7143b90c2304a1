#!/usr/bin/env bash
# Run 7 (2026-11-27): the global staging's cost (run 2: 220 -> 151 TFLOP/s). MODE + 16 walks the
# output in groups of 8 tile rows (A and B rows shared in L2 by the workgroups running at once);
# gemm_ceiling_restrict.spv is the same shader with A and B `restrict` too
# (glslangValidator -V --target-env vulkan1.1 -Os -DRESTRICT_OPERANDS).
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
for spv in gemm_ceiling gemm_ceiling_restrict; do
  for size in 8192 4096; do
    timeout 100 $D/bin/vkcnn-bench-conv gemm $D/bin/$spv.spv $size $size $size --iterations 25 --modes 0,16,1,17 \
      --gemm-tiles "2x4/4x2/2;2x2/4x4/2;2x2/2x2/2" | sed "s/^{/{\"spirv\": \"$spv\", /"
  done
done > $OUT/gemm.jsonl 2> $OUT/gemm.err
echo "rc=$?"
python3 - $OUT/gemm.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "tflops" in j: print(j["spirv"], j["M"], j["warps"], j["fragments"], j["k"], "mode", j["mode"], j["tflops"], j["rel_l2"])
PY
