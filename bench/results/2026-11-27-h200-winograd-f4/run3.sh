#!/usr/bin/env bash
# Session 22, run 3. Where F(4x4,3x3) loses: every 3x3 stride-1 shape of six networks in float32
# at batch 1 and 32, A's selector (57329c6, .dev-ab/A; no Winograd) against W's forced Winograd
# and W's selector, cuDNN (TF32 off) in the same run. Carried: .device-build (W), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
nets=vgg16,resnet18,resnet50,densenet121,googlenet,squeezenet1_1
PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$root/.dev-ab/A/lib:$D/lib timeout 200 python3 scripts/bench/conv_shapes.py --networks $nets \
  --only-3x3-stride-1 --bench $D/bin/vkcnn-bench-conv --out $R/A --formats fp32 --batches 1,32 --tiles auto --iterations 20 --warmup 0.02 --no-torch > $R/A.log 2>&1
echo "A rc=$? $(( $(date +%s) - t0 )) s"; tail -3 $R/A.log
PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$D/lib timeout 300 python3 scripts/bench/conv_shapes.py --networks $nets \
  --only-3x3-stride-1 --bench $D/bin/vkcnn-bench-conv --out $R/W --formats fp32 --batches 1,32 --tiles winograd,auto --iterations 20 --warmup 0.02 > $R/W.log 2>&1
echo "W rc=$? $(( $(date +%s) - t0 )) s"; tail -3 $R/W.log
python3 - $R <<'PY'
import json, sys
o = sys.argv[1]
def load(p):
    out = {}
    for b in (1, 32):
        try:
            for l in open(f"{p}/vkcnn_fp32_b{b}.jsonl"):
                r = json.loads(l)
                if "tile" in r: out[(b, r["name"], r["tile"])] = r["ms"]
        except FileNotFoundError: pass
    return out
a, w = load(o + "/A"), load(o + "/W")
j = json.load(open(o + "/W/conv_shapes.json"))
th = {}
for tag, run in j["runs"].items():
    pass
print("batch shape uses | A auto | W winograd | W auto | W/A")
for b in (1, 32):
    for i, s in enumerate(j["shapes"]):
        n = f"s{i}"
        A = a.get((b, n, "auto")); Wf = w.get((b, n, "winograd")); Wa = w.get((b, n, "auto"))
        if A and Wf:
            print(f"b{b} {s['desc']} {sum(s['count'].values())} | {A:.4f} | {Wf:.4f} | {Wa or 0:.4f} | {Wf/A:.2f}")
PY
cd /tmp && tar czf $OUT/r3.tgz r3; ls -la $OUT
