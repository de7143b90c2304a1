#!/usr/bin/env bash
# Session 29, run 1. The tiled convolution's main loop without integer divisions (the im2col
# cursor, N = working tree) against A (d9f3acf), and two epilogue variants on top of N: W two
# fragments a round (the second through A's stages), R the float16 rounding by the hardware's
# conversion (packHalf2x16; timings only). vgg16's and resnet's 3x3 shapes at batch 32 and 1, the
# short 1x1 shapes of session 28; test_convolution under validation on N and on W; registers.
# Carried: .device-build, .gl, .dev-ab/{A,W,R}.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r1; mkdir -p $R; H=bench/results/2026-11-28-s29
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { case $1 in N) echo $D/lib;; *) echo $root/.dev-ab/$1/lib:$D/lib;; esac; }
for l in N W R; do LD_LIBRARY_PATH=$(lib $l) timeout 60 $D/bin/vkcnn-pipeline-stats --variants f16 > $R/stats_$l.txt 2>&1; done
grep -i "tiled" $R/stats_N.txt | head -5
for l in A N W R N A; do
  for s in shapes_1x1 shapes_3x3_b32 shapes_3x3_b1; do
    LD_LIBRARY_PATH=$(lib $l) timeout 120 $D/bin/vkcnn-bench-conv conv $H/$s.txt --fp16 --tiles auto \
      --iterations 20 --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$l\",/" >> $R/shapes.jsonl
  done
  echo "$l $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict); libs = ["A", "N", "W", "R"]
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r: t[(r["name"], r.get("config", "")[-30:])].setdefault(r["lib"], []).append(r["ms"] * 1000)
print(f'{"shape":14s} {"config":30s} ' + " ".join(f"{k:>8s}" for k in libs) + "   N/A")
for (n, c), v in t.items():
    a = min(v.get("A", [1])); nn = min(v.get("N", [1]))
    print(f'{n:14s} {c:30s} ' + " ".join(f'{min(v.get(k, [0])):8.1f}' for k in libs) + f'  {nn/a:.3f}')
PY
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 for l in W N; do
   LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib $l) timeout 200 $D/bin/test_convolution > $R/test_convolution_$l.txt 2>&1
   echo "test_convolution $l rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution_$l.txt | head -2 | tr '\n' ' ')"
 done)
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r1.tgz r1
