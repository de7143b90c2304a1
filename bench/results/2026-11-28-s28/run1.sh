#!/usr/bin/env bash
# Session 28, run 1. Where batch 32's resident time goes: `vkcnn profile --levels` (timestamps at
# the barriers only, so a level's dispatches run side by side as in an inference) on resnet50,
# resnext50_32x4d, vgg16 and resnet18 at batch 32 and vgg16, resnet18 at batch 1, beside the
# per-dispatch profile and `vkcnn bench`'s resident time; test_command_buffer (the new levels case)
# under validation. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 100 $D/bin/test_command_buffer > $R/test_command_buffer.txt 2>&1
 echo "test_command_buffer rc=$? $(tail -3 $R/test_command_buffer.txt | head -2 | tr '\n' ' ')")
export LD_LIBRARY_PATH=$D/lib
work=/tmp/ab; mkdir -p $work/models
nets=resnet50,resnext50_32x4d,vgg16,resnet18
PYTHONUNBUFFERED=1 timeout 300 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
for nb in resnet50:32 resnext50_32x4d:32 vgg16:32 resnet18:32 vgg16:1 resnet18:1 resnet50:1; do
  n=${nb%:*}; b=${nb#*:}
  timeout 60 $D/bin/vkcnn profile $work/models/$n.onnx --fp16 --batch $b --iterations 10 --levels > $R/levels_${n}_b$b.txt 2>&1; tail -1 $R/levels_${n}_b$b.txt
  timeout 60 $D/bin/vkcnn profile $work/models/$n.onnx --fp16 --batch $b --iterations 10 > $R/profile_${n}_b$b.txt 2>&1; tail -1 $R/profile_${n}_b$b.txt
  timeout 60 $D/bin/vkcnn bench $work/models/$n.onnx --fp16 --batch $b --iterations 20 --input $work/models/${n}_b${b}_input.npy \
    --reference $work/models/${n}_b${b}_output.npy --json $R/bench_${n}_b$b.json > $R/bench_${n}_b$b.txt 2>&1
  python3 -c "import json; j=json.load(open('$R/bench_${n}_b$b.json')); print('$n b$b resident', j['resident_median_ms'], 'L2', j.get('relative_l2'))"
done
python3 -c "import json; r=json.load(open('$R/pytorch.json'))['networks']; print({n: {k: (v['eager']['median_ms'], v['graph']['median_ms']) for k, v in x.items() if k.startswith('fp16')} for n, x in r.items()})"
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r1.tgz r1
