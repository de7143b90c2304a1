#!/usr/bin/env bash
# 2026-11-27: the selector counts a split batch's pieces side by side (Convolution::
# imagesSideBySide, set by the Graph). test_convolution's new case and the forced configurations
# under validation; then B (before: .dev-ab/before/lib) against A (.device-build) at batch 32,
# B A A B, 30 iterations, PyTorch in the same run. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; B=$root/.dev-ab/before/lib; t0=$(date +%s)
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_convolution -tc="*side by side*,*matrix-unit configuration*" > $OUT/test_convolution.txt 2>&1
 echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $OUT/test_convolution.txt
 timeout 100 $D/bin/test_graph > $OUT/test_graph.txt 2>&1; echo "test_graph rc=$?"; tail -1 $OUT/test_graph.txt)
work=/tmp/ab; mkdir -p $work/models
nets=${NETS:-resnet50,resnext50_32x4d,densenet121,vgg16}
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 30 > $work/pytorch.log 2>&1 || tail -5 $work/pytorch.log
cp $work/models/pytorch.json $OUT/ 2>/dev/null
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # build net tag
  local lib=$D/lib; [ $1 = B ] && lib=$B:$D/lib
  LD_LIBRARY_PATH=$lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 90 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch 32 --iterations 30 --input $work/models/${2}_b32_input.npy \
    --reference $work/models/${2}_b32_output.npy --json $work/${1}_${2}_$3.json > $work/${1}_${2}_$3.txt 2>&1 || echo "FAILED $1 $2"
}
for net in ${nets//,/ }; do run B $net 1; run A $net 1; run A $net 2; run B $net 2; done
echo "nets $(( $(date +%s) - t0 )) s"
LD_LIBRARY_PATH=$D/lib $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 3 > $OUT/profile_A_resnet50_b32.txt 2>&1
python3 - $work <<'PY'
import json, glob, os, sys, collections
w = sys.argv[1]
t = json.load(open(f"{w}/models/pytorch.json"))
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{w}/[AB]_*.json")):
    b, rest = os.path.basename(f)[:-5].split("_", 1)
    j = json.load(open(f)); rows[rest.rsplit("_", 1)[0]][b].append((j["resident_median_ms"], j.get("relative_l2")))
print("| network b32 fp16 | B ms | A ms | A/B (best of each) | rel L2 B / A |")
print("|---|---|---|---|---|")
for k, v in rows.items():
    b = sorted(x[0] for x in v["B"]); a = sorted(x[0] for x in v["A"])
    print(f"| {k} | {b} | {a} | {a[0] / b[0]:.3f} | {v['B'][0][1]} / {v['A'][0][1]} |")
print(json.dumps(t)[:1500])
PY
(cd $work && tar czf $OUT/nets.tgz *.json *.txt pytorch.log 2>/dev/null)
