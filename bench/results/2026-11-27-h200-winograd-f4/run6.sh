#!/usr/bin/env bash
# Session 22, run 6. Batch 1 in float32, where no layer takes Winograd: A (57329c6), W (the tip),
# W0 (the tip without F(4x4,3x3)'s weights: winogradWanted false), A W W0 three rounds, to see
# whether the 1-2% that W lost in run 5 comes from the weights it keeps. Carried: .device-build,
# .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in W) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
work=/tmp/ab; mkdir -p $work/models
nets=googlenet,resnet18,squeezenet1_1,mobilenet_v2
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 5 --warmup 2 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 30 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for round in 1 2 3; do for net in ${nets//,/ }; do run A $net 1 $round fp32; run W $net 1 $round fp32; run W0 $net 1 $round fp32; done; done
echo "b1 $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(o + "/*_fp32_b1_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"])
for k, v in t.items():
    print(k, " ".join(f"{l} " + "/".join(f"{x:.3f}" for x in v[l]) for l in ("A", "W", "W0")),
          f"| W/A {statistics.mean(v['W'])/statistics.mean(v['A']):.3f} W0/A {statistics.mean(v['W0'])/statistics.mean(v['A']):.3f}")
PY
cd /tmp && tar czf $OUT/r6.tgz r6
