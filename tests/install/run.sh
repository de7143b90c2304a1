#!/usr/bin/env bash
# The install test (ctest install_consumers): installs the build into a temporary prefix and builds
# and runs applications that see only that prefix:
#   - the installed CLI starts (its RPATH finds the installed libraries);
#   - libvkcnn needs no ONNX or protobuf library;
#   - a C++17 CMake project through find_package(vkcnn COMPONENTS onnx) runs an ONNX model;
#   - a C++ program through pkg-config (core only) with its own volk runs a kernel;
#   - a C11 program through pkg-config uses vkcnn/vkcnn.h.
# usage: run.sh BUILD_DIR SOURCE_DIR WORK_DIR LIBDIR CXX CC GENERATOR VOLK_C
set -euo pipefail
build=$1 source=$2 work=$3 libdir=$4 cxx=$5 cc=$6 generator=$7 volk_c=$8
here=$source/tests/install
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

"$prefix/bin/vkcnn" --help >/dev/null
echo "installed CLI starts"

needed=$(readelf -d "$prefix/$libdir/libvkcnn.so" | awk '/NEEDED/ {print $5}' | tr -d '[]' | tr '\n' ' ')
case "$needed" in
  *onnx* | *protobuf* | *libvulkan*)
    echo "libvkcnn.so needs: $needed (only the C and C++ runtimes expected)" >&2
    exit 1
    ;;
esac
echo "libvkcnn.so needs: $needed"

cmake -S "$here/cmake_consumer" -B "$work/cmake_consumer" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/cmake_consumer.log"
cmake --build "$work/cmake_consumer" >>"$work/cmake_consumer.log"
"$work/cmake_consumer/consumer" "$source/fuzz/corpus/onnx/gap_flatten_gemm.onnx"

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
rpath=-Wl,-rpath,$prefix/$libdir
"$cc" -std=c11 -O1 -c "$volk_c" -o "$work/volk.o"
# shellcheck disable=SC2046
"$cxx" -std=c++20 -O1 "$here/volk_consumer.cpp" "$work/volk.o" $(pkg-config --cflags --libs vkcnn) \
  -ldl "$rpath" -o "$work/volk_consumer"
"$work/volk_consumer"

# shellcheck disable=SC2046
"$cc" -std=c11 -pedantic -Wall -Wextra -Werror "$here/c_consumer.c" \
  $(pkg-config --cflags --libs vkcnn_onnx) "$rpath" -o "$work/c_consumer"
"$work/c_consumer"
echo "install test: ok"
