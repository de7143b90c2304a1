#!/usr/bin/env bash
# Session 24, run 1 (diagnosis). Is 3x3 128->128 @112² at batch 32 on the direct 128x128 tile
# 1.09 ms (session 17-18) or 1.75-2.09 (session 23, runs 1 and 9)? The five 118-GFLOP vgg16
# shapes on four configurations, forward then reversed order, and vgg16's own layers
# (vkcnn profile, float16, batch 32, with and without Winograd). Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R; H=bench/results/2026-11-27-h200-s24
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; cat $R/device.txt
export LD_LIBRARY_PATH=$D/lib
for o in fwd rev fwd; do
  timeout 90 $D/bin/vkcnn-bench-conv conv $H/shapes_$o.txt --fp16 --tiles auto,128x128,64x64,winograd --iterations 20 --warmup 0.3 >> $R/shapes_$o.jsonl 2>>$R/shapes.err
  echo "shapes $o $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/shapes_*.jsonl")):
    for l in open(f):
        try: r = json.loads(l)
        except Exception: continue
        print(f"{f.split('/')[-1]:16s} {r['name']:12s} {r['tile']:9s} {r['ms']:.4f} ms {r['tflops']:.0f} TF parts {' '.join(f'{x:.3f}' for x in (r.get('parts_ms') or [])[:6])}")
PY
work=/tmp/ab; mkdir -p $work/models
PYTHONUNBUFFERED=1 timeout 100 python3 scripts/bench/pytorch_side.py $work/models --networks vgg16 --runs 10 --warmup 3 > $R/pytorch.log 2>&1 || tail -5 $R/pytorch.log
cp $work/models/pytorch.json $R/ 2>/dev/null
echo "models $(( $(date +%s) - t0 )) s"
timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 32 --iterations 10 --json $R/profile_W.json > $R/profile_W.txt 2>&1
VKCNN_NO_WINOGRAD=1 timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 32 --iterations 10 --json $R/profile_D.json > $R/profile_D.txt 2>&1
timeout 60 $D/bin/vkcnn profile $work/models/vgg16.onnx --fp16 --batch 32 --iterations 10 --json $R/profile_W2.json > $R/profile_W2.txt 2>&1
echo "profiles $(( $(date +%s) - t0 )) s"
cat $R/profile_W.txt | head -80
cd /tmp && tar czf $OUT/r1.tgz r1; ls -la $OUT
