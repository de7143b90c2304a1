#!/usr/bin/env bash
# Session 20, run 10. U = the latency model's layers all on the split module, a reduction whole
# included ("<tile>s1"), so that an inference meets fewer pipelines for the first time; F = the
# branch before (3d848ae, .dev-ab/F). Tests under validation (every forced configuration, s1
# included); the s1 and tiled forms of 64x64p2 alone, cold; networks at b1 F U U F, b32 F U;
# resnet50 profiles. Carried: .device-build (U), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r10; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in U) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution -tc="*matrix-unit configuration*,*split over workgroups*,*pieces of a batch*,*residual added before*,*the batched shader*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
printf 'p256_64_56 1 256 56 56 64 1 1 1 1 0 0 1 1 1\nc64_56 1 64 56 56 64 3 3 1 1 1 1 1 1 1\nc512_28 1 512 28 28 512 3 3 1 1 1 1 1 1 1\n' > /tmp/s.txt
LD_LIBRARY_PATH=$D/lib timeout 60 $D/bin/vkcnn-bench-conv conv /tmp/s.txt --fp16 --iterations 20 --warmup 0.1 --cold \
  --tiles auto,64x64p2,64x64p2s1,128x128s4,64x128w8p2,64x128w8p2s1 > $R/layer.txt 2>&1
python3 - $R/layer.txt <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try: j = json.loads(line)
    except Exception: continue
    print(f'{j["name"]:12s} {j["tile"]:14s} {j["ms"]*1000:6.1f} us  {j["config"]}')
PY
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,densenet121,resnext50_32x4d
PYTHONUNBUFFERED=1 timeout 220 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 3 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run F $net 1 1; run U $net 1 1; run U $net 1 2; run F $net 1 2; done
echo "nets b1 $(( $(date +%s) - t0 )) s"
for net in resnet50 densenet121; do run F $net 32 1; run U $net 32 1; done
for l in F U; do
  LD_LIBRARY_PATH=$(lib $l) timeout 30 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --iterations 20 > $R/profile_${l}_resnet50_b1.txt 2>&1
done
grep -h total $R/profile_*.txt
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/[FU]_*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms") or 0, j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v))
PY
cd /tmp && tar czf $OUT/r10.tgz r10; ls -la $OUT
