#!/usr/bin/env bash
# Session 21, run 7: every pipeline's statistics on the final tip (registers, local memory; the
# portable tiles' occupancy). Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build
R=/tmp/r7; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
LD_LIBRARY_PATH=$D/lib timeout 200 $D/bin/vkcnn-pipeline-stats --max-local 64 --variants f16,f32 > $R/pipeline-stats.txt 2>&1
echo "rc=$?"; grep -i "gemm\|local" $R/pipeline-stats.txt | head -30
cd /tmp && tar czf $OUT/r7.tgz r7
