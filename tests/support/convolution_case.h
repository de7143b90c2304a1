// The convolution tests' shared cases (tests/test_convolution_*.cpp): a Case describes one encode
// of a Convolution or FullyConnected with everything the CPU reference needs; run() builds the
// kernel from random weights, encodes it on the shared test Context and checks the destination
// (poisoned first) against the double-precision reference (reference.h).
#pragma once

#include <vkcnn/convolution.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "test_support.h"

namespace vkcnn::test {

// One encode of a Convolution (or FullyConnected) with everything the reference needs.
struct Case {
  ConvolutionDescriptor descriptor;
  Padding padding;
  bool fullyConnected = false;
  bool withBias = true;
  ChannelFormat format = ChannelFormat::float32;
  ChannelFormat sourceFormat = ChannelFormat::float32;  // same as format unless set apart
  bool separateSourceFormat = false;
  uint32_t width = 5, height = 5;
  uint32_t sourceImages = 1;
  uint32_t extraSourceChannels = 0;  // beyond the window, split around it
  uint32_t sourceChannelOffset = 0;  // window start (the window holds inputFeatureChannels)
  uint32_t destinationChannelOffset = 0;
  uint32_t extraDestinationChannels = 0;                 // after the written channels
  uint32_t destinationImages = 0;                        // 0: as many as the clip depth needs
  uint32_t destinationWidth = 0, destinationHeight = 0;  // 0: the kernel's output size
  Offset offset;
  ClipRect clip;
  uint32_t seed = 1;
  // Convolution::encodeWithResidual: a residual of the destination's shape, as a window at this
  // channel of a larger image (extra channels on both sides) when residualChannelOffset > 0.
  bool residual = false;
  uint32_t residualChannelOffset = 0;
  uint32_t imagesSideBySide = 0;  // Convolution::imagesSideBySide
};

// Random weights scaled by fan-in so that outputs stay near 1 whatever the window (neurons like
// power and logarithm need a*x + b > 0).
std::vector<float> randomWeights(const ConvolutionDescriptor& d, uint32_t seed);

// The destination as the kernel should leave it: NaN (the poison) outside what it writes.
// `residual` (the residual window's channels only) is added before the neuron.
Tensor reference(const Case& c, const Tensor& x, const std::vector<float>& w,
                 const std::vector<float>& bias, uint32_t dstW, uint32_t dstH, uint32_t dstN,
                 uint32_t dstC, const Tensor* residual = nullptr);

// Encodes `kernel` (made in `ctx`) once in a command buffer of its own, from float32 images of
// `ctx` holding `x` to a poisoned destination of the same size, and checks it against `expected`
// (whose channel count is the destination's).
void runInContext(const Context& ctx, Convolution& kernel, const Tensor& x, const Tensor& expected);

// Written elements match by relative L2; unwritten ones are still NaN.
template <typename K>
void applyGeometry(K& kernel, const Case& c) {
  kernel.offset = c.offset;
  kernel.clipRect = c.clip;
  kernel.sourceFeatureChannelOffset = c.sourceChannelOffset;
  kernel.sourceFeatureChannelMaxCount = c.descriptor.inputFeatureChannels;
  kernel.destinationFeatureChannelOffset = c.destinationChannelOffset;
}

template <typename K>
void runWith(K& kernel, const Case& c, const Tensor& x, const std::vector<float>& w,
             const std::vector<float>& bias) {
  applyGeometry(kernel, c);
  const ChannelFormat sourceFormat = c.separateSourceFormat ? c.sourceFormat : c.format;
  Image source = makeImage(x, sourceFormat, "x");
  const uint32_t dstW = c.destinationWidth ? c.destinationWidth : kernel.destinationWidth(c.width);
  const uint32_t dstH =
      c.destinationHeight ? c.destinationHeight : kernel.destinationHeight(c.height);
  const uint32_t depth =
      c.clip.depth == kWholeExtent ? c.sourceImages - uint32_t(c.offset.z) : c.clip.depth;
  const uint32_t dstN = c.destinationImages ? c.destinationImages : c.clip.z + depth;
  const uint32_t dstC =
      c.destinationChannelOffset + c.descriptor.outputFeatureChannels + c.extraDestinationChannels;
  Image destination =
      makePoisoned(context(), {dstW, dstH, dstC, dstN, c.format, ImageUsage::all, "y"});
  if (!c.residual) {
    runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
    compare(download(destination), reference(c, x, w, bias, dstW, dstH, dstN, dstC),
            tolerance(c.format));
    return;
  }
  if constexpr (std::is_same_v<K, Convolution>) {
    const uint32_t outC = c.descriptor.outputFeatureChannels;
    const uint32_t around = c.residualChannelOffset ? 3 : 0;  // channels after the window
    const Tensor whole = roundedTo(
        randomTensor(dstN, c.residualChannelOffset + outC + around, dstH, dstW, c.seed + 3),
        c.format);
    Tensor window(dstN, outC, dstH, dstW);
    for (uint32_t i = 0; i < dstN; ++i)
      for (uint32_t o = 0; o < outC; ++o)
        for (uint32_t yy = 0; yy < dstH; ++yy)
          for (uint32_t xx = 0; xx < dstW; ++xx)
            window.at(i, o, yy, xx) = whole.at(i, c.residualChannelOffset + o, yy, xx);
    Image stored = makeImage(whole, c.format, "shortcut");
    const Image residual = c.residualChannelOffset || around
                               ? stored.subImage({c.residualChannelOffset, outC})
                               : stored;
    runOnce(
        [&](CommandBuffer& cb) { kernel.encodeWithResidual(cb, source, residual, destination); });
    compare(download(destination), reference(c, x, w, bias, dstW, dstH, dstN, dstC, &window),
            tolerance(c.format));
  } else {
    FAIL("only Convolution takes a residual");
  }
}

// Builds the kernel from random weights and checks one encode against the reference; returns the
// configuration the convolution ran ("" for a FullyConnected).
std::string run(const Case& c);

// The case in words, for CAPTURE.
std::string describe(const Case& c);

// Random inference statistics for every output channel, drawn from seeds seed..seed + 3.
void sampleBatchNormalization(ConvolutionDescriptor& d, uint32_t seed);

inline constexpr uint32_t kChannels[] = {1, 3, 4, 5, 8, 13, 16, 17, 32};

// The multiprocessors the selector counts with: the device's where it tells, else 132.
uint32_t selectorMultiprocessors();

// Whether the matrix units' cost model runs where its constants were fitted (32-wide subgroups,
// 100-200 multiprocessors): the tests check its choices there only, its results everywhere.
bool matrixCostModelFitted();

}  // namespace vkcnn::test
