#!/usr/bin/env bash
# Pipeline statistics of every vkcnn pipeline on the device (bench/pipeline_stats.cpp).
set -uo pipefail
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
R=$(pwd)/.dev-audit
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/device.txt
for b in ${1:-before}; do
  timeout 120 $R/$b/vkcnn-pipeline-stats > $OUT/pipeline-stats-$b.txt 2>&1; echo "$b rc=$?"
  grep -c "" $OUT/pipeline-stats-$b.txt
done
