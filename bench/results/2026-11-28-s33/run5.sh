#!/usr/bin/env bash
# Session 33, run 5 (two calls: `run5.sh 1` and `run5.sh 2`, six networks each): the final code
# (1d362f2: waits that poll, fc6 in one wave, fc7 with 8 rows) on every benchmark network in
# float16 at batch 1 and 32, resident, PyTorch's eager and CUDA graph in the same run (float16
# only). Under validation in the first call: test_command_buffer, test_context, test_session,
# test_graph. Carried: .device-build, .gl.
set -uo pipefail
part=$1
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r5; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r5_$part.tgz r5); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
$D/bin/vkcnn info | grep -E "waits|bit stores"
case $part in
  1) nets=resnet18,resnet50,mobilenet_v2,squeezenet1_1,vgg16,googlenet;;
  2) nets=densenet121,shufflenet_v2_x1_0,efficientnet_b0,mobilenet_v3_large,resnext50_32x4d,regnet_y_800mf;;
esac
work=/tmp/m$part; mkdir -p $work
if [ $part = 1 ]; then
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_command_buffer test_context test_session test_graph; do
   timeout 200 $D/bin/$t > $R/$t.txt 2>&1
   echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$t.txt | head -2 | tr '\n' ' ')"
 done) &
fi
PYTHONUNBUFFERED=1 timeout 330 python3 scripts/bench/pytorch_side.py $work --networks $nets --runs 30 --warmup 5 --dtypes fp16 > $R/pytorch_$part.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait; cp $work/pytorch.json $R/pytorch_$part.json; snap
for n in ${nets//,/ }; do
  for b in 1 32; do
    it=200; [ $b = 32 ] && it=30
    timeout 60 $D/bin/vkcnn bench $work/$n.onnx --fp16 --batch $b --iterations $it --input $work/${n}_b${b}_input.npy \
      --reference $work/${n}_b${b}_output.npy --json $R/${n}_fp16_b$b.json > $R/${n}_fp16_b$b.txt 2>&1 || echo "FAILED $n $b"
  done; snap
done
python3 - $R $part <<'PY'
import json, sys
o, part = sys.argv[1], sys.argv[2]
r = json.load(open(f"{o}/pytorch_{part}.json"))["networks"]
for n, e in r.items():
    for b in (1, 32):
        try: j = json.load(open(f"{o}/{n}_fp16_b{b}.json"))
        except Exception: print(n, b, "no vkcnn result"); continue
        p = e[f"fp16_b{b}"]; v = j["resident_median_ms"]
        print(f"{n:20s} b{b:<2d} vkcnn {v:.3f}  eager {p['eager']['median_ms']:.3f}  graph {p['graph']['median_ms']:.3f}  "
              f"eager/vkcnn {p['eager']['median_ms']/v:.2f}  graph/vkcnn {p['graph']['median_ms']/v:.2f}  "
              f"L2 {j.get('relative_l2', 0):.5f} (torch fp16 {e.get(f'fp16_b{b}_relative_l2', 0):.5f})")
PY
echo "done $(( $(date +%s) - t0 )) s"; snap
