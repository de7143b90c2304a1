#!/usr/bin/env bash
# Configures and builds vkcnn into ${VKCNN_BUILD_DIR:-build} (Release with asserts off by default).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VKCNN_BUILD_DIR:-$root/build}
type=${VKCNN_BUILD_TYPE:-RelWithDebInfo}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE="$type" ${VKCNN_CMAKE_ARGS:-}
cmake --build "$build" --parallel "$(nproc)"
