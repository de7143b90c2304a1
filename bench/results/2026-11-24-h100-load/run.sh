#!/usr/bin/env bash
# Load-time run on the H100 (issue #13): bash run.sh from the repository root with .dev-load/ holding before/ and after/ builds, lib/, gl/ and load-export.py (this folder).
# Load-time measurements (issue #13): cold starts of resnet50 and vgg16, fp16, before and after,
# each as two processes sharing a pipeline cache directory (the first writes it, the second reads).
# Writes $OUT/results.txt and $OUT/json.tgz only.
set -uo pipefail
root=$(pwd); d=$root/.dev-load; out=${OUT:-/tmp/out}; w=/tmp/load; mkdir -p $out $w
r=$out/results.txt
for f in $d/gl/*.deb; do dpkg -x $f /; done; ldconfig
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nproc; } > $r 2>&1
(cd /tmp && python3 $d/load-export.py resnet50 vgg16) >> $r 2>&1
ls -la /tmp/*.onnx /tmp/*.data 2>/dev/null >> $r
# The driver's own shader cache off: "no cache" means none; vkcnn's cache is what is measured.
export __GL_SHADER_DISK_CACHE=0
run() {  # variant name cachelabel model [env...]
  local v=$1 n=$2 c=$3 m=$4; shift 4
  echo "== $v $n $m ($*)" >> $r
  env LD_LIBRARY_PATH=$d/$v:$d/lib "$@" $d/$v/vkcnn bench /tmp/$m.onnx --cold-only \
    --cache-dir $w/cache-$v-$c-$m --json $w/$v-$n-$m.json 2>&1 | grep -v "^vkcnn:" >> $r
}
for v in before after; do
  for m in resnet50 vgg16; do
    run $v p1 base $m; run $v p2 base $m
  done
done
# Each step alone with a warm cache: the after binary with one switch off.
for m in resnet50 vgg16; do
  run after threads1-p1 t1 $m VKCNN_LOAD_THREADS=1; run after threads1-p2 t1 $m VKCNN_LOAD_THREADS=1
  run after nobatch-p1 nb $m VKCNN_UPLOAD_BATCH=0; run after nobatch-p2 nb $m VKCNN_UPLOAD_BATCH=0
done
# The driver's disk cache on as well (an application's usual second start).
unset __GL_SHADER_DISK_CACHE
run after drv-p1 drv resnet50; run after drv-p2 drv resnet50
run after drv-p1 drv vgg16; run after drv-p2 drv vgg16
# The changed paths (batched uploads, parallel kernel building, blocked matrix packing) on the
# H100 with validation on.
export LD_LIBRARY_PATH=$d/after:$d/lib VKCNN_VALIDATION=1
for t in test_session test_graph test_threads test_pipeline_cache test_c_api test_convolution; do
  timeout 90 $d/bin/$t > $w/$t.log 2>&1; echo "$t rc=$?: $(tail -n 3 $w/$t.log | tr '\n' ' ')" >> $r
done
(cd $w && tar czf $out/json.tgz *.json *.log)
cat $r
