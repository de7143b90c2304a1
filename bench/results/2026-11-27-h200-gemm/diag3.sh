#!/usr/bin/env bash
# Run 3 (2026-11-27): registers and whatever the driver shows of its code
# (VK_KHR_pipeline_executable_properties' statistics and internal representations) for the GEMM
# ceiling's configurations of run 2 and for the library's tiled convolution.
set -uo pipefail
root=$(pwd); D=$root/.device-build
for f in .gl/*.deb; do case "$f" in *validationlayers*) ;; *) dpkg -x $f / ;; esac; done; ldconfig
export LD_LIBRARY_PATH=$D/lib
mkdir -p $OUT/internal-gemm $OUT/internal-lib
cfg=""
for t in 2x4/4x2/2 2x2/4x4/2 4x2/4x4/1 2x4/4x4/1 2x2/2x2/2 2x4/4x2/1 4x2/2x4/2; do
  for m in 0 1 2 3; do cfg="$cfg$t/$m;"; done
done
timeout 120 $D/bin/vkcnn-pipeline-stats --gemm $D/bin/gemm_ceiling.spv --gemm-configs "${cfg%;}" \
  --internal $OUT/internal-gemm > $OUT/stats-gemm.txt 2> $OUT/stats-gemm.err
echo "gemm stats rc=$?"
timeout 200 $D/bin/vkcnn-pipeline-stats --variants f16 --internal $OUT/internal-lib > $OUT/stats-lib.txt 2> $OUT/stats-lib.err
echo "lib stats rc=$?"
cut -d'|' -f1-3 $OUT/stats-gemm.txt
grep -E 'tiled|matrix|gemm' $OUT/stats-lib.txt | cut -d'|' -f1-3
head -5 $OUT/stats-gemm.err; ls $OUT/internal-gemm | head; du -sh $OUT/internal-*
# Keep what comes back small
find $OUT -size +3M -delete
