#!/usr/bin/env bash
# One device session (not committed): GPU tests of the merged work, resnet50 from .onnx and .vkcnn,
# a trace picture, a pool on one GPU twice.
set -x
root=$(pwd)
VKCNN_DEVICE_TESTS="test_onnx_compiled test_graph_serialize test_session_pool test_graph_tensor test_device_profile test_graph test_session test_cli_compile" timeout 200 bash scripts/device-run-tests.sh > $OUT/tests.log 2>&1
tail -30 $OUT/tests.log
export LD_LIBRARY_PATH=$root/.device-build/lib:${LD_LIBRARY_PATH:-} VKCNN_VALIDATION=0 VKCNN_PIPELINE_CACHE_DIR=/tmp/pc
B=$root/.device-build/bin/vkcnn
python3 scripts/bench/load_export.py resnet50 > $OUT/export.log 2>&1
$B compile /tmp/resnet50.onnx -o /tmp/resnet50.vkcnn > $OUT/compile.log 2>&1; tail -3 $OUT/compile.log; ls -la /tmp/resnet50.*
for i in 1 2 3; do
  for m in onnx vkcnn; do
    echo "== $m $i"; $B bench /tmp/resnet50.$m --cold-only --cache-dir /tmp/pc_$m 2>&1 | tail -22
  done
done > $OUT/cold.log 2>&1
cat $OUT/cold.log | head -120
python3 -c "import numpy; numpy.save('/tmp/x.npy', numpy.random.default_rng(3).random((1,3,224,224), dtype=numpy.float32))"
for m in onnx vkcnn; do $B run /tmp/resnet50.$m --input /tmp/x.npy --output /tmp/out_$m.npy > /dev/null 2>&1; done
python3 -c "
import numpy as np; a=np.load('/tmp/out_onnx.npy'); b=np.load('/tmp/out_vkcnn.npy')
print('resnet50 onnx vs vkcnn bit-identical:', a.tobytes()==b.tobytes(), np.abs(a-b).max())" | tee $OUT/identical.txt
$B profile /tmp/resnet50.vkcnn --iterations 20 --trace $OUT/trace.json > $OUT/profile.log 2>&1; tail -5 $OUT/profile.log
python3 scripts/trace-svg.py $OUT/trace.json $OUT/trace.svg --title "vkcnn profile --trace: resnet50, batch 1, float16, NVIDIA H200" 
timeout 90 $root/.device-build/bin/vkcnn-bench-pool /tmp/resnet50.onnx --devices 0,0 --piece 32 --batch 128 --seconds 8 2>&1 | tee $OUT/pool.txt
