#!/usr/bin/env bash
# Session 28, run 9. Why shufflenet_v2_x1_0 at batch 32 is 3% slower with EPILOGUE_OPS (run 8):
# its per-dispatch profile (each convolution's configuration) and levels profile on A (1b7ee79)
# and N (c86acf1), A N N A. Carried: .device-build, .gl, .dev-ab/A.
set -uo pipefail
root=$(pwd); D=$root/.device-build; t0=$(date +%s)
R=/tmp/r9; mkdir -p $R
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; cat $R/device.txt
work=/tmp/ab; mkdir -p $work/models
python3 - $work/models <<'PY'
import sys, torch, torchvision
sys.path.insert(0, "scripts/bench")
from pytorch_side import build, export
export(build("shufflenet_v2_x1_0"), sys.argv[1] + "/shufflenet_v2_x1_0.onnx", 17)
PY
echo "model $(( $(date +%s) - t0 )) s"
for lib in A N N A; do L=$D/lib; [ $lib != N ] && L=$root/.dev-ab/$lib/lib:$D/lib
  LD_LIBRARY_PATH=$L timeout 60 $D/bin/vkcnn profile $work/models/shufflenet_v2_x1_0.onnx --fp16 --batch 32 --iterations 20 > $R/profile_$lib.txt 2>&1
  LD_LIBRARY_PATH=$L timeout 60 $D/bin/vkcnn profile $work/models/shufflenet_v2_x1_0.onnx --fp16 --batch 32 --iterations 20 --levels > $R/levels_$lib.txt 2>&1
  echo "$lib $(tail -1 $R/levels_$lib.txt)"
done
diff <(awk '{print $2, $3, $4}' $R/profile_A.txt) <(awk '{print $2, $3, $4}' $R/profile_N.txt) | head -20
python3 - $R <<'PY'
import re, sys
def levels(f):
    out = []
    for l in open(f):
        m = re.match(r"\s*(\d+)\s+([\d.]+)\s+[\d.]+%\s+(\d+)\s+(.*)$", l)
        if m: out.append((float(m.group(2)), m.group(4)))
    return out
a, n = levels(sys.argv[1] + "/levels_A.txt"), levels(sys.argv[1] + "/levels_N.txt")
rows = sorted(zip(a, n), key=lambda p: p[0][0] - p[1][0])
for (ta, la), (tn, ln) in rows[:12]:
    print(f"{ta*1000:7.1f} {tn*1000:7.1f} {(tn-ta)*1000:+6.1f} {la[:110]}")
PY
echo "done $(( $(date +%s) - t0 )) s"
cd /tmp && tar czf $OUT/r9.tgz r9
