#!/usr/bin/env bash
# Session 25, run 8. What the depthwise convolution's time is made of at batch 32 (float16): the
# library as is (base = 86dad0a, rows of taps unrolled) against three builds of
# depthwise_convolution.comp that take one part away (.dev-ab/<variant>/lib, not committed):
# noFetch (the texels from arithmetic), noWeights (no weight loads), noStore (the image store
# skipped unless a sum is 1234.5), on six depthwise shapes of mobilenet_v2 and efficientnet_b0.
# Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r8; mkdir -p $R; H=bench/results/2026-11-27-s25
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
for v in base noFetch noWeights noStore base; do
  L=$D/lib; [ $v != base ] && L=$root/.dev-ab/$v/lib:$D/lib
  LD_LIBRARY_PATH=$L timeout 150 $D/bin/vkcnn-bench-conv conv $H/shapes_dw.txt --fp16 --tiles auto --iterations 20 --warmup 0.3 2>>$R/err.txt | sed "s/^{/{\"variant\":\"$v\",/" >> $R/shapes.jsonl
  echo "$v $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(list); names = []
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if r["name"] not in names: names.append(r["name"])
    t[(r["name"], r["variant"])].append(r["ms"])
vs = ["base", "noFetch", "noWeights", "noStore"]
print(f"{'shape':14s} " + " ".join(f"{v:>15s}" for v in vs))
for n in names:
    print(f"{n:14s} " + " ".join(f"{'/'.join(f'{x*1000:.1f}' for x in t[(n, v)]):>15s}" for v in vs))
PY
head -5 $R/err.txt
cd /tmp && tar czf $OUT/r8.tgz r8
