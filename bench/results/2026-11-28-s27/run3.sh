#!/usr/bin/env bash
# Session 27, run 3. Where convolution_tiled_pieces' time goes: run 2 had it 4-8% slower than one
# dispatch over the same rows even where no tile straddles two pieces (l2_c3: 16 images a piece,
# 98 tiles each). Libraries: N (the working tree), V2 (every row fetches from piece 0's source:
# no per-row source index), V3 (the epilogue writes piece 0's destination and residual), V4 (both),
# A (4956963, one dispatch a piece). Wrong results in V2-V4, timings only. Carried: .device-build,
# .gl, .dev-ab/{A,V2,V3,V4}.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R; H=bench/results/2026-11-28-s27
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
for round in 1 2; do for v in N V2 V3 V4 A; do
  L=$D/lib; [ $v != N ] && L=$root/.dev-ab/$v/lib:$D/lib
  LD_LIBRARY_PATH=$L timeout 100 $D/bin/vkcnn-bench-conv conv $H/shapes_pieces_subset.txt --fp16 --pieces --tiles auto --iterations 20 --warmup 0.2 \
    2>>$R/err.txt | sed "s/^{/{\"lib\":\"$v\",\"round\":$round,/" >> $R/shapes.jsonl
  echo "$v $round $(( $(date +%s) - t0 )) s"
done; done
head -3 $R/err.txt
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "batch_ms" in r: t[r["name"]][r["lib"]].append((r["batch_ms"], r["concurrent_ms"], r["batch_config"]))
    elif "ms" in r and r["name"].endswith("_one"): t[r["name"]][r["lib"]].append((r["ms"], 0, r["config"][-14:]))
for n, libs in t.items():
    print(n, "  ".join(f"{lib}=" + "/".join(f"{x[0]*1000:.1f}" for x in v) for lib, v in libs.items()), "|", list(libs.values())[0][0][2])
PY
cd /tmp && tar czf $OUT/r3.tgz r3
