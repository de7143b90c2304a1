#!/usr/bin/env bash
# The README's first command: installs dependencies, builds, and runs the headless sample.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build=${VKCNN_BUILD_DIR:-$root/build}
"$build/samples/vkcnn-smoke"
"$build/samples/vkcnn-fashion-mnist" "$@"
