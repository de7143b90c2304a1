#!/usr/bin/env bash
# Session 22, run 9. Load time with the Winograd weights: S = the weights written by output slice
# (the tip), A = 57329c6 (no Winograd weights), float32 models' import time (vkcnn bench's
# import_ms: parse, pack, upload) and resident time at batch 1, A S S A; the Winograd tests under
# validation. Carried: .device-build (S), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r9; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in S) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*Winograd*,*encodeBatch*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 3 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in ${nets//,/ }; do run A $net 1 1 fp32; run S $net 1 1 fp32; run S $net 1 2 fp32; run A $net 1 2 fp32; done
echo "nets $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(o + "/[AS]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append((j["import_ms"], j["resident_median_ms"], j["device_bytes"] / 2**20, j["relative_l2"]))
for k, v in t.items():
    for lib in ("A", "S"):
        print(k, lib, " ".join(f"import {a:.0f} ms resident {b:.3f} device {c:.0f} MiB L2 {d:.2g};" for a, b, c, d in v[lib]))
PY
cd /tmp && tar czf $OUT/r9.tgz r9
