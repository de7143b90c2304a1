#!/usr/bin/env bash
# Session 25, run 2. What measurement (vkcnn tune) gives over the cost model on the networks
# nearest their targets: resnet50 at batch 1 (0.935 ms, target 0.9), resnet18 at batch 32 (0.99x
# of eager), and vgg16 / resnet50 at batch 32 / vgg16 at batch 1. Per network and batch: bench
# with an empty cache (U), vkcnn tune into cache T, bench with T, U again, T again; profiles of
# resnet50 at batch 1 both ways. PyTorch in the same run. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnet18,vgg16
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=$D/lib
run() {  # cache net batch round
  VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1-$2-$3 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for nb in resnet50:1 resnet18:32 resnet50:32 vgg16:1 vgg16:32 resnet18:1; do
  net=${nb%:*}; b=${nb#*:}
  run U $net $b 1
  VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-T-$net-$b timeout 150 $D/bin/vkcnn tune $work/models/$net.onnx --fp16 --batch $b > $R/tune_${net}_b$b.txt 2>&1 || echo "TUNE FAILED $net $b"
  run T $net $b 1; run U $net $b 2; run T $net $b 2
  echo "$net b$b $(( $(date +%s) - t0 )) s: $(tail -1 $R/tune_${net}_b$b.txt)"
done
for c in U T; do
  VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$c-resnet50-1 timeout 60 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 1 --iterations 20 --json $R/profile_resnet50_b1_$c.json > $R/profile_resnet50_b1_$c.txt 2>&1
done
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(o + "/[UT]_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"])
r = json.load(open(o + "/pytorch.json"))["networks"]
print("network format batch | U ms | T ms | T/U | eager | graph | U vs eager | T vs eager | T vs graph")
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); u = statistics.mean(v["U"]); s = statistics.mean(v["T"])
    e = r[n][f"{fmt}_{b}"]["eager"]["median_ms"]; g = r[n][f"{fmt}_{b}"]["graph"]["median_ms"]
    print(f"{n} {fmt} {b} | {u:.3f} | {s:.3f} | {s/u:.3f} | {e:.3f} | {g:.3f} | {e/u:.2f}x | {e/s:.2f}x | {g/s:.2f}x | {v['U']} {v['T']}")
a = {k["label"]: k for k in json.load(open(o + "/profile_resnet50_b1_U.json"))["kernels"]}
for k in json.load(open(o + "/profile_resnet50_b1_T.json"))["kernels"]:
    u = a.get(k["label"])
    if u and u["configuration"] != k["configuration"]:
        print(f'{k["label"][:50]:50s} {u["configuration"]:14s} {u["median_ms"]*1e3:6.1f} -> {k["configuration"]:14s} {k["median_ms"]*1e3:6.1f}')
PY
cd /tmp && tar czf $OUT/r2.tgz r2
