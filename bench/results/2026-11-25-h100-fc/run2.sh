#!/usr/bin/env bash
# FC run 2: the batched fully connected shader (after) against main (before) on vgg16.
set -uo pipefail
root=$PWD; R=$root/.dev-fc
for f in $root/.gl/*.deb; do case "$f" in *validation*) ;; *) dpkg -x "$f" / ;; esac; done; ldconfig
rm -rf /tmp/vl && mkdir -p /tmp/vl && dpkg -x $root/.gl/vulkan-validationlayers_*.deb /tmp/vl
W=/tmp/fcw; mkdir -p $W
if [ ! -f $W/vgg16.onnx ]; then
  PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $W --networks vgg16 --runs 30 > $OUT/pytorch.log 2>&1; echo "pytorch rc=$?"
  cp $W/pytorch.json $OUT/ 2>/dev/null
fi
export VKCNN_PIPELINE_CACHE_DIR=$W/cache
B="env LD_LIBRARY_PATH=$R/before/lib $R/before/bin/vkcnn"
A="env LD_LIBRARY_PATH=$R/after/lib:$R/before/lib $R/after/bin/vkcnn"
(LD_LIBRARY_PATH=$R/after/lib:$R/before/lib timeout 60 $R/after/bin/vkcnn-pipeline-stats > $OUT/pipeline-stats.txt 2>&1; grep -i "fully" $OUT/pipeline-stats.txt)
(cd $root && VKCNN_VALIDATION=1 VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d LD_LIBRARY_PATH=$R/after/lib:$R/before/lib:/tmp/vl/usr/lib/x86_64-linux-gnu timeout 60 $R/after/bin/test_convolution -tc="*fully connected*" > $OUT/test_convolution_fc.txt 2>&1; echo "test rc=$?"; tail -3 $OUT/test_convolution_fc.txt)
agg() { python3 -c '
import sys,re,collections
agg=collections.OrderedDict(); cnt=collections.Counter(); cfg={}
for l in open(sys.argv[1]):
    m=re.match(r"\s*\d+\s+kernel .([^\x27]+).\s+(.*?)\s+([\d.]+)\s+[\d.]+%",l)
    if m:
        n=m.group(1); agg[n]=agg.get(n,0)+float(m.group(3)); cnt[n]+=1; cfg[n]=m.group(2)
    elif "total" in l: print(l.strip())
for n,v in agg.items():
    if "Gemm" in n or "Pool" in n: print(f"{n:40s} {cfg[n]:22s} x{cnt[n]:3d} {v:8.3f}")
' $1; }
for fmt in fp32 fp16; do
  timeout 40 $A profile $W/vgg16.onnx --$fmt --batch 32 --iterations 5 > $OUT/after_profile_${fmt}_b32.txt 2>&1
  echo "== after $fmt b32"; agg $OUT/after_profile_${fmt}_b32.txt
  for mode in legacy batched; do
    VKCNN_FULLY_CONNECTED=$mode timeout 40 $A profile $W/vgg16.onnx --$fmt --batch 1 --iterations 10 > $OUT/after_profile_${fmt}_b1_$mode.txt 2>&1
    echo "== after $fmt b1 $mode"; agg $OUT/after_profile_${fmt}_b1_$mode.txt | grep -E "Gemm|total"
  done
done
for fmt in fp16 fp32; do for b in 32 1; do for side in before after before2 after2; do
  if [ "${side#before}" != "$side" ]; then V=$B; else V=$A; fi
  echo "== $side $fmt b$b"
  timeout 40 $V bench $W/vgg16.onnx --$fmt --batch $b --iterations 30 --input $W/vgg16_b${b}_input.npy --reference $W/vgg16_b${b}_output.npy > $OUT/bench_${side}_${fmt}_b$b.txt 2>&1
  grep -iE "resident|relative|L2" $OUT/bench_${side}_${fmt}_b$b.txt | head -4
done; done; done
