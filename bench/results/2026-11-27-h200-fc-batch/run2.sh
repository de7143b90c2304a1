#!/usr/bin/env bash
# Session 19, run 2. R = the tip with the tensor path's source loaded as whole slices (run 1's
# element loads: fc6 at b32 took 1.39 ms), F = encodeBatch without the refit (.dev-ab/F, run 1's),
# P = R with VKCNN_FULLY_CONNECTED=pieces. Tests under validation; vgg16 P R R P (fp16 b32), P R
# (fp32 b32); fully connected rows per slice forced 1/2/4/8 in vgg16 profiles at b32 and b1; the
# refit again, F R R F at b32. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R
if [ ! -d /tmp/vl ]; then
  for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
  mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in R|P) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*encodeBatch*,*batched shader*,*fully connected over whole*,*large fully connected*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph -tc="*weights once*,*too wide*" > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -40
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,resnext50_32x4d,densenet121
if [ ! -f $work/models/densenet121_b32_output.npy ]; then
  PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
fi
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round [fp32]
  local env=""; [ $1 = P ] && env="VKCNN_FULLY_CONNECTED=pieces"
  local prec=--fp16 tag=fp16; [ "${5:-}" = fp32 ] && prec=--fp32 tag=fp32
  env LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 $env timeout 90 $D/bin/vkcnn bench $work/models/$2.onnx \
    $prec --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_${tag}_b$3_$4.json > $R/${1}_${2}_${tag}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3 $tag"
}
run P vgg16 32 1; run R vgg16 32 1; run R vgg16 32 2; run P vgg16 32 2
run P vgg16 32 1 fp32; run R vgg16 32 1 fp32; run R vgg16 32 2 fp32; run P vgg16 32 2 fp32
echo "vgg16 $(( $(date +%s) - t0 )) s"
for b in 32 1; do for rows in 1 2 4 8; do
  prec=--fp16; for p in fp16 fp32; do [ $p = fp32 ] && prec=--fp32; [ $b = 1 ] && [ $p = fp32 ] && continue
  env LD_LIBRARY_PATH=$D/lib VKCNN_FULLY_CONNECTED=batched$rows timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx $prec --batch $b --iterations 5 > $R/profile_vgg16_${p}_b${b}_r$rows.txt 2>&1
  echo "$p b$b rows $rows: $(grep 'classifier.*Gemm' $R/profile_vgg16_${p}_b${b}_r$rows.txt | grep -v 'gather\|scatte' | awk '{printf "%s ", $(NF-1)}')"
done; done; done
for p in fp16 fp32; do prec=--$p
  env LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx $prec --batch 32 --iterations 5 > $R/profile_R_vgg16_${p}_b32.txt 2>&1
  env LD_LIBRARY_PATH=$D/lib VKCNN_FULLY_CONNECTED=pieces timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx $prec --batch 32 --iterations 5 > $R/profile_P_vgg16_${p}_b32.txt 2>&1
done
echo "profiles $(( $(date +%s) - t0 )) s"
for net in resnet50 resnet18 densenet121; do run F $net 32 3; run R $net 32 3; run R $net 32 4; run F $net 32 4; done
echo "refit $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms") or 0, j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v))
PY
cd /tmp && tar czf $OUT/r2.tgz r2; ls -la $OUT
