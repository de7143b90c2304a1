#!/usr/bin/env bash
# Session 26, run 7. Winograd F(2x2,3x3)'s GEMM (winograd_matrix_gemm.comp) with 16-deep stages,
# after run 2's ceiling (2x2 warps of 4x4 at 16 deep: 168.7 TFLOP/s against 161 at 32 deep): the
# staged store now takes what it needs beyond A's stages. VKCNN_WINOGRAD_MATRIX_TILE forces
# 2x2/4x4/1/1 (the committed 128-column tile at 16 deep) against the committed 2x2/4x4/1/2, and
# 4x1/2x4 at 16 and 32 deep; the F(2x2) case under validation with the 16-deep tile forced.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R; H=bench/results/2026-11-28-s26
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 VKCNN_WINOGRAD_MATRIX_TILE=2x2/4x4/1/1 timeout 100 $D/bin/test_convolution -tc='*Winograd F(2x2*' > $R/test_k16.txt 2>&1
 echo "test k16 rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_k16.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_k16.txt | head -30
export LD_LIBRARY_PATH=$D/lib
for cfg in committed 2x2/4x4/1/1 committed 2x2/4x4/1/1 4x1/2x4/1/2 4x1/2x4/1/1; do
  e=""; [ $cfg != committed ] && e="VKCNN_WINOGRAD_MATRIX_TILE=$cfg"
  env $e timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_winograd.txt --fp16 --tiles winograd --iterations 20 --warmup 0.3 2>>$R/err.txt \
    | sed "s#^{#{\"variant\":\"$cfg\",#" >> $R/shapes.jsonl
  echo "$cfg $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list)); names = []
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" not in r: print(r); continue
    if r["name"] not in names: names.append(r["name"])
    t[r["name"]][r["variant"]].append((r["ms"], r["parts_ms"][1] if len(r["parts_ms"]) > 1 else 0))
for n in names:
    print(f"{n:12s}", "  ".join(f"{v}: " + "/".join(f"{a*1000:.1f} (gemm {g*1000:.1f})" for a, g in x) for v, x in t[n].items()))
PY
head -3 $R/err.txt
cd /tmp && tar czf $OUT/r7.tgz r7
