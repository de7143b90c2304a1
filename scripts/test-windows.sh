#!/usr/bin/env bash
# The Windows job (.ci/run): installs what it needs, cross-builds vkcnn for 64-bit Windows with
# Debian's mingw-w64 (cmake/mingw-w64-x86_64.cmake; without ONNX: Debian has no Windows build of
# protobuf or onnx) and runs, through ctest, the core tests, the CLI and the samples under Debian's
# Wine on lavapipe, then the CLI on a .vkcnn model the Linux build compiled (compiled_model_check).
# What was found to work (issue 42):
#   - Wine's vulkan-1.dll reaches the host's Vulkan driver (lavapipe) once an X server is there:
#     everything Wine runs, runs inside xvfb-run;
#   - one persistent wineserver (-p), its output sent to /dev/null, keeps ctest from waiting on
#     Wine's background processes after each test;
#   - no validation layer runs under Wine, so these tests run without it (VKCNN_TEST_VALIDATION
#     is off in a Windows build); the Linux suite (scripts/test.sh) covers validation;
#   - Windows programs end their lines with CRLF: the checks of their output allow it.
# usage: test-windows.sh [CTEST ARGUMENTS...]
#   VKCNN_WINDOWS_BUILD_DIR  the build folder (default: build-windows)
#   VKCNN_CMAKE_ARGS         more arguments for cmake (e.g. a compiler launcher)
#   VKCNN_TEST_JOBS          tests run at once (default: the number of cores)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VKCNN_WINDOWS_BUILD_DIR:-$root/build-windows}
wine=/usr/lib/wine/wine64
wineserver=/usr/lib/wine/wineserver

# The CLI on a compiled model (issue 42): the Linux build (scripts/test.sh, before this job in
# .ci/run) compiles the Fashion-MNIST sample's model to a .vkcnn and runs it; this build's
# vkcnn.exe runs the same file under Wine (no ONNX in it) and must give the same outputs.
compiled_model_check() {
  local linux=${VKCNN_BUILD_DIR:-$root/build}/engine/vkcnn work=$build/compiled-model
  local python=/usr/bin/python3  # Debian's, with python3-numpy (another python3 may come first)
  if [ ! -x "$linux" ]; then
    echo "test-windows.sh: no Linux build at $linux to compile a model with: build it first" >&2
    return 1
  fi
  mkdir -p "$work"
  "$python" -c "import numpy; numpy.save('$work/input.npy', numpy.random.default_rng(1).random((1, 1, 28, 28), dtype=numpy.float32))"
  "$linux" compile "$root/samples/fashion_mnist/weights/fashion_mnist.onnx" --fp32 \
    -o "$work/fashion_mnist.vkcnn"
  "$linux" run "$work/fashion_mnist.vkcnn" --input "$work/input.npy" --output "$work/linux.npy"
  "$wine" "$build/bin/vkcnn.exe" run "$work/fashion_mnist.vkcnn" --input "$work/input.npy" \
    --output "$work/windows.npy"
  "$python" - "$work" <<'PY'
import glob, os, sys
import numpy as np
work = sys.argv[1]
linux = sorted(glob.glob(os.path.join(work, "linux*.npy")))
assert linux, "the Linux run wrote no outputs"
for path in linux:
    other = os.path.join(work, os.path.basename(path).replace("linux", "windows", 1))
    a, b = np.load(path), np.load(other)
    assert a.shape == b.shape and np.allclose(a, b, rtol=0, atol=1e-6), \
        f"{os.path.basename(other)} differs from the Linux run's: {np.abs(a - b).max()}"
print(f"compiled model: the Windows build's {len(linux)} outputs match the Linux build's")
PY
}

if [ "${1:-}" = "--under-x" ]; then
  # Second part, inside xvfb-run: Wine's own prefix in the build folder, no Mono or Gecko (Wine
  # would offer to download them), no debug chatter.
  shift
  export WINEPREFIX=$build/wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  mkdir -p "$WINEPREFIX"  # wineserver starts only in an existing prefix folder
  "$wineserver" -p >/dev/null 2>&1
  trap '"$wineserver" -k >/dev/null 2>&1 || true' EXIT
  "$wine" wineboot --init >/dev/null 2>&1
  cd "$build"
  ctest --output-on-failure --timeout 900 -j "${VKCNN_TEST_JOBS:-$(nproc)}" "$@"

  compiled_model_check
  exit 0
fi

"$root/scripts/install-deps.sh" --windows
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE="${VKCNN_BUILD_TYPE:-RelWithDebInfo}" \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64-x86_64.cmake" ${VKCNN_CMAKE_ARGS:-}
cmake --build "$build" --parallel "$(nproc)"
xvfb-run -a bash "$0" --under-x "$@"
