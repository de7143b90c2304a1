#!/usr/bin/env bash
# Session 23, run 8, on an H100. The final tip (2e75114) under
# validation with synchronization validation: test_convolution whole, test_graph,
# test_squeeze_excitation; vgg16 and resnet50 in float16 at batch 32 and 1 (A W), relative L2 and
# device memory. Carried: .device-build (W), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r8; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_graph test_squeeze_excitation; do
   timeout 200 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done)
grep -B3 -A12 'ERROR\|FAILED' $R/test_*.txt | head -30
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 100 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16,resnet50 --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
lib() { case $1 in W) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
run() {  # lib net batch round format
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --$5 --batch $3 --iterations 15 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_$5_b$3_$4.json > $R/${1}_${2}_$5_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $5"
}
for net in vgg16 resnet50; do for b in 32 1; do run A $net $b 1 fp16; run W $net $b 1 fp16; done; done
python3 - $R <<'PY'
import json, sys, glob
o = sys.argv[1]
for f in sorted(glob.glob(o + "/W_*.json")):
    n = f.split("/")[-1][2:]; w = json.load(open(f)); a = json.load(open(o + "/A_" + n))
    print(f"{n}: A {a['resident_median_ms']:.3f} W {w['resident_median_ms']:.3f} ms, L2 {a['relative_l2']:.2g} / {w['relative_l2']:.2g}, device MiB {a['device_bytes']/2**20:.0f} / {w['device_bytes']/2**20:.0f}, import {a['import_ms']:.0f} / {w['import_ms']:.0f} ms")
PY
cd /tmp && tar czf $OUT/r8.tgz r8; ls -la $OUT
