#!/usr/bin/env bash
# Session 18, run 6 (the device time left): S = run 5's build with the split rule only for a layer
# alone (not beside the other pieces of a split batch). densenet121 at b32 (run 5: +9%) and b1,
# resnet50 at b1, A S S A. Carried: .device-build (S), .gl, .dev-ab (A = main).
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
lib() { case $1 in S) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 90 python3 scripts/bench/pytorch_side.py $work/models --networks densenet121,resnet50 --runs 3 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 30 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
run A densenet121 32 1; run S densenet121 32 1; run S densenet121 32 2; run A densenet121 32 2
run A densenet121 1 1; run S densenet121 1 1; run A resnet50 1 1; run S resnet50 1 1
echo "nets $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}(L2 {e:.2g})" for l, m, e in v))
PY
cd /tmp && tar czf $OUT/r6.tgz r6
