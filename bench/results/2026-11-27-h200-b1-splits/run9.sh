#!/usr/bin/env bash
# Session 20, run 9. N = convolution_tiled's fetch moved on from chunk to chunk without integer
# divisions; F = the branch before it (3d848ae, .dev-ab/F). Tests under validation (every forced
# configuration); the 3x3 512->512 @28² layer warm and cold, F N F N; every batch-1 shape cold,
# the selector's choice and the latency model's tiles forced, F and N; batch-32 shapes of resnet50
# F N; networks at b1 F N N F, b32 F N. Carried: .device-build (N), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r9; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 200 $D/bin/test_convolution -tc="*matrix-unit configuration*,*split over workgroups*,*pieces of a batch*,*residual added before*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
printf 'c512_28 1 512 28 28 512 3 3 1 1 1 1 1 1 1\nc64_56 1 64 56 56 64 3 3 1 1 1 1 1 1 1\nc512_28_b32 32 512 28 28 512 3 3 1 1 1 1 1 1 1\nc256_56_b32 32 256 56 56 256 3 3 1 1 1 1 1 1 1\n' > /tmp/s.txt
for l in F N F N; do
  for c in "" --cold; do
    LD_LIBRARY_PATH=$(lib $l) timeout 60 $D/bin/vkcnn-bench-conv conv /tmp/s.txt --fp16 --iterations 20 --warmup 0.1 $c \
      --tiles 64x64,64x64p2,32x64,128x128,128x128s4 | sed "s/^/$l${c:+ cold} /" >> $R/layer.txt 2>&1
  done
done
python3 - $R/layer.txt <<'PY'
import json, sys, collections
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tag, _, js = line.partition("{")
    try: j = json.loads("{" + js)
    except Exception: continue
    t[(j["name"], j["tile"], "cold" in tag)].append((tag.split()[0], j["ms"] * 1000))
for k, v in t.items(): print(f"{k[0]:12s} {k[1]:10s} {'cold' if k[2] else 'warm'} " + " ".join(f"{l}={m:.1f}" for l, m in v))
PY
echo "layers $(( $(date +%s) - t0 )) s"
tiles=auto,64x64p2,64x64p2s2,64x64p2s4,64x64p2s8,128x128s4,64x128w8p2s4
for l in F N; do
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/conv_shapes.py \
    --networks vgg16,resnet50,densenet121 --bench $D/bin/vkcnn-bench-conv --out /tmp/r9b1$l \
    --formats fp16 --batches 1 --tiles $tiles --warmup 0.03 --iterations 15 --cold --no-torch > $R/shapes_b1_$l.log 2>&1
  echo "b1 shapes $l rc=$? $(( $(date +%s) - t0 )) s: $(tail -1 $R/shapes_b1_$l.log)"; cp /tmp/r9b1$l/conv_shapes.json $R/b1_$l.json
done
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,densenet121,resnext50_32x4d
PYTHONUNBUFFERED=1 timeout 220 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 5 --warmup 2 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run F $net 1 1; run N $net 1 1; run N $net 1 2; run F $net 1 2; done
echo "nets b1 $(( $(date +%s) - t0 )) s"
for net in ${nets//,/ }; do run F $net 32 1; run N $net 32 1; done
echo "nets b32 $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/[FN]_*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms") or 0, j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v))
PY
cd /tmp && tar czf $OUT/r9.tgz r9; ls -la $OUT
