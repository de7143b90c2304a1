#!/usr/bin/env bash
# Session 23, run 3. Where winograd_matrix_gemm.comp's time goes on short reductions, and what
# the pipeline's reach does: the eight shapes of run 2 with each dispatch's time, the GEMM forced
# through VKCNN_WINOGRAD_MATRIX_TILE=WMxWN/FMxFN/P/MODE (P positions a workgroup; MODE +1 no
# stores, +2 no loads, +4 loads two steps ahead). The F(2x2) test under validation with the
# default and two forced configurations. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R; H=bench/results/2026-11-27-h200-winograd-f2
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
for t in default 4x2/2x2/4/4 2x4/4x2/16/4; do
 (export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
  export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
  [ $t != default ] && export VKCNN_WINOGRAD_MATRIX_TILE=$t
  timeout 60 $D/bin/test_convolution -tc='*F(2x2*' > $R/test_${t//\//_}.txt 2>&1
  echo "test $t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_${t//\//_}.txt | head -2 | tr '\n' ' ')")
done
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
export LD_LIBRARY_PATH=$D/lib
for t in 4x2/2x2/1/0 4x2/2x2/1/1 4x2/2x2/1/2 4x2/2x2/1/3 4x2/2x2/4/0 4x2/2x2/16/0 4x2/2x2/1/4 4x2/2x2/4/4 4x2/2x2/16/4 2x4/4x2/1/0 2x4/4x2/4/4 2x2/4x4/4/4 2x2/4x4/1/4; do
  VKCNN_WINOGRAD_MATRIX_TILE=$t timeout 60 $D/bin/vkcnn-bench-conv conv $H/big_shapes.txt --fp16 --tiles winograd --iterations 20 --warmup 0.05 > $R/shapes_${t//\//_}.jsonl 2>>$R/shapes.err
  echo "tile $t rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json, sys, glob
o = sys.argv[1]
rows = {}
for f in sorted(glob.glob(o + "/shapes_*.jsonl")):
    cfg = f.split("/")[-1][7:-6]
    for l in open(f):
        try: r = json.loads(l)
        except Exception: continue
        p = r.get("parts_ms") or [0, 0, 0]
        rows.setdefault(r["name"], []).append((cfg, r["ms"], p[1] if len(p) > 1 else 0))
for n, v in rows.items():
    print(n, " ".join(f"{c}:{ms:.3f}/{g:.3f}" for c, ms, g in v))
PY
cd /tmp && tar czf $OUT/r3.tgz r3; ls -la $OUT
