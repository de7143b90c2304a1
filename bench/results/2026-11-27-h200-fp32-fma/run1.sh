#!/usr/bin/env bash
# Session 21, run 1. B = the portable GEMMs' slice products as four fused multiply-adds a lane
# (addSlice), A = main before it (50b068f, .dev-ab/A). Tests of the changed shaders under
# validation; the costliest float32 batch-32 shapes forced on each portable tile, A and B, with
# cuDNN's float32 (TF32 off) on the same shapes; networks in float32 at batch 32 A B B A with
# PyTorch in the same run. Carried: .device-build (B), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; H=$root/bench/results/2026-11-27-h200-fp32-fma; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in B) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc="*every GEMM tile shape*,*every portable GEMM tile*,*sampled sweep*,*residual added before*,*every neuron type*,*batch normalization folded*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt | head -30
# Per shape: A and B on every portable tile, twice in turn.
for l in A B B A; do
  LD_LIBRARY_PATH=$(lib $l) timeout 100 $D/bin/vkcnn-bench-conv conv $H/fp32_shapes.txt --fp32 --iterations 10 --warmup 0.05 \
    --tiles auto,gemm_128x32w8,gemm_large,gemm_small >> $R/shapes_$l.txt 2>&1 || echo "shapes $l failed"
done
echo "shapes $(( $(date +%s) - t0 )) s"
timeout 120 python3 $H/cudnn_fp32.py $H/fp32_shapes.txt > $R/cudnn.txt 2>&1 || tail -3 $R/cudnn.txt
echo "cudnn $(( $(date +%s) - t0 )) s"
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnet18,vgg16,googlenet,squeezenet1_1
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run A $net 32 1; run B $net 32 1; run B $net 32 2; run A $net 32 2; done
echo "nets b32 $(( $(date +%s) - t0 )) s"
for net in resnet50 resnet18; do run A $net 1 1; run B $net 1 1; done
for l in A B; do
  LD_LIBRARY_PATH=$(lib $l) timeout 30 $D/bin/vkcnn profile $work/models/resnet50.onnx --batch 32 --iterations 5 > $R/profile_${l}_resnet50_b32.txt 2>&1
done
grep -h total $R/profile_*.txt
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]
def rows(f):
    out = {}
    for line in open(f):
        try: j = json.loads(line)
        except Exception: continue
        out.setdefault((j["name"], j["tile"]), []).append(j["ms"])
    return out
A, B = rows(o + "/shapes_A.txt"), rows(o + "/shapes_B.txt")
cu = {}
for line in open(o + "/cudnn.txt"):
    try: j = json.loads(line); cu[j["name"]] = j["ms"]
    except Exception: pass
for k in A:
    a, b = min(A[k]), min(B.get(k, [float("nan")]))
    c = cu.get(k[0], float("nan"))
    print(f"{k[0]:14s} {k[1]:14s} A {a:8.4f}  B {b:8.4f}  B/A {b/a:5.3f}  cuDNN {c:8.4f}  cuDNN/B {c/b:5.2f}")
t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/[AB]_*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms") or 0, j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v))
PY
python3 - $R/pytorch.json <<'PY2'
import json, sys
r = json.load(open(sys.argv[1]))
for n, e in r["networks"].items():
    print(n, " ".join(f"{k} eager {e[k]['eager']['median_ms']:.3f} graph {e[k]['graph']['median_ms']:.3f}" for k in ("fp32_b32", "fp32_b1", "fp16_b32")))
PY2
cd /tmp && tar czf $OUT/r1.tgz r1; ls -la $OUT
