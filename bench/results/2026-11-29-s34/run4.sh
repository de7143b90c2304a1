#!/usr/bin/env bash
# Session 34, run 4: as run 3 with L = the affine loaded with each texel (registers) and applied
# when the texels are stored, against F = at fetch (0077341). Carried: .device-build, .gl,
# .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r4; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r4.tgz r4); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib L)
 timeout 250 $D/bin/test_convolution "-tc=*source?activation*,*every?portable?GEMM*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')") &
work=/tmp/m; mkdir -p $work
[ -f $work/densenet121.onnx ] || PYTHONUNBUFFERED=1 timeout 250 python3 scripts/bench/pytorch_side.py $work --networks densenet121 --runs 5 --warmup 2 --dtypes fp32 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
wait; snap
M=$work/densenet121.onnx
LD_LIBRARY_PATH=$(lib L) timeout 60 $D/bin/vkcnn bench $M --fp32 --batch 32 --iterations 10 > /dev/null 2>&1
i=0
for b in 32 1; do
  it=200; [ $b = 32 ] && it=20
  for l in F L L F; do
    i=$((i + 1))
    LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 120 $D/bin/vkcnn bench $M --fp32 --batch $b --iterations $it \
      --input $work/densenet121_b${b}_input.npy --reference $work/densenet121_b${b}_output.npy --json $R/${l}_fp32_b${b}_$i.json > $R/${l}_fp32_b${b}_$i.txt 2>&1
    echo "$l b$b $(grep -E 'resident|relative' $R/${l}_fp32_b${b}_$i.txt | tr '\n' ' ')"
  done; snap
done
for l in F L; do
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 120 $D/bin/vkcnn profile $M --fp32 --batch 32 --iterations 5 > $R/dispatches_${l}_fp32_b32.txt 2>&1
  echo "$l $(tail -1 $R/dispatches_${l}_fp32_b32.txt)"
done
echo "done $(( $(date +%s) - t0 )) s"; snap
