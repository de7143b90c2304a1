#!/usr/bin/env bash
# Session 33, run 2: fc6 at batch 1 (vgg16's classifier). H = 3009eac (main), X = H with the one-image
# path's shared array a quarter the size (256 vec4 instead of 1024: shared memory no limit on the
# workgroups a multiprocessor holds). The fully connected pipelines' registers and shared memory
# (vkcnn-pipeline-stats, both builds); vgg16 b1 levels H X X H after a warm-up and resident times.
# Under validation: test_context (an adopted device's bit stores on NVIDIA), test_command_buffer
# (waits that poll) and the fully connected cases with X. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r2.tgz r2); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
for l in H X; do LD_LIBRARY_PATH=$(lib $l) $root/.dev-ab/$l/bin/vkcnn-pipeline-stats --variants f16bits > $R/stats_$l.txt 2>&1; echo "$l: $(grep -E 'fully_connected_batched_half_f16bits r8' $R/stats_$l.txt | tr '\n' ' ')"; done
work=/tmp/ab; mkdir -p $work/models
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib X)
 for t in test_context test_command_buffer "test_convolution -tc=*fully?connected*"; do
   set -- $t; timeout 200 $D/bin/$t > $R/$1.txt 2>&1
   echo "$1 rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/$1.txt | head -2 | tr '\n' ' ')"
 done) &
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16 --runs 50 --warmup 10 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait; snap
LD_LIBRARY_PATH=$(lib H) timeout 40 $D/bin/vkcnn bench $work/models/vgg16.onnx --fp16 --batch 1 --iterations 50 > /dev/null 2>&1  # warm-up
i=0
for l in H X X H; do
  i=$((i + 1))
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 1 --iterations 30 --levels > $R/levels_${l}_vgg16_b1_$i.txt 2>&1
  echo "$l $(grep -E 'classifier' $R/levels_${l}_vgg16_b1_$i.txt | awk '{printf "%s ", $2}') $(tail -1 $R/levels_${l}_vgg16_b1_$i.txt)"
done
for l in H X X H; do
  i=$((i + 1))
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 60 $D/bin/vkcnn bench $work/models/vgg16.onnx --fp16 --batch 1 --iterations 200 \
    --input $work/models/vgg16_b1_input.npy --reference $work/models/vgg16_b1_output.npy --json $R/${l}_vgg16_fp16_b1_$i.json > $R/${l}_vgg16_fp16_b1_$i.txt 2>&1
  echo "$l $(grep -E 'resident|relative' $R/${l}_vgg16_fp16_b1_$i.txt | tr '\n' ' ')"
done
cp $work/models/pytorch.json $R/ 2>/dev/null
python3 -c "import json; r=json.load(open('$R/pytorch.json'))['networks']['vgg16']; print('pytorch vgg16', {k: (v['eager']['median_ms'], v['graph']['median_ms']) for k, v in r.items() if isinstance(v, dict) and 'eager' in v})"
echo "done $(( $(date +%s) - t0 )) s"; snap
