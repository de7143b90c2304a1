#!/usr/bin/env bash
# Session 34, run 11: as run 10 (F = the epilogue operations fixed in every pipeline, O = only from
# two waves on) on squeezenet1_1 and shufflenet_v2_x1_0 at batch 1, vgg16 and densenet121 at batch
# 32; float16, resident, O F F O. Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r11; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r11.tgz r11); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
work=/tmp/m11; mkdir -p $work
nets="squeezenet1_1 shufflenet_v2_x1_0"
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work --networks ${nets// /,},vgg16,densenet121 --runs 3 --warmup 1 --dtypes fp16 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
LD_LIBRARY_PATH=$(lib O) timeout 60 $D/bin/vkcnn bench $work/squeezenet1_1.onnx --fp16 --iterations 100 > /dev/null 2>&1
i=0
for l in O F F O; do
  i=$((i + 1))
  for m in $nets vgg16 densenet121; do
    b=1; case $m in vgg16|densenet121) b=32;; esac
    LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 60 $D/bin/vkcnn bench $work/$m.onnx --fp16 --batch $b --iterations 150 \
      --input $work/${m}_b${b}_input.npy --reference $work/${m}_b${b}_output.npy > $R/${l}_${m}_b${b}_$i.txt 2>&1
    echo "$l $m b$b $(grep -E 'resident' $R/${l}_${m}_b${b}_$i.txt | grep -o 'median [0-9.]*') $(grep -o 'reference: [0-9.e-]*' $R/${l}_${m}_b${b}_$i.txt) $(grep -o '[0-9]* dispatches' $R/${l}_${m}_b${b}_$i.txt | head -1)"
  done
  snap
done
echo "done $(( $(date +%s) - t0 )) s"; snap
