// Shared by test_softmax.cpp and test_normalization.cpp: the destination a kernel should leave,
// built from a per-pixel reference and the kernel's geometry (clip, offset, batch range, channel
// offsets), and a comparison that also demands NaN (poison) exactly where nothing may be written.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "test_support.h"

namespace vkcnn::test {

// `ref(sourceImage, windowChannel, sourceY, sourceX)` is the kernel's result for that source
// position (coordinates may lie outside the source); everything the kernel must not write is NaN.
template <typename Ref>
Tensor expectedDestination(const Kernel& k, uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                           uint32_t windowChannels, Ref&& ref) {
  Tensor e(n, c, h, w, std::nan(""));
  const ClipRect& r = k.clipRect;
  const uint32_t width = r.width == kWholeExtent ? w - r.x : r.width;
  const uint32_t height = r.height == kWholeExtent ? h - r.y : r.height;
  const uint32_t depth = r.depth == kWholeExtent ? n - r.z : r.depth;
  for (uint32_t i = 0; i < depth; ++i)
    for (uint32_t ch = 0; ch < windowChannels; ++ch)
      for (uint32_t y = 0; y < height; ++y)
        for (uint32_t x = 0; x < width; ++x)
          e.at(r.z + i, k.destinationFeatureChannelOffset + ch, r.y + y, r.x + x) =
              ref(uint32_t(k.offset.z) + i, ch, int64_t(y) + k.offset.y, int64_t(x) + k.offset.x);
  return e;
}

// NaN exactly where `expected` has NaN, and relative L2 <= tolerance over the rest.
inline void checkDestination(const Tensor& actual, const Tensor& expected, double tol) {
  REQUIRE(actual.data.size() == expected.data.size());
  size_t nanMismatches = 0;
  double error = 0, norm = 0;
  for (size_t i = 0; i < actual.data.size(); ++i) {
    const double a = actual.data[i], b = expected.data[i];
    if (std::isnan(b) || std::isnan(a)) {
      nanMismatches += std::isnan(a) != std::isnan(b);
      continue;
    }
    if (!std::isfinite(a)) {
      ++nanMismatches;
      continue;
    }
    error += (a - b) * (a - b);
    norm += b * b;
  }
  CHECK_MESSAGE(nanMismatches == 0, nanMismatches << " elements written where they must not be, "
                                                     "or left unwritten / non-finite");
  const double relative = std::sqrt(error) / std::max(std::sqrt(norm), 1e-30);
  CHECK_MESSAGE(relative <= tol, "relative L2 " << relative << " > " << tol);
}

}  // namespace vkcnn::test
