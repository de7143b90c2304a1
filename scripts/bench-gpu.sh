#!/usr/bin/env bash
# The GPU benchmarks in one script, run on the GPU machine:
#   bash scripts/bench-gpu.sh [OPTIONS] [RESULTS_DIR] [NETWORKS]
# Without --steps it is the standing: the torchvision networks exported with fixed-seed weights,
# PyTorch timed (eager, CUDA graph, torch.compile; fp16, fp32 without TF32; batch 1 and 32),
# vkcnn timed on the same models and inputs (fp16 and fp32 storage) and checked against PyTorch's
# outputs, and RESULTS_DIR/results.md (rewritten after every network, so a run cut short still
# reports what it measured). NETWORKS: comma-separated torchvision names (default the twelve).
#
# vkcnn is built on a Debian machine and carried (the GPU machine has a driver and PyTorch but no
# Debian dev packages): scripts/device-pack.sh there first, and carry .device-build and .gl.
#
# Steps (--steps a,b,...), each under the work folder, whose results (the models left out) go to
# RESULTS_DIR/results.tgz after every step:
#   pytorch   export and time PyTorch eager and CUDA graph (skipped where the work folder has them)
#   compile   torch.compile(mode="reduce-overhead") a network at a time, for the configurations
#             not yet timed: a call starts networks only while --compile-timeout seconds of it
#             are left, and the next call goes on (tens of seconds a configuration)
#   vkcnn     vkcnn bench for every network and --configs pair, a profile each; results.md
#   standing  pytorch,compile,vkcnn (the default); --no-compile leaves torch.compile out
#   tests     test binaries under validation with synchronization validation (--tests)
#   ab        the networks under conditions alternated (--conditions, --order): ab/ab.md
#   profile   vkcnn profile --levels of every network and --configs pair
#   shapes    every convolution shape of the networks against cuDNN (conv_shapes.py, --shapes-args)
#   gemm      the matrix-unit GEMM ceiling (bench/gemm_ceiling.comp, --gemm-sizes)
#   wgscope   the workgroup-scope GEMM ceiling (vkcnn-bench-wgscope, --wgscope-tiles)
#   load      cold starts phase by phase: two processes sharing a pipeline cache, one load thread,
#             protobuf copying the weights, Context creation, the load's tests (issue #13);
#             --before DIR compares an older build's vkcnn and libvkcnn*.so*
#   load-diag the load by load threads with page faults and CPU time (getrusage), perf if present
#   tensor    convnext_tiny against PyTorch float64, its Tensor conversions and transposes against
#             same-size element-wise ops (issue #12)
#
# Options (the environment variable in brackets sets the same):
#   --steps LIST             the steps above, comma-separated (standing)
#   --pack DIR               the carried build: lib/, bin/ (.device-build) [VKCNN_BENCH_PACK]
#   --work DIR               the work folder, kept between calls (/tmp/vkcnn-bench) [VKCNN_BENCH_WORK]
#   --configs "F:B ..."      format:batch pairs ("fp16:1 fp16:32 fp32:1 fp32:32") [VKCNN_BENCH_CONFIGS]
#   --iterations N           vkcnn's timed runs (100) [VKCNN_BENCH_ITERATIONS]
#   --pytorch-runs N         PyTorch's timed runs (100), warm-up N/5
#   --tune                   `vkcnn tune` each pair first; the tuning file lives in the work
#                            folder's cache/ [VKCNN_BENCH_TUNE=1]
#   --no-compile             no torch.compile in the standing [VKCNN_BENCH_COMPILE=0]
#   --compile-budget S       seconds a call may start networks' torch.compile in (480)
#   --compile-timeout S      seconds one network's torch.compile may take, its 4 configurations
#                            (300): past it the child is killed and says so in results.md
#   --compile-dtypes LIST    the formats torch.compile times (fp16,fp32)
#   --tests "T;T"            the tests step's binaries, each "NAME [ARGS]" (doctest filters pass
#                            unglobbed; no spaces inside one: * for them), ';' between them
#                            ("test_convolution")
#   --conditions "N:S;N:S"   the ab step's conditions: a name, then a comma list of VAR=VALUE
#                            and lib=DIR (a folder of libvkcnn*.so put first), bin=DIR (a folder
#                            with the vkcnn tool to run instead); "A:;B:VKCNN_X=0"; an older build
#                            against this one: "old:lib=OLD/lib,bin=OLD/bin;new:"
#   --order "A B B A"        the order of the rounds (the conditions, then reversed)
#   --shapes-args "ARGS"     conv_shapes.py's arguments ("--formats fp16 --batches 32,1 --tiles auto")
#   --gemm-sizes "M N K;..." the gemm step's problems ("8192 8192 8192")
#   --wgscope-tiles LIST     vkcnn-bench-wgscope's tiles (128x128x16w128,128x256x16w256)
#   --before DIR             the load steps' older build to alternate with
#   --budget S               a call starts no further network, test or shape after S seconds
#                            (570, under the device tool's 10 minutes) [VKCNN_BENCH_BUDGET]
# Figures are comparable within one call; bench/README.md says how each result was read.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
steps=standing pack=${VKCNN_BENCH_PACK:-$root/.device-build} work=${VKCNN_BENCH_WORK:-/tmp/vkcnn-bench}
configs=${VKCNN_BENCH_CONFIGS:-fp16:1 fp16:32 fp32:1 fp32:32} iterations=${VKCNN_BENCH_ITERATIONS:-100}
pt_runs=100 tune=${VKCNN_BENCH_TUNE:-0} compile=${VKCNN_BENCH_COMPILE:-1} compile_budget=480
compile_timeout=300 compile_dtypes=fp16,fp32 tests=test_convolution conditions="" order="" before=""
shapes_args="--formats fp16 --batches 32,1 --tiles auto" gemm_sizes="8192 8192 8192"
gemm_fp16acc_tiles="2x4/4x2/2;2x4/4x4/1;4x2/4x4/1;2x4/8x4/1;4x2/4x8/1;4x4/4x4/1;4x4/4x2/1"
wgscope_tiles=128x128x16w128,128x256x16w256 budget=${VKCNN_BENCH_BUDGET:-570}
positional=()
while [ $# -gt 0 ]; do
  case "$1" in
    --steps) steps=$2; shift ;;
    --pack) pack=$2; shift ;;
    --work) work=$2; shift ;;
    --configs) configs=$2; shift ;;
    --iterations) iterations=$2; shift ;;
    --pytorch-runs) pt_runs=$2; shift ;;
    --tune) tune=1 ;;
    --no-compile) compile=0 ;;
    --compile-budget) compile_budget=$2; shift ;;
    --compile-timeout) compile_timeout=$2; shift ;;
    --compile-dtypes) compile_dtypes=$2; shift ;;
    --tests) tests=$2; shift ;;
    --conditions) conditions=$2; shift ;;
    --order) order=$2; shift ;;
    --shapes-args) shapes_args=$2; shift ;;
    --gemm-sizes) gemm_sizes=$2; shift ;;
    --wgscope-tiles) wgscope_tiles=$2; shift ;;
    --before) before=$2; shift ;;
    --budget) budget=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --*) echo "bench-gpu.sh: unknown option $1 (--help lists them)" >&2; exit 2 ;;
    *) positional+=("$1") ;;
  esac
  shift
