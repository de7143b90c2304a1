#!/usr/bin/env bash
# Run 2 (2026-11-27): the GEMM ceiling with parts taken away, each configuration warmed 0.4 s
# (run 1's short warm-up left the clocks anywhere: a record only), SM clock and power logged;
# then the driver's binaries out of the pipeline caches, disassembled (scripts/bench/pipeline_sass.py):
# the ceiling's tiles and the tiled convolution on 3x3 512->512 @28² b32.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv 2>&1 &
smi=$!
g() { timeout 150 $D/bin/vkcnn-bench-conv gemm $D/bin/gemm_ceiling.spv "$@"; }
t0=$(date +%s)
g 8192 8192 8192 --iterations 25 --modes ${MODES:-0,1,2,3} --pipeline-cache-out /tmp/gemm.cache \
  --gemm-tiles "${TILES:-2x4/4x2/2;2x2/4x4/2;4x2/4x4/1;2x4/4x4/1;2x2/2x2/2}" > $OUT/gemm.jsonl 2> $OUT/gemm.err
echo "gemm rc=$? $(( $(date +%s) - t0 )) s"
printf 'conv512 32 512 28 28 512 3 3 1 1 1 1 1 1 1\nconv64 32 64 56 56 256 1 1 1 1 0 0 1 1 1\n' > /tmp/shape.txt
VKCNN_PIPELINE_CACHE_DIR=/tmp/convcache timeout 100 $D/bin/vkcnn-bench-conv conv /tmp/shape.txt --fp16 \
  --iterations 20 --tiles ${CONV_TILES:-128x128,64x64} > $OUT/conv.jsonl 2> $OUT/conv.err
echo "conv rc=$? $(( $(date +%s) - t0 )) s"
kill $smi
ls -la /tmp/convcache > $OUT/convcache.txt 2>&1
python3 scripts/bench/pipeline_sass.py /tmp/gemm.cache --out $OUT/sass-gemm > $OUT/sass-gemm.txt 2>&1
python3 scripts/bench/pipeline_sass.py /tmp/convcache/* --out $OUT/sass-conv > $OUT/sass-conv.txt 2>&1
cat $OUT/sass-gemm.txt $OUT/sass-conv.txt | cut -c1-400
python3 - $OUT/gemm.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    j = json.loads(line)
    if "tflops" in j: print(j["gemm"], j["warps"], j["fragments"], j["k"], "mode", j["mode"], j["tflops"], j["rel_l2"])
    else: print(line.strip())
PY
cat $OUT/conv.jsonl; tail -3 $OUT/gemm.err $OUT/conv.err
# Keep the ELF images small enough to come back
find $OUT -name '*.elf' -size +2M -delete
