#!/usr/bin/env bash
# Session 25, run 1. What the tiled convolution's time is made of on vgg16's 3x3 shapes at batch
# 32 (float16): the library as is (base) against four builds of convolution_tiled.glsl that take
# one part away (.dev-ab/<variant>/lib, built by /tmp/variants.sh, not committed): noA (no texel
# fetches: the im2col values come from arithmetic), noB (no weight loads), noAB (neither), noOut
# (the image stores skipped unless a sum is 1234.5). Each on the selector's tile, 64x64 and
# 128x128. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R; H=bench/results/2026-11-27-s25
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
for v in base noA noB noAB noOut base; do
  L=$D/lib; [ $v != base ] && L=$root/.dev-ab/$v/lib:$D/lib
  LD_LIBRARY_PATH=$L timeout 150 $D/bin/vkcnn-bench-conv conv $H/shapes_vgg.txt --fp16 --tiles auto,64x64,128x128 --iterations 20 --warmup 0.3 2>>$R/err.txt | sed "s/^{/{\"variant\":\"$v\",/" >> $R/shapes.jsonl
  echo "$v $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(list); names=[]; tiles={}
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    k=(r["name"], r["tile"])
    if k not in names: names.append(k)
    tiles[k]=r.get("config", "").split()[-1] if r.get("config") else ""
    t[(k, r["variant"])].append(r["ms"])
vs=["base","noA","noB","noAB","noOut"]
print(f"{'shape':12s} {'tile':8s} {'config':12s} " + " ".join(f"{v:>13s}" for v in vs))
for k in names:
    print(f"{k[0]:12s} {k[1]:8s} {str(tiles[k]):12s} " + " ".join(f"{'/'.join(f'{x:.3f}' for x in t[(k,v)]):>13s}" for v in vs))
PY
head -5 $R/err.txt
cd /tmp && tar czf $OUT/r1.tgz r1
