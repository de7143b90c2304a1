#!/usr/bin/env bash
# Session 34, run 7: what a dispatch costs, part by part (run 6: barriers cost nothing measurable;
# ~2.9 us a dispatch either way). One library per variant (variants/): H = main, N = no barriers
# (UNSAFE), P = a pipeline already bound is not bound again, X = push constants once per command
# buffer (UNSAFE: wrong results), Y = one descriptor set bound per command buffer (UNSAFE). Chains
# of 16 and 64 Tanh, resnet50 at batch 1, float16, resident, H P X Y N N Y X P H.
# Carried: .device-build, .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r7.tgz r7); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
work=/tmp/floor; mkdir -p $work
[ -f $work/chain_4_8_8_64.onnx ] || PYTHONUNBUFFERED=1 timeout 200 python3 bench/results/2026-11-29-s34/floor.py $work > $R/floor.txt 2>&1
[ -f $work/resnet50.onnx ] || PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work --networks resnet50 --runs 3 --warmup 1 --dtypes fp16 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
models="chain_4_8_8_16 chain_4_8_8_64 chain_512_28_28_16 chain_512_28_28_64 resnet50"
LD_LIBRARY_PATH=$(lib H) timeout 60 $D/bin/vkcnn bench $work/resnet50.onnx --fp16 --iterations 100 > /dev/null 2>&1
i=0
for l in H P X Y N N Y X P H; do
  i=$((i + 1))
  for m in $models; do
    LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 60 $D/bin/vkcnn bench $work/$m.onnx --fp16 --iterations 200 --json $R/${l}_${m}_$i.json > $R/${l}_${m}_$i.txt 2>&1
    echo "$l $m $(grep -E 'resident' $R/${l}_${m}_$i.txt)"
  done
done
echo "done $(( $(date +%s) - t0 )) s"; snap
