#!/usr/bin/env bash
# Session 33, run 9: the latency model's data again (session 20's was taken before the split-k
# changes of sessions 30-31): the 24 batch-1 shapes it takes (shapes_latency_b1.txt), each of its
# three tiles split 1-16 ways, weights and source from DRAM (--cold), 1d362f2. Carried:
# .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r9; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r9.tgz r9); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
t=auto; for x in 64x64p2 64x128w8p2 128x128; do t=$t,$x,${x}s2,${x}s4,${x}s8,${x}s16; done
timeout 500 $D/bin/vkcnn-bench-conv conv bench/results/2026-11-28-s33/shapes_latency_b1.txt --fp16 --cold --tiles $t --warmup 0.1 > $R/latency.jsonl 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s, $(grep -c '^{' $R/latency.jsonl) timings"
echo "done $(( $(date +%s) - t0 )) s"; snap
