#!/usr/bin/env bash
# Session 20, run 2 (diagnostic, main's library e90b517): does a layer cost more inside a network
# than alone? `vkcnn profile` of small chains of vgg16's 3x3 512->512 @28² (chain_models.py), at
# batch 1, beside vkcnn-bench-conv's time for the same shape alone. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R /tmp/m
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r2
python3 bench/results/2026-11-27-h200-b1-splits/chain_models.py /tmp/m > $R/export.log 2>&1 || tail $R/export.log
echo "export $(( $(date +%s) - t0 )) s"
for m in same4 pooled vggtail; do
  for r in 1 2; do
    timeout 60 $D/bin/vkcnn profile /tmp/m/$m.onnx --fp16 --iterations 30 > $R/profile_${m}_$r.txt 2>&1
  done
  echo "== $m"; cat $R/profile_${m}_2.txt
done
printf 'c512_28 1 512 28 28 512 3 3 1 1 1 1 1 1 1\n' > /tmp/s.txt
timeout 60 $D/bin/vkcnn-bench-conv conv /tmp/s.txt --fp16 --iterations 30 --warmup 0.2 --tiles auto,64x64 > $R/alone.txt 2>&1
cat $R/alone.txt
cd /tmp && tar czf $OUT/r2.tgz r2; ls -la $OUT
