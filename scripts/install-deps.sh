#!/usr/bin/env bash
# Installs vkcnn's build and test dependencies from Debian 12 packages. Idempotent: packages that
# are already installed are left alone, and apt is only asked when something is missing.
#   --windows  also what the Windows cross build and its tests under Wine need
#              (scripts/test-windows.sh)
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  clang-14 libclang-rt-14-dev
  libvulkan-dev libvulkan-volk-dev
  glslang-tools glslang-dev spirv-cross libspirv-cross-c-shared-dev spirv-tools
  doctest-dev
  libstb-dev
  zlib1g-dev dataset-fashion-mnist
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  mesa-vulkan-drivers vulkan-validationlayers
  python3 python3-dev pybind11-dev python3-numpy
  # the wheel (pip install ., python3 -m build --wheel --no-isolation) and its venv test
  python3-setuptools python3-wheel python3-build python3-venv python3-pip
  # the API reference (cmake --build build --target docs; optional: the target is skipped without it)
  doxygen
  # vkcnn.dask and its LocalCluster test (docs/scale-out.md)
  python3-distributed python3-pil
  # inspect --dot's test renders the graph it draws (dot -Tsvg)
  graphviz
  # scripts/export-test-models.py (regenerates tests/data/torch; the tests read the files only)
  python3-torch python3-torchvision
)
if [ "${1:-}" = "--windows" ]; then
  packages+=(
    # mingw-w64 with the POSIX thread model (std::thread, std::mutex) and its dlltool
    g++-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64
    # zlib for Windows (the Fashion-MNIST sample reads its gzip data)
    libz-mingw-w64-dev
    # Wine runs the programs (/usr/lib/wine/wine64); Xvfb gives Wine's vulkan-1.dll the X server
    # it needs to reach the host's Vulkan driver; xvfb-run needs xauth
    wine64 xvfb xauth
  )
elif [ $# -gt 0 ]; then
  echo "usage: install-deps.sh [--windows]" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
