#!/usr/bin/env bash
# Session 19, run 6. W = U (.dev-ab/U, run 4's tip) plus the image path two steps at a time where
# the window lies inside the source (.device-build); run 5's V (both paths through shared step
# helpers, conditional loads) was 2.5x slower everywhere. Tests under validation; vgg16 b1 U W W U,
# b32 U W; classifier profiles. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in W) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*encodeBatch*,*batched shader*,*fully connected over whole*,*large fully connected*,*float32 destinationFormat*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 100 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16 --runs 3 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round [fp32]
  local prec=--fp16 tag=fp16; [ "${5:-}" = fp32 ] && prec=--fp32 tag=fp32
  env LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 90 $D/bin/vkcnn bench $work/models/$2.onnx \
    $prec --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_${tag}_b$3_$4.json > $R/${1}_${2}_${tag}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $tag"
}
run U vgg16 1 1; run W vgg16 1 1; run W vgg16 1 2; run U vgg16 1 2; run U vgg16 32 1; run W vgg16 32 1
run U vgg16 1 1 fp32; run W vgg16 1 1 fp32
for l in U W; do for b in 1 32; do
  env LD_LIBRARY_PATH=$(lib $l) timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch $b --iterations 10 > $R/profile_${l}_vgg16_b$b.txt 2>&1
  echo "$l b$b: $(grep 'classifier.*Gemm' $R/profile_${l}_vgg16_b$b.txt | grep -v 'gather\|scatte' | awk '{printf "%s ", $(NF-1)}') $(grep total $R/profile_${l}_vgg16_b$b.txt)"
done; done
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms") or 0, j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v))
PY
cd /tmp && tar czf $OUT/r6.tgz r6; ls -la $OUT
