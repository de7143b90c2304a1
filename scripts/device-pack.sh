#!/usr/bin/env bash
# Packs what the GPU machine needs to run the tests without Debian's dev packages: the built
# library, test binaries and sample (.device-build/), and the loader and validation-layer .debs
# (.gl/). Both folders are git-ignored; name them in the device tool's `carry`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VKCNN_BUILD_DIR:-$root/build}
rm -rf "$root/.device-build"
mkdir -p "$root/.device-build/bin" "$root/.device-build/lib" "$root/.gl"
cp -P "$build"/engine/libvkcnn.so* "$build"/engine/libvkcnn_onnx.so* "$root/.device-build/lib/"
# The ONNX importer links Debian's onnx and protobuf, which the GPU machine lacks.
for lib in libonnx.so.1 libonnx_proto.so.1 libprotobuf.so.32; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$root/.device-build/lib/"
done
# test_onnx_conformance reads libonnx-testdata: 40 MB, 6 MB compressed (device-run-tests.sh unpacks
# it and sets VKCNN_ONNX_TESTDATA).
if [ -d /usr/share/libonnx-testdata/data ]; then
  tar -C /usr/share/libonnx-testdata/data -cJf "$root/.device-build/onnx-testdata.tar.xz" \
    node pytorch-converted pytorch-operator simple
fi
cp "$build"/tests/test_* "$root/.device-build/bin/"
cp "$build"/engine/vkcnn "$root/.device-build/bin/"
# The benchmark programs and their SPIR-V (scripts/bench-gpu.sh's load, shapes, gemm and wgscope
# steps), where the build made them.
for f in vkcnn-bench-context vkcnn-bench-pool vkcnn-bench-conv vkcnn-bench-wgscope vkcnn-pipeline-stats \
  gemm_ceiling.spv gemm_ceiling_fp16acc.spv gemm_workgroup_direct.spv gemm_workgroup_staged.spv gemm_workgroup_tensor.spv; do
  cp "$build/bench/$f" "$root/.device-build/bin/" 2>/dev/null || true
done
# Debian libraries the GPU image lacks (onnx, protobuf), found through the importer's own needs.
ldd "$build"/engine/libvkcnn_onnx.so | awk '/libonnx|libprotobuf/ {print $3}' |
  xargs -r -I{} cp -L {} "$root/.device-build/lib/"
# The Fashion-MNIST test set for the sample (the training set stays behind).
mkdir -p "$root/.device-build/fashion-mnist"
cp /usr/share/datasets/fashion-mnist/t10k-* "$root/.device-build/fashion-mnist/" 2>/dev/null || true
find "$build/samples" -maxdepth 2 -type f -executable -name 'vkcnn*' -exec cp {} "$root/.device-build/bin/" \;
# The NVIDIA ICD is loaded through glvnd (libGLX_nvidia), whose libraries the GPU image lacks too:
# without them the loader finds no driver.
if ! ls "$root"/.gl/libvulkan1_*.deb "$root"/.gl/libglx0_*.deb >/dev/null 2>&1; then
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  mkdir -p /tmp/amd64/partial
  apt-get $o update -qq
  (cd "$root/.gl" && apt-get $o download libvulkan1 vulkan-validationlayers libegl1 libglvnd0 \
    libopengl0 libgl1 libglx0 libgles2)
fi
# Where the tests were built from and into: test_cli, test_onnx_torch and the sample tests hold
# these paths (the CLI, the samples, tests/data); device-run-tests.sh recreates them as links.
grep -m1 '^CMAKE_HOME_DIRECTORY:' "$build/CMakeCache.txt" | cut -d= -f2- > "$root/.device-build/source-dir"
(cd "$build" && pwd) > "$root/.device-build/build-dir"
find "$root/.device-build" -type f -exec strip --strip-debug {} \; 2>/dev/null || true
du -sh "$root/.device-build" "$root/.gl"
