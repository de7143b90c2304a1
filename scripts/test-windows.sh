#!/usr/bin/env bash
# The Windows job (.ci/run): installs what it needs, cross-builds vkcnn for 64-bit Windows with
# Debian's mingw-w64 (cmake/mingw-w64-x86_64.cmake; without ONNX: Debian has no Windows build of
# protobuf or onnx) and runs, through ctest, the core tests, the CLI and the samples under Debian's
# Wine on lavapipe. What was found to work (issue 42):
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

  # TODO(issue 42, the compiled model format): once `vkcnn compile` and .vkcnn loading are on
  # main, run the CLI on a .vkcnn model here, compiled by the Linux build and run by Windows':
  #   "$root/build/engine/vkcnn" compile "$root/samples/fashion_mnist/weights/fashion_mnist.onnx" \
  #     -o "$build/fashion_mnist.vkcnn"
  #   "$wine" "$build/bin/vkcnn.exe" run "$build/fashion_mnist.vkcnn" --input ... (check the top 1)
  # and register it with ctest in tests/CMakeLists.txt beside the other Windows CLI checks.
  exit 0
fi

"$root/scripts/install-deps.sh" --windows
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE="${VKCNN_BUILD_TYPE:-RelWithDebInfo}" \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/mingw-w64-x86_64.cmake" ${VKCNN_CMAKE_ARGS:-}
cmake --build "$build" --parallel "$(nproc)"
xvfb-run -a bash "$0" --under-x "$@"
