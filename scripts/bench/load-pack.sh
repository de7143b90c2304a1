#!/usr/bin/env bash
# Packs what scripts/bench-gpu.sh --steps load needs on the GPU machine into .dev-load/
# (git-ignored; name it and .gl/ in the device tool's `carry`): lib/ (libvkcnn, libvkcnn_onnx and
# the onnx and protobuf libraries the GPU image lacks), bin/ (vkcnn, vkcnn-bench-context and the
# tests the run repeats under validation), all stripped; and before/ from BEFORE (a folder with an
# older vkcnn and libvkcnn*.so*) when given.
#   bash scripts/bench/load-pack.sh [BEFORE]
# and there: bash scripts/bench-gpu.sh --steps load --pack .dev-load [--before .dev-load/before] OUT
# .gl/ (the loader, glvnd and validation-layer .debs) comes from scripts/device-pack.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${VKCNN_BUILD_DIR:-$root/build}
p=$root/.dev-load
rm -rf "$p" && mkdir -p "$p/lib" "$p/bin"
cp -P "$build"/engine/libvkcnn.so* "$build"/engine/libvkcnn_onnx.so* "$p/lib/"
ldd "$build"/engine/libvkcnn_onnx.so | awk '/libonnx|libprotobuf/ {print $3}' |
  xargs -r -I{} cp -L {} "$p/lib/"
cp "$build"/engine/vkcnn "$build"/bench/vkcnn-bench-context "$build"/tests/test_convolution \
  "$build"/tests/test_session "$build"/tests/test_graph "$p/bin/"
if [ -n "${1:-}" ]; then
  mkdir -p "$p/before" && cp -P "$1"/vkcnn "$1"/libvkcnn*.so* "$p/before/"
fi
find "$p" -type f -exec strip --strip-unneeded {} \; 2>/dev/null || true
du -sh "$p" "$root/.gl" 2>/dev/null || du -sh "$p"
