#!/usr/bin/env bash
# Session 34, run 9: the tiles' epilogue operations fixed in the pipeline at batch 1
# (VKCNN_CONVOLUTION_EPILOGUE=inline-fixed: the neuron's few instructions instead of the switch
# over every type, no residual test; the default keeps them in the push constants below two waves
# of workgroups so that a network keeps one pipeline per tile). A = default, I = inline-fixed,
# A I I A: vgg16 (every layer ReLU: no more pipelines), resnet50, densenet121, mobilenet_v2 at
# batch 1, float16, levels and resident. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r9; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r9.tgz r9); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
work=/tmp/m9; mkdir -p $work
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work --networks vgg16,resnet50,densenet121,mobilenet_v2 --runs 3 --warmup 1 --dtypes fp16 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
cond() { [ $1 = A ] && echo "" || echo inline-fixed; }
timeout 60 $D/bin/vkcnn bench $work/resnet50.onnx --fp16 --iterations 100 > /dev/null 2>&1
i=0
for l in A I I A; do
  i=$((i + 1))
  for m in vgg16 resnet50 densenet121 mobilenet_v2; do
    VKCNN_CONVOLUTION_EPILOGUE=$(cond $l) timeout 60 $D/bin/vkcnn profile $work/$m.onnx --fp16 --iterations 30 --levels > $R/levels_${l}_${m}_$i.txt 2>&1
    VKCNN_CONVOLUTION_EPILOGUE=$(cond $l) timeout 60 $D/bin/vkcnn bench $work/$m.onnx --fp16 --iterations 200 --input $work/${m}_b1_input.npy --reference $work/${m}_b1_output.npy > $R/${l}_${m}_$i.txt 2>&1
    echo "$l $m levels $(tail -1 $R/levels_${l}_${m}_$i.txt | awk '{print $4, $8, $9}') | $(grep -E 'resident|relative' $R/${l}_${m}_$i.txt | awk '{print $4, $NF}' | tr '\n' ' ')"
  done
done
echo "done $(( $(date +%s) - t0 )) s"; snap
