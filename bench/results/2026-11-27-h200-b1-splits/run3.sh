#!/usr/bin/env bash
# Session 20, run 3 (diagnostic, main's library e90b517): vgg16 at batch 1 spends 126 us in each
# 3x3 512->512 @28² layer where the same layer takes 89-97 alone or in chains (run 2). Is it the
# weights coming from DRAM (fc6's 205 MB evicts L2 every inference)? `vkcnn profile` of vgg16 b1
# with every convolution forced to one configuration: one chunk in flight (64x64, 32x64,
# 128x128s4) against two (64x64p2, 128x128p2, 64x128w8p2). Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r3; mkdir -p $R /tmp/m
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-r3
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py /tmp/m --networks vgg16 --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
python3 bench/results/2026-11-27-h200-b1-splits/chain_models.py /tmp/m > $R/export.log 2>&1 || tail $R/export.log
echo "export $(( $(date +%s) - t0 )) s"
for t in auto 64x64 64x64p2 32x64 128x128s4 128x128p2 64x128w8p2 auto; do
  if [ $t = auto ]; then unset VKCNN_CONVOLUTION_TILE; else export VKCNN_CONVOLUTION_TILE=$t; fi
  timeout 60 $D/bin/vkcnn profile /tmp/m/vgg16.onnx --fp16 --iterations 30 > $R/profile_vgg16_$t.txt 2>&1
  timeout 60 $D/bin/vkcnn profile /tmp/m/vggtail.onnx --fp16 --iterations 30 > $R/profile_vggtail_$t.txt 2>&1
  echo "== $t: $(grep -h 'features.1[79]/Conv\|features.21/Conv\|features.2[468]/Conv\|total' $R/profile_vgg16_$t.txt | awk '{print $4, $5}' | tr '\n' ' ')"
  echo "   tail: $(grep -h 'Conv\|total' $R/profile_vggtail_$t.txt | awk '{print $4, $5}' | tr '\n' ' ')"
done
unset VKCNN_CONVOLUTION_TILE
for i in 1 2; do timeout 60 $D/bin/vkcnn bench /tmp/m/vgg16.onnx --fp16 --batch 1 --iterations 40 --json $R/bench_vgg16_$i.json > $R/bench_vgg16_$i.txt 2>&1; done
grep -h "resident\|gpu" $R/bench_vgg16_*.txt | head -6
cd /tmp && tar czf $OUT/r3.tgz r3; ls -la $OUT
