#!/usr/bin/env bash
# Where resnet50's weight packing goes on the GPU machine (issue #13), in one command:
#   bash scripts/bench/load-diag.sh PACK OUT [BEFORE]
# BEFORE (optional): a folder of older libvkcnn*.so* to compare with (runs alternate). PACK is scripts/bench/load-pack.sh's .dev-load (with .gl/ in the repository root). Times the
# second process's cold start (warm vkcnn pipeline cache) with 1, 2, 4, 8 and all load threads,
# with the uploads unbatched (VKCNN_UPLOAD_BATCH=0), and counts each process's page faults and
# context switches (getrusage); where perf exists, profiles one load. Writes OUT/diag.txt.
set -uo pipefail
root=$(pwd)
pack=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
r=$out/diag.txt
w=/tmp/vkcnn-diag
rm -rf "$w" && mkdir -p "$w"
if command -v nvidia-smi > /dev/null; then
  for f in "$root"/.gl/*.deb; do
    case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac
  done
  ldconfig
fi
echo "cores: $(nproc)" > "$r"
[ -s /tmp/resnet50.onnx ] || (cd /tmp && timeout 120 python3 "$root/scripts/bench/load_export.py" resnet50) >> "$r" 2>&1
export __GL_SHADER_DISK_CACHE=0 LD_LIBRARY_PATH=$pack/lib
run() {  # label [env...]
  local label=$1; shift
  python3 - "$label" "$w" "$pack/bin/vkcnn" "$@" >> "$r" 2>&1 <<'PY'
import json, os, resource, subprocess, sys
label, w, vkcnn, env = sys.argv[1], sys.argv[2], sys.argv[3], dict(os.environ)
for kv in sys.argv[4:]:
    k, v = kv.split("=", 1); env[k] = v
before = resource.getrusage(resource.RUSAGE_CHILDREN)
subprocess.run(["timeout", "60", vkcnn, "bench", "/tmp/resnet50.onnx", "--cold-only", "--cache-dir",
                w + "/cache", "--json", w + "/" + label + ".json"], env=env,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
j = json.load(open(w + "/" + label + ".json"))
keys = ["context", "context_wait", "parse", "import", "pack", "upload", "load", "first_run", "total"]
print(f"{label:14s}", " ".join(f"{k} {j.get('cold_' + k + '_ms', float('nan')):.1f}" for k in keys),
      f"| minflt {after.ru_minflt - before.ru_minflt} nvcsw {after.ru_nvcsw - before.ru_nvcsw}"
      f" nivcsw {after.ru_nivcsw - before.ru_nivcsw} user {after.ru_utime - before.ru_utime:.2f}s"
      f" sys {after.ru_stime - before.ru_stime:.2f}s")
PY
}
run warmup  # writes the pipeline cache
for t in 1 2 4 8 0; do
  if [ "$t" = 0 ]; then run threads-all; else run threads-$t VKCNN_LOAD_THREADS=$t; fi
done
run threads-all-2
if [ -n "${3:-}" ]; then
  before=$(cd "$3" && pwd)
  for k in 1 2 3; do
    run before-$k LD_LIBRARY_PATH="$before:$pack/lib"
    run after-$k
  done
fi
run unbatched VKCNN_UPLOAD_BATCH=0
if command -v perf > /dev/null; then
  perf record -g -F 4999 -o "$w/perf.data" "$pack/bin/vkcnn" bench /tmp/resnet50.onnx --cold-only \
    --cache-dir "$w/cache" > /dev/null 2>&1
  perf report -i "$w/perf.data" --no-children -g none --sort comm,dso,symbol 2>/dev/null | grep -E '^ +[0-9]' |
    head -80 > "$out/perf.txt"
else
  echo "no perf on this machine" >> "$r"
fi
cat "$r"