done
out=${positional[0]:-${OUT:-$root/bench-out}}
networks=${positional[1]:-resnet18,resnet50,mobilenet_v2,squeezenet1_1,googlenet,densenet121,shufflenet_v2_x1_0,efficientnet_b0,vgg16,mobilenet_v3_large,resnext50_32x4d,regnet_y_800mf}
steps=${steps//standing/pytorch,compile,vkcnn}
[ "$compile" = 1 ] || steps=$(echo ",$steps," | sed 's/,compile,/,/g; s/^,//; s/,$//')
pack=$(cd "$pack" 2>/dev/null && pwd) || { echo "bench-gpu.sh: no build at --pack (scripts/device-pack.sh)" >&2; exit 2; }
[ -n "$before" ] && { before=$(cd "$before" && pwd) || exit 2; }
mkdir -p "$out" "$work/models"
out=$(cd "$out" && pwd) work=$(cd "$work" && pwd)
start=$(date +%s)
bench=$root/scripts/bench
vkcnn=$pack/bin/vkcnn

elapsed() { echo $(( $(date +%s) - start )); }
left() { echo $(( budget - $(elapsed) )); }
spent() { [ "$(left)" -le 0 ] && echo "   budget spent after $(elapsed) s: $*" | tee -a "$work/steps.log"; }
log() { echo "[$(elapsed) s] $*" | tee -a "$work/steps.log"; }
snap() { (cd "$work" && tar czf "$out/results.tgz" --exclude=./models --exclude='./cache*' \
  --exclude='*.onnx' --exclude='*.npy' . 2>/dev/null); }
# The NVIDIA ICD's loader and glvnd libraries, which the GPU image lacks (the validation layer
# only where a step asks for it).
if command -v nvidia-smi > /dev/null && ls "$root"/.gl/*.deb > /dev/null 2>&1; then
  for f in "$root"/.gl/*.deb; do
    case "$f" in *validationlayers*) ;; *) dpkg -x "$f" / ;; esac
  done
  ldconfig
fi
export LD_LIBRARY_PATH=$pack/lib:${LD_LIBRARY_PATH:-}
export VKCNN_PIPELINE_CACHE_DIR=${VKCNN_PIPELINE_CACHE_DIR:-$work/cache}
{ "$vkcnn" info 2>&1; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem \
  --format=csv 2>&1; } > "$work/device.txt"
with_validation() {  # COMMAND...: under the validation layer with synchronization validation
  local vl=/tmp/vkcnn-vl
  if [ ! -d $vl/usr ] && ls "$root"/.gl/vulkan-validationlayers_*.deb > /dev/null 2>&1; then
    mkdir -p $vl && dpkg -x "$root"/.gl/vulkan-validationlayers_*.deb $vl
  fi
  if [ -d $vl/usr ]; then
    VK_LAYER_PATH=$vl/usr/share/vulkan/explicit_layer.d VKCNN_VALIDATION=1 \
      LD_LIBRARY_PATH=$vl/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH "$@"
  else
    VKCNN_VALIDATION=1 "$@"
  fi
}
summary_of() { grep -E '^\[doctest\] (test cases|assertions)' "$1" | tr -s ' ' | tr '\n' ' '; }

step_pytorch() {
  if [ ! -f "$work/models/pytorch.json" ]; then
    log "pytorch: export, eager and CUDA graph ($networks)"
    PYTHONUNBUFFERED=1 python3 "$bench/pytorch_side.py" "$work/models" --networks "$networks" \
      --runs "$pt_runs" --warmup $(( pt_runs / 5 + 1 )) --no-compile >> "$work/pytorch.log" 2>&1 ||
      tail -20 "$work/pytorch.log"
  fi
  cp "$work/models/pytorch.json" "$work/" 2>/dev/null
}

step_compile() {
  # A network may take --compile-timeout seconds: it starts only while that much of the call is left.
  local b=$(( $(left) - compile_timeout ))
  [ $b -gt "$compile_budget" ] && b=$compile_budget
  if [ $b -le 0 ]; then
    log "compile: less than --compile-timeout ($compile_timeout s) of this call left: call the compile step again"
    return
  fi
  log "compile: torch.compile(mode=\"reduce-overhead\"), networks started within $b s"
  PYTHONUNBUFFERED=1 python3 "$bench/pytorch_side.py" "$work/models" --networks "$networks" \
    --runs "$pt_runs" --warmup $(( pt_runs / 5 + 1 )) --dtypes "$compile_dtypes" --compile-only --compile-budget $b \
    --compile-timeout "$compile_timeout" 2>&1 | tee -a "$work/pytorch.log" | grep '^pytorch:'
  [ "${PIPESTATUS[0]}" = 3 ] && log "compile: networks left: call the compile step again"
  cp "$work"/models/compile_*.json "$work/" 2>/dev/null
}

step_vkcnn() {
  local net config fmt batch cold
  [ -f "$work/models/pytorch.json" ] || step_pytorch
  cp "$work/models/pytorch.json" "$work"/models/compile_*.json "$work/" 2>/dev/null
  for net in ${networks//,/ }; do
    spent "vkcnn from $net on" && break
    for config in $configs; do
      fmt=${config%%:*} batch=${config##*:}
      if [ "$tune" = 1 ]; then
        echo "== vkcnn tune $net $fmt batch $batch" >> "$work/tune.log"
        "$vkcnn" tune "$work/models/$net.onnx" --$fmt --batch "$batch" --iterations 3 >> "$work/tune.log" 2>&1 ||
          echo "   FAILED: vkcnn tune $net $fmt batch $batch" | tee -a "$work/tune.log"
      fi
      cold=""
      [ "$batch" = 1 ] && cold="--cold"
      echo "== vkcnn $net $fmt batch $batch" >> "$work/vkcnn.log"
      timeout 120 "$vkcnn" bench "$work/models/$net.onnx" --$fmt --batch "$batch" --iterations "$iterations" $cold \
        --input "$work/models/${net}_b${batch}_input.npy" \
        --reference "$work/models/${net}_b${batch}_output.npy" \
        --json "$work/vkcnn_${net}_${fmt}_b${batch}.json" >> "$work/vkcnn.log" 2>&1 ||
        echo "   FAILED: vkcnn bench $net $fmt batch $batch" | tee -a "$work/vkcnn.log"
    done
    "$vkcnn" profile "$work/models/$net.onnx" --fp16 > "$work/profile_${net}_fp16.txt" 2>&1
    [[ " $configs " == *" fp16:32 "* ]] &&
      "$vkcnn" profile "$work/models/$net.onnx" --fp16 --batch 32 --iterations 3 > "$work/profile_${net}_fp16_b32.txt" 2>&1
    VKCNN_BENCH_CONFIGS=$configs python3 "$bench/report.py" "$work" > /dev/null && cp "$work/results.md" "$out/"
    snap
  done
  cat "$out/results.md"
}

step_tests() {
  local t i=0 name args
  mkdir -p "$work/tests"
  IFS=';' read -ra list <<< "$tests"
  for t in "${list[@]}"; do
    spent "tests from $t on" && break
    set -f; set -- $t; set +f  # doctest filters are not file names
    name=$1; shift; i=$((i + 1))
    with_validation timeout $(( $(left) > 60 ? $(left) : 60 )) "$pack/bin/$name" "$@" > "$work/tests/$i-$name.txt" 2>&1
    log "tests: $name $* rc=$?: $(summary_of "$work/tests/$i-$name.txt")" | tee -a "$work/tests/summary.txt"
    snap
  done
}

step_ab() {
  local c name spec item round=0 net config fmt batch vars lib tool
  declare -A env_of lib_of bin_of
  local names=()
  [ -n "$conditions" ] || { echo "bench-gpu.sh: the ab step needs --conditions" >&2; return 1; }
  IFS=';' read -ra list <<< "$conditions"
  for c in "${list[@]}"; do
    name=${c%%:*} spec=${c#*:}; [ "$spec" = "$c" ] && spec=""
    names+=("$name") env_of[$name]="" lib_of[$name]="" bin_of[$name]=""
    IFS=',' read -ra items <<< "$spec"
    for item in "${items[@]}"; do
      case "$item" in
        lib=*) lib_of[$name]=$(cd "$root" && cd "${item#lib=}" && pwd) || return 1 ;;
        bin=*) bin_of[$name]=$(cd "$root" && cd "${item#bin=}" && pwd) || return 1 ;;
        *=*) env_of[$name]="${env_of[$name]} $item" ;;
      esac
    done
  done
  [ -n "$order" ] || order="${names[*]} $(printf '%s\n' "${names[@]}" | tac | tr '\n' ' ')"
  for name in $order; do
    [ -n "${env_of[$name]+set}" ] || { echo "bench-gpu.sh: --order names $name, not a condition" >&2; return 1; }
  done
  [ -f "$work/models/pytorch.json" ] || step_pytorch
  mkdir -p "$work/ab"
  log "ab: ${names[*]}, rounds $order"
  for name in $order; do
    round=$((round + 1))
    for net in ${networks//,/ }; do
      spent "ab from round $round ($name) on" && break 2
      for config in $configs; do
        fmt=${config%%:*} batch=${config##*:}
        lib=${lib_of[$name]:+${lib_of[$name]}:}$LD_LIBRARY_PATH
        tool=${bin_of[$name]:+${bin_of[$name]}/vkcnn}
        env ${env_of[$name]} LD_LIBRARY_PATH="$lib" VKCNN_PIPELINE_CACHE_DIR="$work/cache-$name" \
          timeout 120 "${tool:-$vkcnn}" bench "$work/models/$net.onnx" --$fmt --batch "$batch" --iterations "$iterations" \
          --input "$work/models/${net}_b${batch}_input.npy" --reference "$work/models/${net}_b${batch}_output.npy" \
          --json "$work/ab/${name}_${net}_${fmt}_b${batch}_${round}.json" > "$work/ab/${name}_${net}_${fmt}_b${batch}_${round}.txt" 2>&1 ||
          echo "   FAILED: $name $net $fmt batch $batch" | tee -a "$work/ab/failed.txt"
      done
    done
    python3 "$bench/report.py" --ab "$work/ab" "${names[@]}" > /dev/null && cp "$work/ab/ab.md" "$out/"
    snap
  done
  cat "$out/ab.md"
}

step_profile() {
  local net config fmt batch
  mkdir -p "$work/profile"
  [ -f "$work/models/pytorch.json" ] || step_pytorch
  for net in ${networks//,/ }; do
    spent "profile from $net on" && break
    for config in $configs; do
      fmt=${config%%:*} batch=${config##*:}
      timeout 120 "$vkcnn" profile "$work/models/$net.onnx" --$fmt --batch "$batch" --levels --iterations 5 \
        > "$work/profile/${net}_${fmt}_b${batch}.txt" 2>&1
    done
    snap
  done
}

step_shapes() {
  log "shapes: conv_shapes.py $shapes_args"
  PYTHONUNBUFFERED=1 timeout $(( $(left) > 60 ? $(left) : 60 )) python3 "$bench/conv_shapes.py" \
    --bench "$pack/bin/vkcnn-bench-conv" --out "$work/shapes" $shapes_args > "$work/shapes.log" 2>&1
  log "shapes: rc=$?"; tail -n 5 "$work/shapes.log"
  cp "$work"/shapes/conv_*.md "$out/" 2>/dev/null
  snap
}

step_gemm() {
  local size
  IFS=';' read -ra list <<< "$gemm_sizes"
  for size in "${list[@]}"; do
    spent "gemm from $size on" && break
    timeout 120 "$pack/bin/vkcnn-bench-conv" gemm "$pack/bin/gemm_ceiling.spv" $size --iterations 20
    # float16 accumulators (issue 40): the fp32 tiles, and the larger ones half-size fragments
    # leave registers for.
    [ -f "$pack/bin/gemm_ceiling_fp16acc.spv" ] && ! spent "gemm fp16acc from $size on" &&
      timeout 180 "$pack/bin/vkcnn-bench-conv" gemm "$pack/bin/gemm_ceiling_fp16acc.spv" $size \
        --iterations 20 --modes 0,4,16,20 --gemm-tiles "$gemm_fp16acc_tiles" | sed 's/^{"gemm"/{"accumulate": "fp16", "gemm"/'
  done > "$work/gemm.jsonl" 2>&1
  log "gemm: $(grep -c tflops "$work/gemm.jsonl") configurations timed"; cat "$work/gemm.jsonl"
  snap
}

step_wgscope() {
  local size variant tile rc
  mkdir -p "$work/wgscope"
  timeout 60 "$pack/bin/vkcnn-bench-wgscope" info > "$work/wgscope/info.jsonl" 2>&1
  # One process a configuration, each under its own timeout: a configuration can hang the GPU
  # (seen: 64x64x32w128 direct) or kill the driver's compiler.
  for size in ${gemm_sizes%% *}; do
    for variant in direct staged tensor; do
      for tile in ${wgscope_tiles//,/ }; do
        spent "wgscope from $variant $tile on" && break 3
        timeout 40 "$pack/bin/vkcnn-bench-wgscope" gemm "$variant=$pack/bin/gemm_workgroup_$variant.spv" \
          "$tile" $size $size $size --iterations 20 2>/dev/null | grep '"variant"'
        rc=${PIPESTATUS[0]}
        [[ $rc != 0 ]] && echo "{\"variant\": \"$variant\", \"tile\": \"$tile\", \"size\": $size, \"rc\": $rc}"
      done
    done
  done > "$work/wgscope/gemm.jsonl"
  cat "$work/wgscope/gemm.jsonl"
  snap
}

export_load_models() {  # resnet50 and vgg16 as one file each in /tmp, unless there
  local m
  for m in ${VKCNN_LOAD_MODELS:-resnet50 vgg16}; do
    [ -s /tmp/$m.onnx ] || (cd /tmp && timeout 120 python3 "$bench/load_export.py" $m)
  done
}

step_load() {
  local w=$work/load m r=$work/load/results.txt
  rm -rf "$w" && mkdir -p "$w"
  { nvidia-smi --query-gpu=name,driver_version --format=csv; echo "cores: $(nproc)"; } > "$r" 2>&1
  export_load_models >> "$r" 2>&1
  cold() {  # label bin-dir lib-dir cache model [env...]
    local label=$1 bin=$2 lib=$3 cache=$4 m=$5; shift 5
    echo "== $label $m ($*)" >> "$r"
    env LD_LIBRARY_PATH="$lib:$pack/lib" __GL_SHADER_DISK_CACHE=0 "$@" timeout 60 "$bin/vkcnn" bench \
      /tmp/$m.onnx --cold-only --cache-dir "$w/cache-$cache-$m" --json "$w/$label-$m.json" 2>&1 |
      grep -v "^vkcnn:" >> "$r"
  }
  # Two processes a model sharing a pipeline cache (the first writes it, the second reads it),
  # NVIDIA's own shader cache off; the second again on one load thread and with protobuf copying
  # the weights.
  for m in ${VKCNN_LOAD_MODELS:-resnet50 vgg16}; do
    cold after-p1 "$pack/bin" "$pack/lib" after $m
    cold after-p2 "$pack/bin" "$pack/lib" after $m
    cold after-p2-threads1 "$pack/bin" "$pack/lib" after $m VKCNN_LOAD_THREADS=1
    cold after-p2-nostrip "$pack/bin" "$pack/lib" after $m VKCNN_STRIP_RAW_DATA=0
    if [ -n "$before" ]; then
      cold before-p1 "$before" "$before" before $m
      cold before-p2 "$before" "$before" before $m
    fi
  done
  echo "== Context creation (vkcnn-bench-context 3)" >> "$r"
  VKCNN_PIPELINE_CACHE_DIR=$w/cache-after-resnet50 timeout 30 "$pack/bin/vkcnn-bench-context" 3 >> "$r" 2>&1
  echo "== Context creation, the loader limited to the NVIDIA driver (VK_LOADER_DRIVERS_SELECT)" >> "$r"
  VKCNN_PIPELINE_CACHE_DIR=$w/cache-after-resnet50 VK_LOADER_DRIVERS_SELECT='*nvidia*' \
    timeout 30 "$pack/bin/vkcnn-bench-context" 3 >> "$r" 2>&1
  cold after-p2-nvidia-only "$pack/bin" "$pack/lib" after resnet50 VK_LOADER_DRIVERS_SELECT='*nvidia*'
  # The load's paths under validation: layers packed on threads, loads failing allocation by
  # allocation.
  local t
  set -f
  for t in "test_convolution -tc=*threads*,*parallelRanges*,*matrix-unit*" test_session test_graph; do
    set -- $t
    with_validation timeout 60 "$pack/bin/$1" "${@:2}" > "$w/$1.log" 2>&1
    echo "$1 rc=$?: $(summary_of "$w/$1.log")" >> "$r"
  done
  set +f
  python3 "$bench/load_side.py" table "$w" > "$w/table.txt" 2>&1
  cat "$w/table.txt" >> "$r"
  cp "$w/table.txt" "$out/load-table.txt"
  snap
  cat "$r"
}

step_load_diag() {
  local w=$work/load-diag r=$work/load-diag/diag.txt t k
  rm -rf "$w" && mkdir -p "$w"
  echo "cores: $(nproc)" > "$r"
  VKCNN_LOAD_MODELS=resnet50 export_load_models >> "$r" 2>&1
  diag() { __GL_SHADER_DISK_CACHE=0 python3 "$bench/load_side.py" rusage "$1" "$w" "$pack/bin/vkcnn" "${@:2}" >> "$r" 2>&1; }
  diag warmup  # writes the pipeline cache
  for t in 1 2 4 8 0; do
    if [ "$t" = 0 ]; then diag threads-all; else diag threads-$t VKCNN_LOAD_THREADS=$t; fi
  done
  diag threads-all-2
  if [ -n "$before" ]; then
    for k in 1 2 3; do
      diag before-$k LD_LIBRARY_PATH="$before:$pack/lib"
      diag after-$k
    done
  fi
  diag unbatched VKCNN_UPLOAD_BATCH=0
  if command -v perf > /dev/null; then
    __GL_SHADER_DISK_CACHE=0 perf record -g -F 4999 -o "$w/perf.data" "$vkcnn" bench /tmp/resnet50.onnx \
      --cold-only --cache-dir "$w/cache" > /dev/null 2>&1
    perf report -i "$w/perf.data" --no-children -g none --sort comm,dso,symbol 2>/dev/null |
      grep -E '^ +[0-9]' | head -80 > "$w/perf.txt"
    rm -f "$w/perf.data"
  else
    echo "no perf on this machine" >> "$r"
  fi
  cp "$r" "$out/"
  snap
  cat "$r"
}

step_tensor() {
  local w=$work/tensor s=$work/tensor/tensor-summary.md fmt target t0 limit=120
  mkdir -p "$w"
  { echo "# convnext_tiny through vkcnn (issue #12)"; echo; echo '```'
    "$vkcnn" info 2>&1 | head -3
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
    echo '```'; } > "$s"
  if [ ! -f "$w/convnext_tiny.onnx" ]; then
    python3 "$bench/tensor_side.py" export "$w" > "$w/export.log" 2>&1 ||
      { cat "$w/export.log"; echo "export failed" >> "$s"; return 1; }
  fi
  tail -1 "$w/export.log" | sed 's/^/PyTorch: /' >> "$s"
  { echo; echo "## vkcnn run against PyTorch (float64, CPU)"; echo
    echo "- PyTorch's own float32 (CPU): $(python3 "$bench/tensor_side.py" compare "$w/pytorch_fp32.npy" "$w/reference.npy" 1e-4)"
  } >> "$s"
  for fmt in fp32 fp16; do
    target=1e-4; [ $fmt = fp16 ] && target=2e-2
    rm -f "$w/out_$fmt.npy"
    t0=$(date +%s.%N)
    timeout $limit "$vkcnn" run "$w/convnext_tiny.onnx" --$fmt --input "$w/input.npy" \
      --output "$w/out_$fmt.npy" --json "$w/run_$fmt.json" > "$w/run_$fmt.log" 2>&1 ||
      tail -3 "$w/run_$fmt.log" | sed 's/^/    /' >> "$s"
    echo "- $fmt: $(python3 "$bench/tensor_side.py" compare "$w/out_$fmt.npy" "$w/reference.npy" $target);" \
      "the command took $(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}') s" >> "$s"
  done
  timeout $limit "$vkcnn" profile "$w/convnext_tiny.onnx" --fp16 --iterations 20 \
    --json "$w/profile_fp16.json" > "$w/profile_fp16.txt" 2>&1 ||
    tail -3 "$w/profile_fp16.txt" | sed 's/^/    /' >> "$s"
  python3 "$bench/tensor_side.py" summary "$w/profile_fp16.json" >> "$s" 2>&1
  cp "$s" "$out/"
  snap
  cat "$s"
}

for s in ${steps//,/ }; do
  case "$s" in
    pytorch|compile|vkcnn|tests|ab|profile|shapes|gemm|wgscope|load|tensor) ;;
    load-diag) s=load_diag ;;
    *) echo "bench-gpu.sh: unknown step $s (--help lists them)" >&2; exit 2 ;;
  esac
  log "step $s"
  "step_$s"
done
log "done"
snap
