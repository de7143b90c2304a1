#!/usr/bin/env bash
# Session 20, run 8. F = the branch's tip (latency model, one image's fully connected loop, 2 M
# threshold); A = main before the session (e90b517, .dev-ab/A). Tests under validation; the GEMM
# ceiling at vgg16's batch-1 3x3 512->512 @28² size (832 x 512 x 4608) with parts taken away
# (modes 0-3), beside the convolution with the same tiles (L2 warm): what a chunk costs one
# workgroup alone on its multiprocessor; networks A F F A at b1, A F at b32, PyTorch in the same
# run; profiles. Carried: .device-build (F, with gemm_ceiling.spv), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r8; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in F) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc="*matrix-unit configuration*,*split over workgroups*,*the batched shader*,*ully connected over*,*encodeBatch*,*large fully*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
export LD_LIBRARY_PATH=$D/lib
timeout 100 $D/bin/vkcnn-bench-conv gemm $D/bin/gemm_ceiling.spv 832 512 4608 --iterations 20 --modes 0,1,2,3 \
  --gemm-tiles "2x2/2x2/2;1x2/2x2/2;2x4/4x2/2" > $R/gemm_b1.jsonl 2> $R/gemm_b1.err
printf 'c512_28 1 512 28 28 512 3 3 1 1 1 1 1 1 1\n' > /tmp/s.txt
timeout 60 $D/bin/vkcnn-bench-conv conv /tmp/s.txt --fp16 --iterations 20 --warmup 0.2 --tiles 64x64,32x64,128x128 > $R/conv_b1.jsonl 2>&1
python3 - $R <<'PY'
import json, sys
o = sys.argv[1]
for line in open(o + "/gemm_b1.jsonl"):
    try: j = json.loads(line)
    except Exception: continue
    if "gemm" in j: print("gemm", j["warps"], j["fragments"], "mode", j["mode"], f'{j["ms"]*1000:.1f} us', j["rel_l2"])
for line in open(o + "/conv_b1.jsonl"):
    try: j = json.loads(line)
    except Exception: continue
    print("conv", j["tile"], f'{j["ms"]*1000:.1f} us')
PY
echo "gemm $(( $(date +%s) - t0 )) s"
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,densenet121,resnext50_32x4d
PYTHONUNBUFFERED=1 timeout 220 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run A $net 1 1; run F $net 1 1; run F $net 1 2; run A $net 1 2; done
echo "nets b1 $(( $(date +%s) - t0 )) s"
for net in ${nets//,/ }; do run A $net 32 1; run F $net 32 1; done
echo "nets b32 $(( $(date +%s) - t0 )) s"
for net in vgg16 resnet50; do
  LD_LIBRARY_PATH=$D/lib timeout 30 $D/bin/vkcnn profile $work/models/$net.onnx --fp16 --iterations 20 > $R/profile_F_${net}_b1.txt 2>&1
done
grep -h "classifier\|/fc/\|total" $R/profile_F_*.txt
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms") or 0, j.get("relative_l2")))
p = json.load(open(o + "/pytorch.json"))["networks"]
for k, v in t.items():
    net, b = k.rsplit("_", 1)
    pt = p.get(net, {}).get(f"fp16_{b}", {})
    print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v),
          f"| torch eager {pt.get('eager', {}).get('median_ms', 0):.3f} graph {pt.get('graph', {}).get('median_ms', 0):.3f}")
PY
cd /tmp && tar czf $OUT/r8.tgz r8; ls -la $OUT
