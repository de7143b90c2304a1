// The tests' one double-precision CPU convolution: dense, grouped and depthwise, strided, dilated,
// padded, in MPS's weight order [out][kH][kW][in/groups] or ONNX's [out][in/groups][kH][kW]. Every
// test that checks a convolution on the GPU (test_convolution_*, test_graph, test_onnx_import)
// computes its expectation here; each adds its own epilogue (batch norm, residual, neuron) and
// windows on top. Zeros outside the source (edge mode zero).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "test_support.h"

namespace vkcnn::test {

enum class WeightOrder {
  mps,   // [out][kH][kW][in/groups] (ConvolutionDescriptor, .dat files)
  onnx,  // [out][in/groups][kH][kW] (ONNX Conv)
};

struct ReferenceConvolution {
  uint32_t kernelWidth = 1, kernelHeight = 1;
  uint32_t inputChannels = 1, outputChannels = 1, groups = 1;
  uint32_t strideX = 1, strideY = 1, dilationX = 1, dilationY = 1;
  // Where output pixel (0, 0)'s window starts left of and above source pixel (0, 0).
  int64_t left = 0, top = 0;
  WeightOrder order = WeightOrder::mps;

  uint32_t inputsPerGroup() const { return inputChannels / groups; }
  uint32_t outputsPerGroup() const { return outputChannels / groups; }
  size_t weightIndex(uint32_t o, uint32_t ky, uint32_t kx, uint32_t ic) const {
    const uint32_t in = inputsPerGroup();
    return order == WeightOrder::mps
               ? ((size_t(o) * kernelHeight + ky) * kernelWidth + kx) * in + ic
               : ((size_t(o) * in + ic) * kernelHeight + ky) * kernelWidth + kx;
  }

  // The sum over output channel o's window at output pixel (y, x) of w times the source,
  // `source(channel, sy, sx)` reading input channel `channel` (of all inputChannels) at source
  // pixel (sy, sx), which may lie outside the image. In double precision, taps then channels.
  template <typename Source>
  double window(const std::vector<float>& w, uint32_t o, int64_t y, int64_t x,
                const Source& source) const {
    const uint32_t in = inputsPerGroup(), g = o / outputsPerGroup();
    const int64_t y0 = y * strideY - top, x0 = x * strideX - left;
    double sum = 0;
    for (uint32_t ky = 0; ky < kernelHeight; ++ky)
      for (uint32_t kx = 0; kx < kernelWidth; ++kx)
        for (uint32_t ic = 0; ic < in; ++ic)
          sum += double(w[weightIndex(o, ky, kx, ic)]) *
                 source(g * in + ic, y0 + int64_t(ky) * dilationY, x0 + int64_t(kx) * dilationX);
    return sum;
  }
};

// The convolution of every image of `x` (inputChannels of them) to outputHeight x outputWidth,
// plus `bias` (one per output channel, or none); no neuron.
Tensor convolve(const Tensor& x, const ReferenceConvolution& c, const std::vector<float>& w,
                const std::vector<float>& bias, uint32_t outputHeight, uint32_t outputWidth);

// The output size along one axis: (size + padding - dilated kernel) / stride + 1.
uint32_t convolvedSize(uint32_t size, uint32_t padding, uint32_t kernel, uint32_t stride,
                       uint32_t dilation);

}  // namespace vkcnn::test
