#!/usr/bin/env bash
# Session 24, run 4. Fully connected batches on the matrix units: workgroups a multiprocessor
# (VKCNN_FULLY_CONNECTED=matrixN/TILE) in vgg16's and resnet50's profiles at batch 32; the fully
# connected cases (every tile forced) and test_graph under validation.
# Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc='fully connected*' > $R/test_fc.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_fc.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16,resnet50 --runs 3 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
echo "models $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=$D/lib
for round in 1 2; do for m in tensor matrix1/64x64 matrix2/64x64 matrix1/32x128 matrix2/32x128 matrix4/32x128 matrix1/16x128 matrix2/16x128 matrix4/16x128; do for net in vgg16 resnet50; do
  VKCNN_FULLY_CONNECTED=$m timeout 60 $D/bin/vkcnn profile $work/models/$net.onnx --fp16 --batch 32 --iterations 10 --json $R/profile_${net}_${m//\//-}_$round.json > /dev/null 2>&1
done; done; done
echo "profiles $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/profile_*.json")):
    net, m, r = f.split("/")[-1][8:-5].rsplit("_", 2); m = m.replace("-", "/")
    j = json.load(open(f))
    for k in j["kernels"]:
        if "Gemm" in k["label"] and k["label"].startswith("kernel"):
            part = " reduce" if "splits added" in k["configuration"] else ""
            rows[(net, k["label"].split("'")[1] + part)][m].append(k["median_ms"])
    rows[(net, "total")][m].append(j["total_ms"])
ms = ["tensor", "matrix1/64x64", "matrix2/64x64", "matrix1/32x128", "matrix2/32x128", "matrix4/32x128", "matrix1/16x128", "matrix2/16x128", "matrix4/16x128"]
print("layer | " + " | ".join(ms))
for (net, lab), v in rows.items():
    print(f"{net} {lab} | " + " | ".join("/".join(f"{x:.4f}" for x in v[m]) for m in ms))
PY
cd /tmp && tar czf $OUT/r4.tgz r4; ls -la $OUT
