#!/usr/bin/env bash
# Session 25, run 4. Where the networks nearest "at least PyTorch eager at batch 32" spend their
# time: squeezenet1_1, resnet18 and efficientnet_b0 in float16 at batch 32 (vkcnn bench twice and
# vkcnn profile, PyTorch in the same run), and their convolution shapes against cuDNN
# (conv_shapes.py). The library of 6a0b0d2. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
work=/tmp/ab; mkdir -p $work/models
nets=squeezenet1_1,resnet18,efficientnet_b0
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=$D/lib
for net in ${nets//,/ }; do
  for i in 1 2; do
    timeout 60 $D/bin/vkcnn bench $work/models/$net.onnx --fp16 --batch 32 --iterations 20 \
      --input $work/models/${net}_b32_input.npy --reference $work/models/${net}_b32_output.npy \
      --json $R/N_${net}_fp16_b32_$i.json > $R/N_${net}_fp16_b32_$i.txt 2>&1 || echo "FAILED $net"
  done
  timeout 60 $D/bin/vkcnn profile $work/models/$net.onnx --fp16 --batch 32 --iterations 10 --json $R/profile_${net}_b32.json > $R/profile_${net}_b32.txt 2>&1
done
echo "networks $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/conv_shapes.py --bench $D/bin/vkcnn-bench-conv --out $R/shapes --batches 32 --formats fp16 --networks squeezenet1_1,resnet18 > $R/shapes.log 2>&1 || tail -5 $R/shapes.log
echo "shapes $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
r = json.load(open(o + "/pytorch.json"))["networks"]
for net in ("squeezenet1_1", "resnet18", "efficientnet_b0"):
    v = [json.load(open(f))["resident_median_ms"] for f in sorted(glob.glob(f"{o}/N_{net}_fp16_b32_*.json"))]
    e = r[net]["fp16_32"]["eager"]["median_ms"]; g = r[net]["fp16_32"]["graph"]["median_ms"]
    p = json.load(open(f"{o}/profile_{net}_b32.json"))
    agg = collections.Counter(); cnt = collections.Counter()
    for k in p["kernels"]:
        kind = k["label"].split("'")[1].rsplit("/", 1)[-1] if "'" in k["label"] else k["label"]
        agg[kind] += k["median_ms"]; cnt[kind] += 1
    print(f"{net}: vkcnn {v} eager {e:.3f} graph {g:.3f}; profile {p['total_ms']:.3f} ms, {p['dispatches']} dispatches, {p['barriers']} barriers")
    print("   ", [(k, round(t, 3), cnt[k]) for k, t in agg.most_common(10)])
PY
cat $R/shapes/conv_fp16_b32.md 2>/dev/null | head -40 | cut -c1-200
cd /tmp && tar czf $OUT/r4.tgz r4
