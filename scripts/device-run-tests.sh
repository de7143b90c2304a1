#!/usr/bin/env bash
# Runs a build made on a Debian machine (see scripts/device-pack.sh) on a GPU machine that has a
# driver but no Vulkan loader or validation layer: unpacks the carried .debs, then runs the sample
# and every test binary with validation on (VKCNN_DEVICE_TESTS="test_a test_b" picks some and skips
# the samples). Output goes to $OUT (or ./device-out).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/device-out}
mkdir -p "$out"
for f in "$root"/.gl/libvulkan1_*.deb "$root"/.gl/libgl*.deb "$root"/.gl/libegl*.deb "$root"/.gl/libopengl*.deb; do
  [ -f "$f" ] && dpkg -x "$f" /
done
ldconfig
rm -rf /tmp/vkcnn-vl && mkdir -p /tmp/vkcnn-vl
dpkg -x "$root"/.gl/vulkan-validationlayers_*.deb /tmp/vkcnn-vl
export VK_LAYER_PATH=/tmp/vkcnn-vl/usr/share/vulkan/explicit_layer.d
export LD_LIBRARY_PATH=$root/.device-build/lib:/tmp/vkcnn-vl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export VKCNN_VALIDATION=1
# The paths the tests were compiled with (device-pack.sh wrote them): the source tree as a link to
# this checkout, and the CLI and samples where the build had them.
if [ -f "$root/.device-build/source-dir" ]; then
  src=$(cat "$root/.device-build/source-dir") bld=$(cat "$root/.device-build/build-dir")
  if [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"; fi
  mkdir -p "$bld/engine" "$bld/samples"
  ln -sf "$root/.device-build/bin/vkcnn" "$bld/engine/vkcnn"
  for s in vkcnn-fashion-mnist vkcnn-onnx-classify; do
    ln -sf "$root/.device-build/bin/$s" "$bld/samples/$s"
  done
fi
if [ -f "$root/.device-build/onnx-testdata.tar.xz" ]; then
  rm -rf /tmp/vkcnn-onnx-testdata && mkdir -p /tmp/vkcnn-onnx-testdata
  tar -C /tmp/vkcnn-onnx-testdata -xJf "$root/.device-build/onnx-testdata.tar.xz"
  export VKCNN_ONNX_TESTDATA=/tmp/vkcnn-onnx-testdata
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee "$out/gpu.txt"
status=0
tests=${VKCNN_DEVICE_TESTS:-}
if [ -z "$tests" ]; then
  "$root/.device-build/bin/vkcnn-smoke" 2>&1 | tee "$out/smoke.txt" || status=1
  for sample in "$root"/.device-build/bin/vkcnn-embedding; do
  [ -x "$sample" ] && { "$sample" 2>&1 | tee "$out/embedding.txt" || status=1; }
done
if [ -x "$root/.device-build/bin/vkcnn-fashion-mnist" ]; then
  (cd "$root" && VKCNN_FASHION_MNIST_DIR=$root/.device-build/fashion-mnist \
    "$root/.device-build/bin/vkcnn-fashion-mnist" && VKCNN_FASHION_MNIST_DIR=$root/.device-build/fashion-mnist \
    "$root/.device-build/bin/vkcnn-fashion-mnist" --fp32) 2>&1 | tee "$out/fashion_mnist.txt" || status=1
fi
fi
tar czf "$out/logs.tgz" -T /dev/null
for t in "$root"/.device-build/bin/test_*; do
  [ -z "$tests" ] || [[ " $tests " == *" $(basename "$t") "* ]] || continue
  name=$(basename "$t")
  start=$(date +%s.%N)
  # test_onnx_fashion_mnist reads the test set device-pack.sh carried (without one it skips);
  # test_idx_reader wants the training set too, so it keeps looking where Debian puts them.
  extra=()
  [ "$name" = test_onnx_fashion_mnist ] && [ -d "$root/.device-build/fashion-mnist" ] &&
    extra=(VKCNN_FASHION_MNIST_DIR="$root/.device-build/fashion-mnist")
  if (cd "$root" && env "${extra[@]}" "$t" > "$out/$name.txt" 2>&1); then result=passed; else result=FAILED; status=1; fi
  printf "%-28s %s  %.1f s  %s\n" "$name" "$result" "$(awk -v a="$(date +%s.%N)" -v b="$start" "BEGIN{print a-b}")" \
    "$(grep -E '^\[doctest\] assertions' "$out/$name.txt" | tr -s ' ')" | tee -a "$out/summary.txt"
done
(cd "$out" && tar czf logs.tgz test_*.txt && rm -f test_*.txt)
exit $status
