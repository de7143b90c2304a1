#!/usr/bin/env bash
# Session 34, run 10: the tiles' epilogue operations fixed in every pipeline (F) against only from
# two waves of workgroups on (O = 6f112d4), on the batch-1 networks run 9 did not time (resnet18,
# googlenet, efficientnet_b0, mobilenet_v3_large, regnet_y_800mf, resnext50_32x4d) and resnet50 at
# batch 32; float16, resident, relative L2 against PyTorch's float32, O F F O. Carried:
# .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r10; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r10.tgz r10); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
work=/tmp/m10; mkdir -p $work
nets="resnet18 googlenet efficientnet_b0 mobilenet_v3_large regnet_y_800mf resnext50_32x4d"
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work --networks ${nets// /,},resnet50 --runs 3 --warmup 1 --dtypes fp16 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
LD_LIBRARY_PATH=$(lib O) timeout 60 $D/bin/vkcnn bench $work/resnet50.onnx --fp16 --iterations 100 > /dev/null 2>&1
i=0
for l in O F F O; do
  i=$((i + 1))
  for m in $nets resnet50; do
    b=1; [ $m = resnet50 ] && b=32
    LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 60 $D/bin/vkcnn bench $work/$m.onnx --fp16 --batch $b --iterations 150 \
      --input $work/${m}_b${b}_input.npy --reference $work/${m}_b${b}_output.npy > $R/${l}_${m}_b${b}_$i.txt 2>&1
    echo "$l $m b$b $(grep -E 'resident' $R/${l}_${m}_b${b}_$i.txt | grep -o 'median [0-9.]*') $(grep -o 'reference: [0-9.e-]*' $R/${l}_${m}_b${b}_$i.txt) $(grep -o '[0-9]* dispatches' $R/${l}_${m}_b${b}_$i.txt | head -1)"
  done
  snap
done
echo "done $(( $(date +%s) - t0 )) s"; snap
