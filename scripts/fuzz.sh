#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan, build-fuzz/) and runs each for SECONDS
# (default 60) on its corpus, after replaying fuzz/regressions/<target>/. Fails on any crash,
# sanitizer report, leak, timeout (30 s per input), out-of-memory (RSS over 2048 MB, or one
# allocation over 512 MB) or a validation message (fuzz_descriptors runs with validation on).
#   scripts/fuzz.sh [SECONDS]
# VKCNN_FUZZ_BUILD_DIR overrides build-fuzz; VKCNN_FUZZ_TARGETS picks targets (space-separated);
# VKCNN_FUZZ_TRACE=N makes the targets print their RSS and vkcnn's memory every N inputs.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${VKCNN_FUZZ_BUILD_DIR:-$root/build-fuzz}"
targets=(${VKCNN_FUZZ_TARGETS:-fuzz_onnx fuzz_dat fuzz_descriptors fuzz_model_format})
jobs="$(nproc)"

"$root/scripts/install-deps.sh"

if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja \
    -DVKCNN_BUILD_FUZZERS=ON -DVKCNN_BUILD_TESTS=OFF -DVKCNN_BUILD_SAMPLES=OFF \
    -DVKCNN_SANITIZE=address,undefined
fi
cmake --build "$build" -j "$jobs"

# The fuzzers run on lavapipe; the validation layer comes from the system.
export VK_ICD_FILENAMES="${VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}"
export VKCNN_DEVICE="${VKCNN_DEVICE:-llvmpipe}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/fuzz/lsan.supp:print_suppressions=0}"
limits=(-rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=30)

# Inputs one fuzzing process may run before the next one goes on from the corpus (-1: no limit).
# fuzz_descriptors runs with the validation layer, and Debian 12's (1.3.239) leaks its state for
# every command pool while synchronization validation is on (KhronosGroup/Vulkan-ValidationLayers
# issue 6033; gone without the layer): measured about 3.5 KB per input under ASan (2.2 KB
# without), on top of about 600 MB once warm. 250000 inputs per process keep that under about
# 1.5 GB, within -rss_limit_mb whatever the machine's speed, so anything over it is a finding.
runs_per_process() {
  case "$1" in
    fuzz_descriptors) echo 250000 ;;
    *) echo -1 ;;
  esac
}

work="$build/fuzz-work"
mkdir -p "$work"
status=0
for t in "${targets[@]}"; do
  corpus="$work/corpus-$t"
  mkdir -p "$corpus"
  seeds=("$root/fuzz/corpus/${t#fuzz_}")
  if [ "$t" = fuzz_onnx ]; then
    # A few small conformance models from Debian's libonnx-testdata (copied, never committed).
    extra="$work/onnx-testdata-seeds"
    mkdir -p "$extra"
    for m in /usr/share/libonnx-testdata/data/node/test_{conv_with_strides_padding,maxpool_2d_pads,averagepool_2d_pads,batchnorm_example,relu,add,concat_2d_axis_0,softmax_axis_1,gemm_default_no_bias,reshape_reduced_dims,resize_upsample_scales_nearest,globalaveragepool}/model.onnx; do
      [ -f "$m" ] && cp -f "$m" "$extra/$(basename "$(dirname "$m")").onnx"
    done
    seeds+=("$extra")
  fi
  regressions="$root/fuzz/regressions/$t"
  if compgen -G "$regressions/*" > /dev/null; then
    echo "== $t: replaying $(ls "$regressions" | wc -l) regression input(s)"
    if ! "$build/fuzz/$t" "${limits[@]}" "$regressions"/* > "$work/$t-regressions.log" 2>&1; then
      tail -n 40 "$work/$t-regressions.log"
      echo "fuzz: $t FAILED on a regression input"
      status=1
      continue
    fi
  fi
  echo "== $t: fuzzing for ${seconds}s"
  artifacts="$work/artifacts-$t/"
  mkdir -p "$artifacts"
  log="$work/$t.log"
  : > "$log"
  start=$(date +%s)
  processes=0
  failed=0
  while left=$(( seconds - ($(date +%s) - start) )); [ "$left" -gt 0 ]; do
    processes=$((processes + 1))
    if ! "$build/fuzz/$t" "${limits[@]}" -runs="$(runs_per_process "$t")" \
        -max_total_time="$left" -print_final_stats=1 -artifact_prefix="$artifacts" \
        "$corpus" "${seeds[@]}" >> "$log" 2>&1; then
      failed=1
      break
    fi
  done
  if [ "$failed" = 0 ]; then
    elapsed=$(( $(date +%s) - start ))
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' |
      awk '{ n += $1 } END { print n + 0 }')
    rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' |
      awk '$1 > m { m = $1 } END { print m + 0 }')
    echo "fuzz: $t ok: $execs executions in ${elapsed}s ($(( execs / (elapsed > 0 ? elapsed : 1) )) exec/s)," \
      "$processes process(es), peak RSS ${rss} MB, corpus $(ls "$corpus" | wc -l) files"
  else
    tail -n 60 "$log"
    echo "fuzz: $t FAILED; the input is in $artifacts (add it to fuzz/regressions/$t/ once fixed)"
    status=1
  fi
done
exit $status
