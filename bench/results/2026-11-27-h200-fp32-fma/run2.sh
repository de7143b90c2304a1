#!/usr/bin/env bash
# Session 21, run 2. B = addSlice in the staged 128 x 32 tile and the 16 x 8 one only (the 64 x 16
# tile back to `acc += w * x`), A = main (50b068f, .dev-ab/A). Tests of the changed shaders under
# validation; three shapes per portable tile A and B; the networks in float32 (run 1's ran in
# float16, vkcnn bench's default) at batch 32 A B B A and batch 1 A B; float32 profiles at batch
# 32. PyTorch's eager figures of run 1 are the yardstick (same machine type; only the models are
# exported here). Carried: .device-build (B), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; H=$root/bench/results/2026-11-27-h200-fp32-fma; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in B) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*every GEMM tile shape*,*every portable GEMM tile*,*residual added before*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt | head -30
grep -E "^(c256_56|c512_7|p256_64_56|p1024_256_14) " $H/fp32_shapes.txt > /tmp/s3.txt
for l in A B B A; do
  LD_LIBRARY_PATH=$(lib $l) timeout 60 $D/bin/vkcnn-bench-conv conv /tmp/s3.txt --fp32 --iterations 10 --warmup 0.05 \
    --tiles gemm_128x32w8,gemm_large,gemm_small >> $R/shapes_$l.txt 2>&1 || echo "shapes $l failed"
done
echo "shapes $(( $(date +%s) - t0 )) s"
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnet18,googlenet,squeezenet1_1,vgg16
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 3 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "models $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp32 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run A $net 32 1; run B $net 32 1; run B $net 32 2; run A $net 32 2; done
echo "nets b32 $(( $(date +%s) - t0 )) s"
for net in resnet50 resnet18 googlenet; do run A $net 1 1; run B $net 1 1; done
for net in resnet50 resnet18 googlenet vgg16; do
  LD_LIBRARY_PATH=$(lib B) timeout 40 $D/bin/vkcnn profile $work/models/$net.onnx --fp32 --batch 32 --iterations 5 > $R/profile_B_${net}_fp32_b32.txt 2>&1
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
for k in A:
    a, b = min(A[k]), min(B.get(k, [float("nan")]))
    print(f"{k[0]:14s} {k[1]:14s} A {a:8.4f}  B {b:8.4f}  B/A {b/a:5.3f}")
t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/[AB]_*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms") or 0, j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v))
PY
cd /tmp && tar czf $OUT/r2.tgz r2; ls -la $OUT
