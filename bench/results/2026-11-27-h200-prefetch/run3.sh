#!/usr/bin/env bash
# Run 3 (2026-11-27, session 17). Why batch 1 lost ~1.5% of GPU time with P (run 2), and two
# further epilogues: E (the bias read before the loop for every encode, not only with a
# residual) and E2 (E, and each lane's output pixels worked out before the loop: no integer
# divisions in it). Registers of every tile without and with a residual (P); test_convolution's
# forced configurations under validation with E2; shapes at b32 and b1 with A, P, E, E2; networks
# A P E2 E2 P A and batch-1 profiles. Carried: .device-build (P), .gl, .dev-ab (A, E, E2).
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
here=bench/results/2026-11-27-h200-prefetch
R=/tmp/run3; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in P) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
$D/bin/vkcnn-pipeline-stats --variants f16 > $R/stats.txt 2>&1; grep -i "tiled" $R/stats.txt | cut -c1-150
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 for v in E2 E; do
   LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib $v) timeout 100 $D/bin/test_convolution \
     -tc="*matrix-unit configuration*,*side by side*" > $R/test_convolution_$v.txt 2>&1
   echo "test_convolution $v rc=$? $(( $(date +%s) - t0 )) s: $(tail -2 $R/test_convolution_$v.txt | head -1)"
 done)
bc() {  # lib tag shapes args...
  local l=$(lib $1); local tag=$2; local shapes=$3; shift 3
  LD_LIBRARY_PATH=$l VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-bc timeout 150 $D/bin/vkcnn-bench-conv conv \
    $here/$shapes --fp16 --iterations 20 "$@" > $R/$tag.jsonl 2> $R/$tag.err
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
}
for v in A P E E2; do bc $v $v-plain shapes_b32.txt --tiles auto,128x128,64x64; bc $v $v-res shapes_b32.txt --tiles auto,128x128,64x64 --residual; done
for v in A P E E2; do bc $v $v-b1res shapes_b1.txt --tiles auto,64x64,32x64,64x128w8p2 --residual; done
python3 - $R <<'PY'
import json, sys, collections
o = sys.argv[1]
for kind in ["plain", "res", "b1res"]:
    t = collections.defaultdict(dict); tags = [f"{v}-{kind}" for v in "A P E E2".split()]
    for tag in tags:
        for line in open(f"{o}/{tag}.jsonl"):
            j = json.loads(line)
            if "ms" in j: t[(j["name"], j["tile"])][tag] = j["ms"]
    print(f"\n| {kind} | tile | " + " | ".join(tags) + " |")
    print("|---" * (len(tags) + 2) + "|")
    for (n, tile), v in t.items():
        print(f"| {n} | {tile} | " + " | ".join(f"{v.get(k, 0):.4f}" for k in tags) + " |")
PY
work=/tmp/ab; mkdir -p $work/models
nets=${NETS:-resnet50,resnext50_32x4d}
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks $nets --runs 5 --warmup 2 > $work/pytorch.log 2>&1 || tail -5 $work/pytorch.log
echo "pytorch $(( $(date +%s) - t0 )) s"
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 90 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 40 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $work/${1}_${2}_b$3_$4.json > $work/${1}_${2}_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in ${nets//,/ }; do for b in 1 32; do run A $net $b 1; run P $net $b 1; run E2 $net $b 1; run E2 $net $b 2; run P $net $b 2; run A $net $b 2; done; done
echo "nets $(( $(date +%s) - t0 )) s"
for v in A P E2; do for net in resnet50 resnext50_32x4d; do LD_LIBRARY_PATH=$(lib $v) $D/bin/vkcnn profile $work/models/$net.onnx --fp16 --iterations 20 > $R/profile_${v}_${net}_b1.txt 2>&1; done; done
python3 - $work <<'PY'
import json, glob, os, sys, collections
w = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{w}/*_*_b*_[12].json")):
    b, rest = os.path.basename(f)[:-5].split("_", 1)
    j = json.load(open(f)); rows[rest.rsplit("_", 1)[0]][b].append((j["resident_median_ms"], j["gpu_median_ms"], j.get("relative_l2")))
print("| network fp16 | A resident / GPU ms | P | E2 | rel L2 A / P / E2 |")
print("|---|---|---|---|---|")
for k, v in rows.items():
    cell = lambda b: " ".join(f"{x[0]:.4f}/{x[1]:.4f}" for x in sorted(v[b]))
    print(f"| {k} | {cell('A')} | {cell('P')} | {cell('E2')} | {v['A'][0][2]} / {v['P'][0][2]} / {v['E2'][0][2]} |")
PY
(cd $work && cp *.json *.txt pytorch.log $R/ 2>/dev/null)
tar czf $OUT/run3.tgz -C /tmp run3
