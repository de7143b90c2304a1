#!/usr/bin/env bash
# Run 3: run 2's per-shape timings again with vkcnn-bench-conv summing every dispatch of an
# encode (run 2 counted only the first of Winograd's three). After only (before: run 2).
set -uo pipefail
root=$(pwd); R=$root/.dev-wino
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
for n in 1 32; do
  VKCNN_CONVOLUTION_TILE=winograd LD_LIBRARY_PATH=$R/after/lib timeout 50 $R/after/bin/vkcnn-bench-conv conv $R/direct_b$n.txt --fp16 --iterations 10 --tiles winograd,auto > $OUT/after_fp16_b$n.jsonl 2>&1
  echo "shapes b$n rc=$?"
done
