#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, and runs the whole suite through ctest
# on the default Vulkan device (lavapipe where there is no GPU) with the validation layer on.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build=${VKCNN_BUILD_DIR:-$root/build}
cd "$build"
ctest --output-on-failure --timeout 900 -j "${VKCNN_TEST_JOBS:-$(nproc)}" "$@"
