#!/usr/bin/env bash
# Session 20, run 7. N = this branch: the split reduction's last workgroup loads 2 partial tiles
# at a time (SPLIT_LOADS), and one image's fully connected steps ahead as a specialization
# constant (VKCNN_FULLY_CONNECTED_STEPS); H = the branch before them (defa958, .dev-ab/H).
# Tests under validation; split layers forced, cold, H N; vgg16 b1 profiles with 1, 2, 4, 8 steps;
# networks at b1 H N N H. Carried: .device-build (N), .gl, .dev-ab.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r7; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 timeout 150 $D/bin/test_convolution -tc="*matrix-unit configuration*,*split over workgroups*,*pieces of a batch*,*the batched shader*,*ully connected over*" > $R/test_convolution.txt 2>&1
 echo "test_convolution rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution.txt | head -2 | tr '\n' ' ')"
 timeout 100 $D/bin/test_graph > $R/test_graph.txt 2>&1
 echo "test_graph rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_graph.txt | head -2 | tr '\n' ' ')")
grep -B3 -A12 'ERROR\|FAILED' $R/test_convolution.txt $R/test_graph.txt | head -30
tiles=auto,64x64p2s2,64x64p2s4,64x64p2s8,128x128s4,128x128s8,64x128w8p2s8
for l in H N H N; do
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 100 $D/bin/vkcnn-bench-conv conv \
    bench/results/2026-11-27-h200-b1-splits/split_shapes.txt --fp16 --iterations 20 --warmup 0.05 --cold --tiles $tiles >> $R/split_$l.jsonl 2>&1
done
echo "split shapes $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for l in "HN":
    for line in open(f"{o}/split_{l}.jsonl"):
        try: r = json.loads(line)
        except Exception: continue
        t[(r["name"], r["tile"])].append((l, r["ms"] * 1000))
for k, v in t.items(): print(f"{k[0]:12s} {k[1]:14s} " + " ".join(f"{l}={m:.1f}" for l, m in v))
PY
work=/tmp/ab; mkdir -p $work/models
nets=vgg16,resnet50,resnet18,densenet121,resnext50_32x4d
PYTHONUNBUFFERED=1 timeout 220 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 5 --warmup 2 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
for st in 1 2 4 8; do
  LD_LIBRARY_PATH=$D/lib VKCNN_FULLY_CONNECTED_STEPS=$st timeout 30 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --iterations 20 > $R/profile_N_vgg16_b1_steps$st.txt 2>&1
  echo "steps $st: $(grep -h 'classifier\|total' $R/profile_N_vgg16_b1_steps$st.txt | awk '{print $(NF-1)}' | tr '\n' ' ')"
done
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 60 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_b$3_$4.json > $R/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do run H $net 1 1; run N $net 1 1; run N $net 1 2; run H $net 1 2; done
echo "nets b1 $(( $(date +%s) - t0 )) s"
for l in H N; do
  LD_LIBRARY_PATH=$(lib $l) timeout 30 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --iterations 20 > $R/profile_${l}_resnet50_b1.txt 2>&1
done
python3 - $R <<'PY'
import json, sys, glob, collections
o = sys.argv[1]; t = collections.defaultdict(list)
for f in sorted(glob.glob(o + "/*_b*_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key].append((lib, j["resident_median_ms"], j.get("gpu_median_ms") or 0, j.get("relative_l2")))
for k, v in t.items(): print(k, " ".join(f"{l}={m:.4f}/gpu {g:.4f}(L2 {e:.2g})" for l, m, g, e in v))
PY
cd /tmp && tar czf $OUT/r7.tgz r7; ls -la $OUT
