#!/usr/bin/env bash
# Session 23, run 9, on an H100: does the rule fitted on the H200 hold? Every float16 3x3 stride-1
# shape of six networks at batch 32 and 1: A's selector (.dev-ab/A), W forced and W's rule, cuDNN
# in the same run. Carried: .device-build (W, 2e75114), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r9; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
nets=vgg16,resnet18,resnet50,densenet121,googlenet,squeezenet1_1
PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$root/.dev-ab/A/lib:$D/lib timeout 150 python3 scripts/bench/conv_shapes.py --networks $nets \
  --only-3x3-stride-1 --bench $D/bin/vkcnn-bench-conv --out $R/A --formats fp16 --batches 1,32 --tiles auto --iterations 20 --warmup 0.02 --no-torch > $R/A.log 2>&1
echo "A rc=$? $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$D/lib timeout 200 python3 scripts/bench/conv_shapes.py --networks $nets \
  --only-3x3-stride-1 --bench $D/bin/vkcnn-bench-conv --out $R/W --formats fp16 --batches 1,32 --tiles winograd,auto --iterations 20 --warmup 0.02 > $R/W.log 2>&1
echo "W rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $R/W.log
python3 - $R <<'PY'
import json, sys
o = sys.argv[1]
def load(p):
    out = {}
    for b in (1, 32):
        for l in open(f"{p}/vkcnn_fp16_b{b}.jsonl"):
            r = json.loads(l)
            if "tile" in r: out[(b, r["name"], r["tile"])] = r
    return out
a, w = load(o + "/A"), load(o + "/W")
j = json.load(open(o + "/W/conv_shapes.json"))
names = {tuple(s["key"]): f"s{i}" for i, s in enumerate(j["shapes"])}
print("batch | shape | uses | A | W forced | W/A | taken | cuDNN")
for tag in ("fp16_b32", "fp16_b1"):
    b = int(tag.split("b")[1]); sa = sr = sb = st = 0
    for row in sorted(j["runs"][tag], key=lambda r: -r["gflop"] * r["count"]):
        k = tuple(row["key"]); n = names[k]; c = row["count"]
        A = a[(b, n, "auto")]["ms"]; W = w[(b, n, "winograd")]["ms"]; took = "winograd" in w[(b, n, "auto")]["config"]
        sa += c * A; sr += c * (W if took else A); sb += c * min(A, W); st += c * (row.get("torch") or 0)
        if k[0] >= 128 and k[3] >= 128:
            print(f"b{b} | {row['desc']} | {c} | {A:.4f} | {W:.4f} | {W/A:.2f} | {'yes' if took else ''} | {row.get('torch') or 0:.4f}")
    print(f"{tag}: A {sa:.3f} rule {sr:.3f} best {sb:.3f} cuDNN {st:.3f}")
PY
cd /tmp && tar czf $OUT/r9.tgz r9; ls -la $OUT
