#!/usr/bin/env bash
# Issue #13's load-time run in one command on the GPU machine (about 2 minutes on an H100):
#   bash scripts/bench/load-gpu.sh PACK OUT [BEFORE]
# PACK is scripts/device-pack.sh's .device-build (lib/, bin/vkcnn, bin/vkcnn-bench-context, the
# tests) with its .gl/ beside it in the repository root; BEFORE (optional) a folder holding an
# older build's vkcnn and libvkcnn*.so* to compare with. Exports resnet50 and vgg16 (torchvision,
# random weights; scripts/bench/load_export.py) unless /tmp holds them, then
# times cold starts (`vkcnn bench --cold-only`: a fresh Context, the load phase by phase, the first
# run), each model as two processes sharing a pipeline cache directory (the first writes it, the
# second reads it), with the driver's own shader cache off; the second process again with
# VKCNN_LOAD_THREADS=1 (the load on one thread) and with VKCNN_STRIP_RAW_DATA=0 (protobuf copying
# the weights); Context creation step by step
# (vkcnn-bench-context), also with the loader limited to the NVIDIA driver; and the tests of the
# changed paths under validation. Writes OUT/results.txt (everything), OUT/table.txt and
# OUT/load.tgz (the JSON and logs). VKCNN_LOAD_MODELS="resnet50" narrows the models.
set -uo pipefail
root=$(pwd)
pack=$(cd "$1" && pwd)
out=$2
before=${3:-}
[ -n "$before" ] && before=$(cd "$before" && pwd)
mkdir -p "$out"
r=$out/results.txt
w=/tmp/vkcnn-load
rm -rf "$w" && mkdir -p "$w"
if command -v nvidia-smi > /dev/null; then  # the GPU machine: its image lacks these libraries
  for f in "$root"/.gl/*.deb; do
    case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac
  done
  ldconfig
fi
{ nvidia-smi --query-gpu=name,driver_version --format=csv; echo "cores: $(nproc)"; } > "$r" 2>&1
for m in ${VKCNN_LOAD_MODELS:-resnet50 vgg16}; do
  [ -s /tmp/$m.onnx ] || (cd /tmp && timeout 120 python3 "$root/scripts/bench/load_export.py" $m) >> "$r" 2>&1
done
ls -la /tmp/resnet50.onnx /tmp/vgg16.onnx >> "$r" 2>&1
export __GL_SHADER_DISK_CACHE=0  # "no cache" means none; vkcnn's own cache is what is measured
cold() {  # label bin-dir lib-dir cache model [env...]
  local label=$1 bin=$2 lib=$3 cache=$4 m=$5; shift 5
  echo "== $label $m ($*)" >> "$r"
  env LD_LIBRARY_PATH="$lib:$pack/lib" "$@" timeout 60 "$bin/vkcnn" bench /tmp/$m.onnx --cold-only \
    --cache-dir "$w/cache-$cache-$m" --json "$w/$label-$m.json" 2>&1 | grep -v "^vkcnn:" >> "$r"
}
for m in ${VKCNN_LOAD_MODELS:-resnet50 vgg16}; do
  cold after-p1 "$pack/bin" "$pack/lib" after $m
  cold after-p2 "$pack/bin" "$pack/lib" after $m
  cold after-p2-threads1 "$pack/bin" "$pack/lib" after $m VKCNN_LOAD_THREADS=1
  cold after-p2-nostrip "$pack/bin" "$pack/lib" after $m VKCNN_STRIP_RAW_DATA=0
  if [ -n "$before" ]; then
    cold before-p1 "$before" "$before" before $m
    cold before-p2 "$before" "$before" before $m
  fi
done
echo "== Context creation (vkcnn-bench-context 3)" >> "$r"
LD_LIBRARY_PATH=$pack/lib VKCNN_PIPELINE_CACHE_DIR=$w/cache-after-resnet50 \
  timeout 30 "$pack/bin/vkcnn-bench-context" 3 >> "$r" 2>&1
echo "== Context creation, the loader limited to the NVIDIA driver (VK_LOADER_DRIVERS_SELECT)" >> "$r"
LD_LIBRARY_PATH=$pack/lib VKCNN_PIPELINE_CACHE_DIR=$w/cache-after-resnet50 \
  VK_LOADER_DRIVERS_SELECT='*nvidia*' timeout 30 "$pack/bin/vkcnn-bench-context" 3 >> "$r" 2>&1
cold after-p2-nvidia-only "$pack/bin" "$pack/lib" after resnet50 VK_LOADER_DRIVERS_SELECT='*nvidia*'
# The changed paths under validation: layers packed on threads (float16: the matrix-unit layout),
# loads failing allocation by allocation.
mkdir -p /tmp/vkcnn-vl
ls "$root"/.gl/vulkan-validationlayers_*.deb > /dev/null 2>&1 &&
  dpkg -x "$root"/.gl/vulkan-validationlayers_*.deb /tmp/vkcnn-vl
set -f  # the test filters are not file names
for t in "test_convolution -tc=*threads*,*parallelRanges*,*matrix-unit*" test_session test_graph; do
  set -- $t
  (export VKCNN_VALIDATION=1 LD_LIBRARY_PATH=/tmp/vkcnn-vl/usr/lib/x86_64-linux-gnu:$pack/lib
   [ -d /tmp/vkcnn-vl/usr/share/vulkan ] &&
     export VK_LAYER_PATH=/tmp/vkcnn-vl/usr/share/vulkan/explicit_layer.d
   timeout 60 "$pack/bin/$1" "${@:2}" > "$w/$1.log" 2>&1
   echo "$1 rc=$?: $(grep -E '^\[doctest\] (test cases|assertions)' "$w/$1.log" | tr -s ' ' | tr '\n' ' ')") >> "$r"
done
set +f
# One table: a row per phase, a column per run.
python3 - "$w" > "$out/table.txt" 2>&1 <<'PY'
import glob, json, os, sys
order = ["context", "context_wait", "read", "parse", "check", "import", "shape_inference", "optimize", "pack",
         "upload", "images", "load", "first_run", "pipelines", "total"]
cols, data = [], {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json")), key=os.path.getmtime):
    name = os.path.basename(path)[:-5]
    try:
        j = json.load(open(path))
    except Exception as e:
        print(name, "unreadable:", e)
        continue
    cols.append(name)
    data[name] = j
print("| ms | " + " | ".join(cols) + " |")
print("|---" * (len(cols) + 1) + "|")
for k in order:
    print(f"| {k} | " + " | ".join(f"{data[c].get('cold_' + k + '_ms', float('nan')):.1f}"
                                  for c in cols) + " |")
print("| submissions | " + " | ".join(str(data[c].get("cold_upload_submissions", "")) for c in cols) + " |")
PY
(cd "$w" && tar czf "$out/load.tgz" *.json *.log 2>/dev/null)
cat "$out/table.txt" >> "$r"
cat "$r"
