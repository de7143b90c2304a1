#!/usr/bin/env bash
# Session 18, run 7 (the device time left): the other seven networks at batch 1, A S (S = as
# committed, the build of run 6): nothing slower at batch 1? Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
lib() { case $1 in S) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
work=/tmp/ab; mkdir -p $work/models
nets=mobilenet_v2,squeezenet1_1,efficientnet_b0,regnet_y_800mf,googlenet,shufflenet_v2_x1_0,mobilenet_v3_large
PYTHONUNBUFFERED=1 timeout 110 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -3 $R/pytorch.log
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 25 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 30 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run A $net 1 1; run S $net 1 1; done
echo "nets $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}(L2 {e:.2g})" for l, m, e in v))
PY
cd /tmp && tar czf $OUT/r7.tgz r7
