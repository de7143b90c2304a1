// The tests' double-precision CPU convolution (reference.h).
#include "reference.h"

namespace vkcnn::test {

Tensor convolve(const Tensor& x, const ReferenceConvolution& c, const std::vector<float>& w,
                const std::vector<float>& bias, uint32_t outputHeight, uint32_t outputWidth) {
  Tensor y(x.n, c.outputChannels, outputHeight, outputWidth);
  for (uint32_t i = 0; i < x.n; ++i) {
    auto source = [&](uint32_t channel, int64_t sy, int64_t sx) {
      return x.atOrZero(i, channel, sy, sx);
    };
    for (uint32_t o = 0; o < c.outputChannels; ++o)
      for (uint32_t yy = 0; yy < outputHeight; ++yy)
        for (uint32_t xx = 0; xx < outputWidth; ++xx)
          y.at(i, o, yy, xx) =
              (bias.empty() ? 0.0 : double(bias[o])) + c.window(w, o, yy, xx, source);
  }
  return y;
}

uint32_t convolvedSize(uint32_t size, uint32_t padding, uint32_t kernel, uint32_t stride,
                       uint32_t dilation) {
  return (size + padding - ((kernel - 1) * dilation + 1)) / stride + 1;
}

}  // namespace vkcnn::test
