#!/usr/bin/env bash
# Session 33, run 1: how much of a batch-1 network's resident time is the wait for the fence.
# S0 = VKCNN_WAIT_SPIN_US=0 (vkWaitForFences at once, main's behaviour), S2 = 2000 (the fence polled
# for up to 2 ms first); the same library. A B B A, 200 resident runs each; PyTorch (eager and
# CUDA graph, CUDA events) in the same run. Under validation: the command buffer, context and
# session suites with the poll on. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r1.tgz r1); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1 VKCNN_WAIT_SPIN_US=100
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_command_buffer test_context test_session; do
   timeout 200 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done) &
nets=resnet18,resnet50,mobilenet_v2,squeezenet1_1,efficientnet_b0
PYTHONUNBUFFERED=1 timeout 300 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 50 --warmup 10 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait; snap
spin() { case $1 in S0) echo 0;; S2) echo 2000;; esac; }
run() {  # condition net batch round
  VKCNN_WAIT_SPIN_US=$(spin $1) timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 200 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for n in ${nets//,/ }; do
  i=0; for l in S0 S2 S2 S0; do i=$((i+1)); run $l $n 1 $i; done; snap; done
echo "networks $(( $(date +%s) - t0 )) s"
cp $work/models/pytorch.json $R/ 2>/dev/null
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(o + "/*_*_fp16_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append((j["resident_median_ms"], j["end_to_end_median_ms"], j["gpu_median_ms"]))
try: r = json.load(open(o + "/pytorch.json"))["networks"]
except Exception: r = {}
for k, v in t.items():
    n, fmt, b = k.rsplit("_", 2); p = r.get(n, {}).get(f"{fmt}_{b}", {})
    g = p.get("graph", {}).get("median_ms", 0)
    m = {x: [statistics.mean(z[i] for z in y) for i in range(3)] for x, y in v.items()}
    print(f"{k}: resident S0 {m['S0'][0]:.3f} S2 {m['S2'][0]:.3f} ({m['S2'][0]/m['S0'][0]:.3f}); end-to-end S0 {m['S0'][1]:.3f} S2 {m['S2'][1]:.3f}; GPU {m['S0'][2]:.3f}; graph {g:.3f};",
          {x: [round(z[0], 3) for z in y] for x, y in v.items()})
PY
echo "done $(( $(date +%s) - t0 )) s"; snap
