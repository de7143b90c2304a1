#!/usr/bin/env bash
# Builds the library and the tests with AddressSanitizer (LeakSanitizer included) and
# UndefinedBehaviorSanitizer into ${VKCNN_SANITIZE_BUILD_DIR:-build-asan} and runs the whole ctest
# suite under them, with the validation layer on as always. Any report fails the test that made it.
#
# The Vulkan loader, the validation layer and the driver are dlopen'ed and not instrumented; ASan
# still sees their heap, so LeakSanitizer stays on for everything and tests/sanitizers/lsan.supp
# names the few third-party modules whose own leaks are suppressed (each with its reason).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${VKCNN_SANITIZE_BUILD_DIR:-$root/build-asan}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# -O1 -g1 instead of RelWithDebInfo's -O2 -g: a third of the compile time (instrumented, optimised
# code with full debug info made this build the slowest step of CI), line numbers still in every
# report, and no -DNDEBUG, so assertions are on.
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DVKCNN_SANITIZE=address,undefined ${VKCNN_CMAKE_ARGS:-}
cmake --build "$build" --parallel "$(nproc)"
# A 64 MiB quarantine (default 256): the driver frees large blocks at a high rate, and with the
# default the soak test's resident memory climbed past 2 GiB in 12 s (its heap in use stayed flat).
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:quarantine_size_mb=64:${ASAN_OPTIONS:-}
# The soak test runs for half its normal time here (each run is slower under ASan).
export VKCNN_SOAK_SECONDS=${VKCNN_SOAK_SECONDS:-10}
export LSAN_OPTIONS=suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}
# UBSan only prints and carries on by default; halting turns a report into a failed test.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}
cd "$build"
ctest --output-on-failure --timeout 900 -j "${VKCNN_TEST_JOBS:-$(nproc)}" "$@"
