#!/usr/bin/env bash
# SE fusion on the H100: GPU tests under validation, then efficientnet_b0, mobilenet_v3_large,
# regnet_y_800mf fp16 b1/b32 with the fusions off / SiLU only / SiLU + SE, beside PyTorch.
set -uo pipefail
root=$(pwd)
rm -rf .device-build && cp -r .dev-se/build .device-build
out=/tmp/se-out; mkdir -p "$out"
phase=${1:-all}
if [ "$phase" != bench ]; then
  OUT=$out/tests VKCNN_DEVICE_TESTS="test_squeeze_excitation test_onnx_squeeze_excitation test_neuron test_graph test_pooling" \
    timeout 150 bash scripts/device-run-tests.sh > "$out/tests.log" 2>&1; echo "tests rc=$?"; tail -15 "$out/tests.log"
fi
[ "$phase" = tests ] && exit 0
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac; done
ldconfig
export LD_LIBRARY_PATH=$root/.device-build/lib:${LD_LIBRARY_PATH:-}
unset VKCNN_VALIDATION
v=$root/.device-build/bin/vkcnn
work=/tmp/se-work; mkdir -p $work/models
export VKCNN_PIPELINE_CACHE_DIR=$work/cache
nets=efficientnet_b0,mobilenet_v3_large,regnet_y_800mf
t0=$(date +%s)
PYTHONUNBUFFERED=1 python3 .dev-se/torch_fp16.py $work/models $nets ${RUNS:-50} > $out/pytorch.log 2>&1 || tail -5 $out/pytorch.log
echo "pytorch $(( $(date +%s) - t0 )) s"
cp $work/models/pytorch.json $out/ 2>/dev/null
# A throwaway run first (clocks, caches): the first measured run of the earlier attempt was an outlier.
$v bench $work/models/efficientnet_b0.onnx --fp16 --batch 1 --iterations 50 > $out/warmup.txt 2>&1
for mode in ${MODES:-off silu se4k se16k se64k seall}; do
  case $mode in
    off) env="VKCNN_FUSE_SILU=0 VKCNN_FUSE_SQUEEZE_EXCITATION=0";;
    silu) env="VKCNN_FUSE_SQUEEZE_EXCITATION=0";;
    se4k) env="VKCNN_SE_MAX_WEIGHTS=4096";;
    se16k) env="VKCNN_SE_MAX_WEIGHTS=16384";;
    se) env="";;
    se64k) env="VKCNN_SE_MAX_WEIGHTS=65536";;
    seall) env="VKCNN_SE_MAX_WEIGHTS=100000000";;
  esac
  for net in ${nets//,/ }; do
    for b in 1 32; do
      env $env $v bench $work/models/$net.onnx --fp16 --batch $b --iterations ${ITER:-50} \
        --input $work/models/${net}_b${b}_input.npy --reference $work/models/${net}_b${b}_output.npy \
        --json $out/vkcnn_${net}_fp16_b${b}_$mode.json > $out/bench_${net}_b${b}_$mode.txt 2>&1 || echo "FAILED $net $b $mode"
    done
    env $env $v profile $work/models/$net.onnx --fp16 > $out/profile_${net}_fp16_b1_$mode.txt 2>&1
  done
  echo "$mode done $(( $(date +%s) - t0 )) s"
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $out/device.txt 2>&1
$v info > $out/vkcnn-info.txt 2>&1
[ -n "${OUT:-}" ] && tar czf $OUT/se-out.tgz -C $(dirname $out) $(basename $out) && rm -rf $out
