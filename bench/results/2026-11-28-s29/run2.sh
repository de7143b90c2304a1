#!/usr/bin/env bash
# Session 29, run 2. The main loop's per-chunk instructions trimmed further (T = working tree:
# the lane mask only where a group's channels end inside a layer, the weight index moved on by a
# constant a chunk, the weight bounds check a chunk's) against C (4ea2b0a, the cursor) and A
# (d9f3acf), and TW = T with the epilogue's two fragments a round (run 1's W). Shapes as run 1;
# test_convolution under validation on T and TW.
# Carried: .device-build (T's library), .gl, .dev-ab/{A,C,T,TW}.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r2; mkdir -p $R; H=bench/results/2026-11-28-s29
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
mkdir -p /tmp/vl && dpkg -x .gl/vulkan-validationlayers_*.deb /tmp/vl
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
lib() { echo $root/.dev-ab/$1/lib:$D/lib; }
for l in A C T TW TW T C A; do
  for s in shapes_1x1 shapes_3x3_b32 shapes_3x3_b1; do
    LD_LIBRARY_PATH=$(lib $l) timeout 120 $D/bin/vkcnn-bench-conv conv $H/$s.txt --fp16 --tiles auto \
      --iterations 20 --warmup 0.2 2>>$R/err.txt | sed "s/^{/{\"lib\":\"$l\",\"set\":\"$s\",/" >> $R/shapes.jsonl
  done
  echo "$l $(( $(date +%s) - t0 )) s"
done
python3 - $R <<'PY'
import json, sys, collections
t = collections.defaultdict(dict); libs = ["A", "C", "T", "TW"]
for l in open(sys.argv[1] + "/shapes.jsonl"):
    try: r = json.loads(l)
    except Exception: continue
    if "ms" in r: t[(r["set"][7:], r["name"], r.get("config", "")[-24:])].setdefault(r["lib"], []).append(r["ms"] * 1000)
print(f'{"set":7s} {"shape":12s} {"config":24s} ' + " ".join(f"{k:>8s}" for k in libs) + "   T/A   T/C  TW/T")
for (st, n, c), v in t.items():
    m = {k: min(v.get(k, [1])) for k in libs}
    print(f'{st:7s} {n:12s} {c:24s} ' + " ".join(f'{m[k]:8.1f}' for k in libs) + f'  {m["T"]/m["A"]:.3f} {m["T"]/m["C"]:.3f} {m["TW"]/m["T"]:.3f}')
PY
(export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1
 for l in T TW; do
   LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu:$(lib $l) timeout 200 $D/bin/test_convolution > $R/test_convolution_$l.txt 2>&1
   echo "test_convolution $l rc=$? $(( $(date +%s) - t0 )) s: $(tail -3 $R/test_convolution_$l.txt | head -2 | tr '\n' ' ')"
 done)
grep -B3 -A20 'ERROR\|FAILED' $R/test_*.txt | head -40
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r2.tgz r2
