#!/usr/bin/env bash
# FC run 3: the source staged in shared memory, the batched shader at batch 1 too (after) against
# main (before) and run 2's build (after1) on vgg16; resnet50's classifier at batch 1.
set -uo pipefail
root=$PWD; R=$root/.dev-fc
for f in $root/.gl/*.deb; do case "$f" in *validation*) ;; *) dpkg -x "$f" / ;; esac; done; ldconfig
rm -rf /tmp/vl && mkdir -p /tmp/vl && dpkg -x $root/.gl/vulkan-validationlayers_*.deb /tmp/vl
W=/tmp/fcw; mkdir -p $W; O=/tmp/fco; mkdir -p $O
if [ ! -f $W/resnet50.onnx ]; then
  PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $W --networks vgg16,resnet50 --runs 20 > $O/pytorch.log 2>&1; echo "pytorch rc=$?"
  cp $W/pytorch.json $O/ 2>/dev/null
fi
export VKCNN_PIPELINE_CACHE_DIR=$W/cache
B="env LD_LIBRARY_PATH=$R/before/lib $R/before/bin/vkcnn"
A1="env LD_LIBRARY_PATH=$R/after1/lib:$R/before/lib $R/after1/bin/vkcnn"
A="env LD_LIBRARY_PATH=$R/after/lib:$R/before/lib $R/after/bin/vkcnn"
(LD_LIBRARY_PATH=$R/after/lib:$R/before/lib timeout 60 $R/after/bin/vkcnn-pipeline-stats > $O/pipeline-stats.txt 2>&1; grep -i "fully_connected_batched" $O/pipeline-stats.txt)
(cd $root && VKCNN_VALIDATION=1 VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d LD_LIBRARY_PATH=$R/after/lib:$R/before/lib:/tmp/vl/usr/lib/x86_64-linux-gnu timeout 60 $R/after/bin/test_convolution -tc="*fully connected*" > $O/test_convolution_fc.txt 2>&1; echo "test rc=$?"; tail -3 $O/test_convolution_fc.txt)
agg() { python3 -c '
import sys,re,collections
agg=collections.OrderedDict(); cnt=collections.Counter(); cfg={}
for l in open(sys.argv[1]):
    m=re.match(r"\s*\d+\s+kernel .([^\x27]+).\s+(.*?)\s+([\d.]+)\s+[\d.]+%",l)
    if m:
        n=m.group(1); agg[n]=agg.get(n,0)+float(m.group(3)); cnt[n]+=1; cfg[n]=m.group(2)
    elif "total" in l: print(l.strip())
for n,v in agg.items():
    if "Gemm" in n or "fc" in n: print(f"{n:40s} {cfg[n]:22s} x{cnt[n]:3d} {v:8.3f}")
' $1; }
for fmt in fp32 fp16; do for b in 32 1; do
  timeout 40 $A profile $W/vgg16.onnx --$fmt --batch $b --iterations 10 > $O/after_profile_vgg16_${fmt}_b$b.txt 2>&1
  echo "== after vgg16 $fmt b$b"; agg $O/after_profile_vgg16_${fmt}_b$b.txt
done
  for mode in legacy batched; do
    VKCNN_FULLY_CONNECTED=$mode timeout 40 $A profile $W/resnet50.onnx --$fmt --batch 1 --iterations 20 > $O/after_profile_resnet50_${fmt}_b1_$mode.txt 2>&1
    echo "== after resnet50 $fmt b1 $mode"; agg $O/after_profile_resnet50_${fmt}_b1_$mode.txt
  done
done
for fmt in fp16 fp32; do for b in 32 1; do
  sides="before after after1 before2 after2"; [ $b = 1 ] && sides="before after"
  for side in $sides; do
  case $side in before*) V=$B;; after1) V=$A1;; *) V=$A;; esac
  echo "== $side $fmt b$b"
  timeout 40 $V bench $W/vgg16.onnx --$fmt --batch $b --iterations 30 --input $W/vgg16_b${b}_input.npy --reference $W/vgg16_b${b}_output.npy > $O/bench_${side}_${fmt}_b$b.txt 2>&1
  grep -iE "resident|relative" $O/bench_${side}_${fmt}_b$b.txt | head -4
done; done; done
for side in before after; do
  V=$B; [ $side = after ] && V=$A
  echo "== $side resnet50 fp16 b1"
  timeout 40 $V bench $W/resnet50.onnx --fp16 --batch 1 --iterations 50 --input $W/resnet50_b1_input.npy --reference $W/resnet50_b1_output.npy 2>&1 | grep -iE "resident|relative"
done
(cd $O && tar czf $OUT/run3.tgz *)
