#!/usr/bin/env bash
# Issue #12 on real models, in one command on the GPU machine:
#   OUT=DIR bash scripts/bench/tensor-gpu.sh
# vkcnn is built on a Debian machine and carried (the GPU machine has a driver and PyTorch but no
# Debian dev packages): scripts/device-pack.sh there, carrying .device-build and .gl. Exports
# torchvision's convnext_tiny (seeded random weights, layer scales drawn from [0.2, 1] so that every
# block reaches the output; opset 17, one self-contained file: vkcnn run reads models from memory,
# where external data has no directory), runs it with `vkcnn run` in fp32 and fp16 against
# PyTorch's float64 CPU output (relative L2; targets 1e-4 and 2e-2), profiles it in fp16 and
# compares the time of each Tensor conversion (ImageToTensor, TensorToImage) and TensorTranspose
# with the element-wise Tensor ops (TensorBinary, TensorUnary) of the same element count (issue
# #12: "a conversion or transpose costs no more than a same-size element-wise op").
# Writes $OUT/tensor-summary.md (and the logs and the profile as tensor.tgz). Under 150 s on an H100.
# For a local try (lavapipe, the local build): VKCNN=build/engine/vkcnn VKCNN_GL=0 OUT=/tmp/x
# VKCNN_TENSOR_ITERATIONS=1 VKCNN_TENSOR_TIMEOUT=600 bash scripts/bench/tensor-gpu.sh (lavapipe: about
# a minute per inference, 5 minutes for the profile).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/tensor-out}
work=${VKCNN_TENSOR_WORK:-/tmp/vkcnn-tensor}
vkcnn=${VKCNN:-$root/.device-build/bin/vkcnn}
iterations=${VKCNN_TENSOR_ITERATIONS:-20}
limit=${VKCNN_TENSOR_TIMEOUT:-120}  # seconds per vkcnn command
python=${PYTHON:-python3}
mkdir -p "$out" "$work"
start=$(date +%s)
if [ "${VKCNN_GL:-1}" = 1 ]; then
  # The loader and the glvnd libraries the NVIDIA ICD needs (the validation layer is not wanted).
  for f in "$root"/.gl/*.deb; do
    case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac
  done
  ldconfig
  export LD_LIBRARY_PATH=$root/.device-build/lib:${LD_LIBRARY_PATH:-}
fi
summary=$out/tensor-summary.md
{
  echo "# convnext_tiny through vkcnn (issue #12)"
  echo
  echo '```'
  "$vkcnn" info 2>&1 | head -3
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  echo '```'
} > "$summary"
step() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$work/steps.log"; }

step "export"
if [ ! -f "$work/convnext_tiny.onnx" ]; then
  "$python" - "$work" > "$work/export.log" 2>&1 <<'PY'
import copy, inspect, os, sys
import numpy as np, torch, torchvision
work = sys.argv[1]
torch.manual_seed(0)
m = torchvision.models.convnext_tiny(weights=None).eval()
for name, p in m.named_parameters():
    if name.endswith("layer_scale"):
        p.data.uniform_(0.2, 1.0)  # random init leaves them at 1e-6: the blocks would not count
x = torch.randn(1, 3, 224, 224)
with torch.no_grad():
    y32 = m(x)
    # The reference is float64, so that PyTorch's own float32 rounding does not count against
    # vkcnn; the summary shows how far PyTorch's float32 is from it.
    y = copy.deepcopy(m).double()(x.double())
np.save(os.path.join(work, "input.npy"), x.numpy())
np.save(os.path.join(work, "reference.npy"), y.numpy())
np.save(os.path.join(work, "pytorch_fp32.npy"), y32.numpy())
kw = {}
params = inspect.signature(torch.onnx.export).parameters
if "dynamo" in params:
    kw["dynamo"] = False  # the TorchScript exporter: one file, no external data at this size
path = os.path.join(work, "convnext_tiny.onnx")
torch.onnx.export(m, x, path, opset_version=17, input_names=["input"], output_names=["logits"], **kw)
extra = [f for f in os.listdir(work) if f != "convnext_tiny.onnx"
         and not f.endswith((".log", ".json", ".txt", ".npy"))]
if extra:
    sys.exit(f"the export wrote side files (external data?): {extra}")
print(f"torch {torch.__version__} torchvision {torchvision.__version__}; "
      f"{os.path.getsize(path) / 1e6:.1f} MB")
PY
  [ $? = 0 ] || { cat "$work/export.log"; echo "export failed" >> "$summary"; exit 1; }
fi
tail -1 "$work/export.log" | sed 's/^/PyTorch: /' >> "$summary"

compare() {  # OUTPUT.npy TARGET: one line of the summary
  "$python" - "$1" "$work/reference.npy" "$2" <<'PY'
import sys
import numpy as np
try:
    got = np.load(sys.argv[1]).astype(np.float64).ravel()
except Exception as e:
    print(f"no output ({e})"); sys.exit(0)
want = np.load(sys.argv[2]).astype(np.float64).ravel()
rel = np.linalg.norm(got - want) / np.linalg.norm(want)
ok = "pass" if rel <= float(sys.argv[3]) else "FAIL"
print(f"relative L2 {rel:.3e} (target {sys.argv[3]}: {ok}), max |diff| {np.abs(got - want).max():.3e}, "
      f"top-1 {got.argmax()} vs PyTorch {want.argmax()}")
PY
}

{ echo; echo "## vkcnn run against PyTorch (float64, CPU)"; echo;
  echo "- PyTorch's own float32 (CPU): $(compare "$work/pytorch_fp32.npy" 1e-4)"; } >> "$summary"
for fmt in fp32 fp16; do
  step "run $fmt"
  target=1e-4; [ $fmt = fp16 ] && target=2e-2
  rm -f "$work/out_$fmt.npy"
  t0=$(date +%s.%N)
  timeout "$limit" "$vkcnn" run "$work/convnext_tiny.onnx" --$fmt --input "$work/input.npy" \
    --output "$work/out_$fmt.npy" --json "$work/run_$fmt.json" > "$work/run_$fmt.log" 2>&1 ||
    tail -3 "$work/run_$fmt.log" | sed 's/^/    /' >> "$summary"
  secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}')
  echo "- $fmt: $(compare "$work/out_$fmt.npy" $target); the command took $secs s" >> "$summary"
done

step "profile fp16"
timeout "$limit" "$vkcnn" profile "$work/convnext_tiny.onnx" --fp16 --iterations "$iterations" \
  --json "$work/profile_fp16.json" > "$work/profile_fp16.txt" 2>&1 ||
  tail -3 "$work/profile_fp16.txt" | sed 's/^/    /' >> "$summary"
"$python" - "$work/profile_fp16.json" >> "$summary" 2>&1 <<'PY'
import json, re, statistics, sys
from collections import defaultdict
try:
    p = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"\nno profile ({e})"); sys.exit(0)
# Element counts of the values on Tensors, by node name: "NAME (kind) -> tensor [d, ...]".
size = {}
for v in p["tensor_values"]:
    m = re.match(r"(.*) \(([^()]*)\) -> tensor \[([0-9, ]*)\]$", v["node"])
    if m:
        n = 1
        for d in m.group(3).split(","):
            n *= int(d) if d.strip() else 1
        size[m.group(1)] = n
conversions = ("ImageToTensor", "TensorToImage", "TensorTranspose")
elementwise = ("TensorBinary", "TensorUnary")
rows = defaultdict(lambda: defaultdict(list))  # elements -> kind -> [ms]
total = defaultdict(float)
unsized = 0
previous = None  # element count of the last dispatch's value
for k in p["kernels"]:
    m = re.match(r"(\w+) '(.*)'", k["label"])
    kind, name = (m.group(1), m.group(2)) if m else (k["label"], "")
    group = kind if kind in conversions + elementwise else "other"
    total[group] += k["median_ms"]
    n = size.get(name)
    if n is None and kind == "TensorToImage":
        # Named after the image it makes, whose source view is no Tensor value of its own: its
        # source is the value the dispatch before it wrote.
        n = previous
    previous = size.get(name)
    if group == "other":
        continue
    if n is None:
        unsized += 1
        continue
    rows[n][kind].append(k["median_ms"])
print(f"\n## fp16 profile: {p['total_ms']:.3f} ms of kernels over {p['dispatches']} dispatches "
      f"({p['iterations']} iterations, medians; device {p['device']})\n")
print("| kernels | ms in all | share |\n|---|---:|---:|")
for g in conversions + elementwise + ("other",):
    print(f"| {g} | {total[g]:.3f} | {100 * total[g] / max(p['total_ms'], 1e-12):.1f}% |")
print("\nPer element count: median ms of one dispatch (count of dispatches); ratio = the largest "
      "median of the three conversion kinds over the median element-wise op of the same size "
      "(worst: the slowest single dispatch over it).\n")
print("| elements | " + " | ".join(conversions + elementwise) + " | ratio | worst |")
print("|---:|" + "---:|" * (len(conversions) + len(elementwise) + 2))
worst = []
for n in sorted(rows):
    r = rows[n]
    cells = [f"{statistics.median(r[k]):.4f} ({len(r[k])})" if r[k] else "" for k in conversions + elementwise]
    ew = [t for k in elementwise for t in r[k]]
    cv = [t for k in conversions for t in r[k]]
    ratio = slowest = ""
    if ew and cv:
        x = max(statistics.median(r[k]) for k in conversions if r[k]) / statistics.median(ew)
        worst.append((x, n))
        ratio, slowest = f"{x:.2f}", f"{max(cv) / statistics.median(ew):.2f}"
    print(f"| {n} | " + " | ".join(cells) + f" | {ratio} | {slowest} |")
if worst:
    x, n = max(worst)
    verdict = "holds" if x <= 1.0 else "does NOT hold"
    print(f"\nLargest median ratio {x:.2f} at {n} elements: the criterion {verdict} "
          f"(<= 1.0 at every size with both kinds).")
if unsized:
    print(f"\n({unsized} dispatches of those kinds had no size in tensor_values and are left out.)")
PY
step "done"
cp "$work/steps.log" "$out/" 2>/dev/null
(cd "$work" && tar czf "$out/tensor.tgz" *.log *.txt *.json 2>/dev/null)
echo "(total $(( $(date +%s) - start )) s)" >> "$summary"
cat "$summary"
