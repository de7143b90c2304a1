#!/usr/bin/env bash
# Session 21, run 8 (data): the 128 x 32 tile with 16 warps of 8 x 1 (gemm_128x32w16, at most 128
# registers) against 8 warps of 8 x 2 (gemm_128x32w8, 189) and the 128 x 16 tile on float32
# batch-32 shapes, pieces side by side; its test under validation; its pipeline statistics.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; H=$root/bench/results/2026-11-27-h200-fp32-fma; t0=$(date +%s)
R=/tmp/r8; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*every portable GEMM tile*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
export LD_LIBRARY_PATH=$D/lib
timeout 100 $D/bin/vkcnn-pipeline-stats --variants f32 2>&1 | grep gemm > $R/pipeline-stats.txt; cat $R/pipeline-stats.txt
for round in 1 2; do
  timeout 150 $D/bin/vkcnn-bench-conv conv $H/fp32_shapes2.txt --fp32 --iterations 10 --warmup 0.05 --pieces \
    --tiles gemm_128x32w8,gemm_128x32w16,gemm_128x16w8 >> $R/shapes.txt 2>&1 || echo "shapes failed"
done
echo "shapes $(( $(date +%s) - t0 )) s"
python3 - $R/shapes.txt <<'PY'
import json, sys, collections
t = collections.defaultdict(list); p = collections.defaultdict(list)
for line in open(sys.argv[1]):
    try: j = json.loads(line)
    except Exception: continue
    if "pieces" in j: p[(j["name"], j["pieces_tile"])].append(j["concurrent_ms"])
    else: t[(j["name"], j["tile"])].append(j["ms"])
names = sorted({k[0] for k in t}, key=lambda n: list(k[0] for k in t).index(n))
for n in names:
    row = []
    for tile in ("gemm_128x32w8", "gemm_128x32w16", "gemm_128x16w8"):
        v = min(p[(n, tile)]) if (n, tile) in p else min(t[(n, tile)])
        row.append(f"{tile} {v:.4f}")
    print(f"{n:14s} " + "  ".join(row) + ("  (pieces side by side)" if (n, "gemm_128x32w8") in p else ""))
PY
cd /tmp && tar czf $OUT/r8.tgz r8
