#!/usr/bin/env bash
# Session 33, run 7: densenet121's batch-1 dense layers (shapes_densenet_b1.txt) with every
# configuration that could take them, weights and source from DRAM (--cold), 1d362f2. conv2 has
# 32 output channels: the latency model's candidates are 64 or 128 wide (half the columns padding);
# the narrow tiles (64x32, 32x64's neighbours) are not in it. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r7.tgz r7); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
S=bench/results/2026-11-28-s33/shapes_densenet_b1.txt
t2=auto,64x32,64x32s2,64x32s4,64x32s8,128x32,128x32s2,64x16,64x16s2,32x64,32x64s2,32x64s4,64x64p2,64x64p2s2,64x64p2s4,matrix_small,matrix_medium
grep -E '^c2' $S > /tmp/c2.txt; grep -E '^c1' $S > /tmp/c1.txt
timeout 280 $D/bin/vkcnn-bench-conv conv /tmp/c2.txt --fp16 --cold --tiles $t2 --warmup 0.1 > $R/c2.txt 2>&1; echo "c2 rc=$? $(( $(date +%s) - t0 )) s"; snap
t1=auto,64x32,64x32s4,64x64p2s2,64x64p2s4,64x64p2s8,64x128w8p2s2,64x128w8p2s4,64x128w8p2s8,32x64s4,32x64s8,matrix_small,matrix_medium
timeout 250 $D/bin/vkcnn-bench-conv conv /tmp/c1.txt --fp16 --cold --tiles $t1 --warmup 0.1 > $R/c1.txt 2>&1; echo "c1 rc=$? $(( $(date +%s) - t0 )) s"
cat $R/c2.txt $R/c1.txt | grep -v "^#" | head -80
echo "done $(( $(date +%s) - t0 )) s"; snap
