#!/usr/bin/env bash
# Session 26, run 2. The GEMM ceiling (bench/gemm_ceiling.comp) warp-specialized (MODE + 32):
# producer warps copy chunks into a ring of shared stages, the tile's warps only load fragments
# and multiply, the two sides waiting on counters in shared memory instead of a barrier a chunk.
# 8192^3, float16, against the committed data path (mode 0) in the same process; registers from
# vkcnn-pipeline-stats. Modes: 32 | producers << 6 | stages << 10 (+1: no global loads).
# Carried: .device-build (bin/gemm_ceiling.spv added), .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
S=$D/bin/gemm_ceiling.spv
timeout 120 $D/bin/vkcnn-pipeline-stats --gemm $S --gemm-configs \
  "2x4/4x2/2/0;2x4/4x2/1/0;2x4/4x2/1/4384;2x4/4x2/1/4256;2x4/4x2/1/4640;2x2/4x4/1/4384;2x2/4x4/1/4256;2x4/4x4/1/3360;2x4/4x2/2/2336;2x2/2x2/1/4256" \
  > $R/stats.txt 2>&1; echo "stats rc=$? $(( $(date +%s) - t0 )) s"; grep -i 'gemm_ceiling' $R/stats.txt | head -20
g() {  # tiles modes
  timeout 120 $D/bin/vkcnn-bench-conv gemm $S 8192 8192 8192 --iterations 10 --warmup 0.4 --gemm-tiles "$1" --modes $2 \
    >> $R/gemm.jsonl 2>>$R/err.txt; echo "rc=$? $1 $2 $(( $(date +%s) - t0 )) s"
}
g "2x4/4x2/2;2x4/4x2/1;2x2/4x4/1" 0,4384,4256,3360,4640,4385
g "2x4/4x2/2" 2336
g "2x4/4x4/1" 0,3360,2336
g "2x2/2x2/1;2x2/2x2/2" 0,4256,4384
python3 - $R <<'PY'
import json, sys
for l in open(sys.argv[1] + "/gemm.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r:
        m = r["mode"]; d = f"P{(m>>6)&15} S{(m>>10)&7}{' noload' if m&3 else ''}" if m & 32 else "barrier"
        print(f'{r["warps"]}/{r["fragments"]} k{r["k"]} {d:14s} {r["tflops"]:7.1f} TFLOP/s  rel_l2 {r["rel_l2"]}')
    else: print(r)
PY
tail -5 $R/err.txt
cd /tmp && tar czf $OUT/r2.tgz r2
