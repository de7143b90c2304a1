#!/usr/bin/env bash
# Session 30, run 6. Run 5 had resnet50 at batch 32 6.5% slower with the refit (N) where the
# model predicted 1.6% faster: its 1x1 64->256 @56² layers moved to 256x128w8k16, and there they
# add the residual in the epilogue, which the per-shape runs (ReLU only) never timed. Registers
# of the epilogue variants; the residual layers of resnet50 with --residual against 128x128;
# resnet50's barrier levels under F, N and N2 (N without 256x128w8k16 for layers with a
# residual); networks F N2 N2 F. Carried: .device-build (N2), .gl, .dev-ab/{F,N}.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R; H=bench/results/2026-11-28-s30
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
timeout 60 $D/bin/vkcnn-pipeline-stats --variants f16 > $R/stats.txt 2>&1
grep -E "tiled_f16 (256x128w8k16|128x128)( |$)" $R/stats.txt | cut -d'|' -f1-4
lib() { case $1 in N2) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
for res in "" --residual; do
  LD_LIBRARY_PATH=$(lib N) timeout 60 $D/bin/vkcnn-bench-conv conv $H/shapes_residual_b32.txt --fp16 $res \
    --tiles auto,128x128,256x128w8k16,64x64,128x128p2 --warmup 0.1 2>>$R/err.txt | sed "s/^{/{\"residual\":\"$res\",/" >> $R/residual.jsonl
done
python3 -c "
import json
for l in open('$R/residual.jsonl'):
    r=json.loads(l); print(r['residual'] or 'relu', r['name'], r['tile'], round(r['ms']*1000,1), r['config'][-30:])"
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,mobilenet_v2,efficientnet_b0 --runs 1 --warmup 1 > $R/pytorch.log 2>&1
echo "models $(( $(date +%s) - t0 )) s"
for l in F N N2; do
  LD_LIBRARY_PATH=$(lib $l) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$l timeout 40 $D/bin/vkcnn profile $work/models/resnet50.onnx --fp16 --batch 32 --iterations 10 --levels > $R/levels_${l}_resnet50_b32.txt 2>&1
  tail -1 $R/levels_${l}_resnet50_b32.txt
done
run() {  # lib net batch round
  LD_LIBRARY_PATH=$(lib $1) VKCNN_PIPELINE_CACHE_DIR=/tmp/cache-$1 timeout 40 $D/bin/vkcnn bench $work/models/$2.onnx \
    --fp16 --batch $3 --iterations 20 --input $work/models/${2}_b$3_input.npy \
    --reference $work/models/${2}_b$3_output.npy --json $R/${1}_${2}_fp16_b$3_$4.json > $R/${1}_${2}_fp16_b$3_$4.txt 2>&1 || echo "FAILED $1 $2 $3"
}
for net in resnet50 mobilenet_v2 efficientnet_b0; do run F $net 32 1; run N2 $net 32 1; run N2 $net 32 2; run F $net 32 2; done
echo "networks $(( $(date +%s) - t0 )) s"
python3 - $R <<'PY'
import json, sys, glob, collections, statistics
o = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(o + "/F_*.json") + glob.glob(o + "/N2_*.json")):
    j = json.load(open(f)); lib, rest = f.split("/")[-1].split("_", 1); key = rest.rsplit("_", 1)[0]
    t[key][lib].append(j["resident_median_ms"])
for k, v in t.items():
    a = statistics.mean(v["F"]); s = statistics.mean(v["N2"])
    print(f"{k} | F {a:.3f} | N2 {s:.3f} | {s/a:.3f} | {v['F']} {v['N2']}")
PY
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r6.tgz r6
