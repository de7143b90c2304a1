#!/usr/bin/env bash
# Session 27, run 1. How much a batch's pieces cost: resnet50's convolutions that batch 32 runs in
# pieces (side by side, as a Graph runs them) against a shape of the same GEMM that one Image holds
# (shapes_pieces.txt), on the selector's choice and four forced tiles; profiles of resnet50 at
# batch 32 and 1 and vgg16 at batch 32 on main (4956963). Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R; H=bench/results/2026-11-28-s27
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
timeout 240 $D/bin/vkcnn-bench-conv conv $H/shapes_pieces.txt --fp16 --pieces --tiles auto,64x64,128x128,64x128w8,128x64w8 \
  --iterations 20 --warmup 0.2 > $R/shapes.jsonl 2> $R/err.txt
echo "shapes rc=$? $(( $(date +%s) - t0 )) s"; head -3 $R/err.txt
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict); p = collections.defaultdict(dict); names = []
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "error" in r: print(r); continue
    if r["name"] not in names: names.append(r["name"])
    if "ms" in r: t[r["name"]][r["tile"]] = (r["ms"], r["dispatches"], r.get("config", "")[-22:])
    else: p[r["name"]][r["pieces_tile"]] = (r["serial_ms"], r["concurrent_ms"], r["pieces"])
for n in names:
    print(n, "  ".join(f"{k}={v[0]*1000:.1f}/{v[1]}" for k, v in t[n].items()), "|", t[n].get("auto", ("", "", ""))[2])
    if n in p: print("   pieces:", "  ".join(f"{k}: serial {v[0]*1000:.1f} side {v[1]*1000:.1f}" for k, v in p[n].items()))
PY
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 200 python3 scripts/bench/pytorch_side.py $work/models --networks resnet50,vgg16 --runs 2 --warmup 1 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
prof() { timeout 60 $D/bin/vkcnn profile $work/models/$1.onnx --fp16 --batch $2 --iterations 10 > $R/profile_$1_b$2.txt 2>&1; tail -1 $R/profile_$1_b$2.txt; }
prof resnet50 32; prof resnet50 1; prof vgg16 32
for b in 32 1; do timeout 60 $D/bin/vkcnn bench $work/models/resnet50.onnx --fp16 --batch $b --iterations 20 --input $work/models/resnet50_b${b}_input.npy \
  --reference $work/models/resnet50_b${b}_output.npy --json $R/resnet50_b$b.json > $R/resnet50_b$b.txt 2>&1; grep -i 'resident\|l2' $R/resnet50_b$b.txt | head -3; done
python3 -c "import json; r=json.load(open('$R/pytorch.json'))['networks']; print({n: {k: (v['eager']['median_ms'], v['graph']['median_ms']) for k, v in x.items() if k.startswith('fp16')} for n, x in r.items()})"
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r1.tgz r1
