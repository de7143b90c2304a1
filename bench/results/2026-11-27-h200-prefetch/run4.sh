#!/usr/bin/env bash
# Run 4 (2026-11-27, session 17): the change as committed (F, .device-build): convolution_tiled's
# EPILOGUE 1/2 (read ahead: output pixels, bias, residual) where a layer's workgroups make four
# waves or more, 0 (as before) below; global pooling's shared memory sized by its workgroup.
# Against main (A, .dev-ab/A/lib). Tests under validation (test_convolution whole: every tile
# with each epilogue forced), registers, the b32 shapes, networks A F F A at b1 and b32.
# Carried: .device-build (F), .gl, .dev-ab (A).
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
here=bench/results/2026-11-27-h200-prefetch
R=/tmp/run4; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in F) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
$D/bin/vkcnn-pipeline-stats --variants f16 > $R/stats.txt 2>&1; echo "stats rc=$?"; grep "tiled_f16 \(128x128\|64x64\|32x64\|64x128w8p2\)" $R/stats.txt | cut -c1-120
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$D/lib
 for t in test_convolution test_graph test_pooling; do
   timeout 150 $D/bin/$t > $R/$t.txt 2>&1; echo "$t rc=$? $(( $(date +%s) - t0 )) s: $(tail -2 $R/$t.txt | head -1)"
 done)
bc() {  # lib tag args...
  local l=$(lib $1); local tag=$2; shift 2
  LD_LIBRARY_PATH=$l VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-bc timeout 150 $D/bin/vkcnn-bench-conv conv \
    $here/shapes_b32.txt --fp16 --iterations 20 --tiles auto "$@" > $R/$tag.jsonl 2> $R/$tag.err
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
}
for v in A F; do bc $v $v-plain; bc $v $v-res --residual; done
python3 - $R <<'PY'
import json, sys, collections
o = sys.argv[1]; t = collections.defaultdict(dict); tags = ["A-plain", "F-plain", "A-res", "F-res"]
for tag in tags:
    for line in open(f"{o}/{tag}.jsonl"):
        j = json.loads(line)
        if "ms" in j: t[j["name"]][tag] = j["ms"]
print("| shape b32 | " + " | ".join(tags) + " |"); print("|---" * (len(tags) + 1) + "|")
for n, v in t.items(): print(f"| {n} | " + " | ".join(f"{v.get(k, 0):.4f}" for k in tags) + " |")
PY
work=/tmp/ab; mkdir -p $work/models
nets=${NETS:-resnet50,resnext50_32x4d,densenet121,vgg16,resnet18}
PYTHONUNBUFFERED=1 timeout 240 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 5 --warmup 2 > $work/pytorch.log 2>&1 || tail -5 $work/pytorch.log
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 90 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $work/${1}_${2}_b$3_$4.json > $work/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do for b in 1 32; do run A $net $b 1; run F $net $b 1; run F $net $b 2; run A $net $b 2; done; done
echo "nets $(( $(date +%s) - t0 )) s"
LD_LIBRARY_PATH=$(lib F) $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --iterations 20 > $R/profile_F_resnet50_b1.txt 2>&1
LD_LIBRARY_PATH=$(lib F) $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 5 > $R/profile_F_resnet50_b32.txt 2>&1
python3 - $work <<'PY'
import json, glob, os, sys, collections
w = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{w}/*_*_b*_[12].json")):
    b, rest = os.path.basename(f)[:-5].split("_", 1)
    j = json.load(open(f)); rows[rest.rsplit("_", 1)[0]][b].append((j["resident_median_ms"], j["gpu_median_ms"], j.get("relative_l2")))
print("| network fp16 | A resident / GPU ms | F resident / GPU ms | F/A resident (best) | F/A GPU (best) | rel L2 A / F |")
print("|---|---|---|---|---|---|")
for k, v in rows.items():
    cell = lambda b: " ".join(f"{x[0]:.4f}/{x[1]:.4f}" for x in sorted(v[b]))
    ra = min(x[0] for x in v["A"]); rf = min(x[0] for x in v["F"]); ga = min(x[1] for x in v["A"]); gf = min(x[1] for x in v["F"])
    print(f"| {k} | {cell('A')} | {cell('F')} | {rf / ra:.3f} | {gf / ga:.3f} | {v['A'][0][2]} / {v['F'][0][2]} |")
PY
(cd $work && cp *.json *.txt pytorch.log $R/ 2>/dev/null)
tar czf $OUT/run4.tgz -C /tmp run4
