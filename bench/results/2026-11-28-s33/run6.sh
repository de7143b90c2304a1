#!/usr/bin/env bash
# Session 33, run 6: where densenet121's batch-1 time goes (1.6% behind PyTorch's CUDA graph in
# run 5): levels and per-dispatch profiles of 1d362f2. Carried: .device-build, .gl.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r6; mkdir -p $R
snap() { (cd /tmp && tar czf $OUT/r6.tgz r6); }
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
work=/tmp/m2; mkdir -p $work
[ -f $work/densenet121.onnx ] || PYTHONUNBUFFERED=1 timeout 100 python3 scripts/bench/pytorch_side.py $work --networks densenet121 --runs 1 --warmup 1 --dtypes fp16 > $R/pytorch.log 2>&1
timeout 60 $D/bin/vkcnn bench $work/densenet121.onnx --fp16 --batch 1 --iterations 50 > /dev/null 2>&1
timeout 60 $D/bin/vkcnn profile $work/densenet121.onnx --fp16 --batch 1 --iterations 30 --levels > $R/levels.txt 2>&1
timeout 60 $D/bin/vkcnn profile $work/densenet121.onnx --fp16 --batch 1 --iterations 30 > $R/dispatches.txt 2>&1
tail -1 $R/levels.txt; tail -3 $R/dispatches.txt
python3 - $R/dispatches.txt <<'PY'
import sys, re, collections
t = collections.defaultdict(lambda: [0.0, 0])
for line in open(sys.argv[1]):
    m = re.match(r"\s*\d+\s+([\d.]+)\s+[\d.]+%\s+\d+\s+(\S+)\s+'([^']*)'\s*(\(.*\))?", line)
    if not m: continue
    kind = m.group(2) + " " + (m.group(4) or "")
    kind = re.sub(r"\d+ splits", "N splits", kind)
    t[kind][0] += float(m.group(1)); t[kind][1] += 1
for k, (ms, n) in sorted(t.items(), key=lambda x: -x[1][0])[:25]: print(f"{ms:8.4f} ms {n:4d}  {k}")
PY
echo "done $(( $(date +%s) - t0 )) s"; snap
