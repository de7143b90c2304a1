// Transposed convolution against a double-precision scatter reference written from ONNX
// ConvTranspose's definition (weights in ONNX order, permuted for the kernel by
// convolutionTransposeWeightsFromOnnx): strides 1-3, dilations 1-2, groups (channels per group
// not multiples of 4 too), kernels 1-5 (even too), both padding modes, output padding, bias and
// fused neurons, batch sub-ranges, clip rectangles, offsets and unaligned destination channel
// offsets. Destinations are poisoned with NaN.
#include <vkcnn/convolution_transpose.h>
#include <vkcnn/neuron.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Placement {
  Offset offset;
  ClipRect clip;
  uint32_t sourceChannelOffset = 0;
  uint32_t destinationChannelOffset = 0;
};

// `expected` holds NaN where the destination must keep its poison.

// ONNX's output size: (in - 1) * stride - pads + dilation * (k - 1) + output_padding + 1.
uint32_t expectedSize(uint32_t in, uint32_t kernel, uint32_t stride, uint32_t dilation,
                      uint32_t padBegin, uint32_t padEnd, uint32_t outputPadding) {
  return (in - 1) * stride + dilation * (kernel - 1) + outputPadding + 1 - padBegin - padEnd;
}

// Scatters every input pixel through the ONNX weight [C_in][C_out/groups][kH][kW] into the full
// (uncropped) output, then reads the clip's pixels out of it.
Tensor referenceTranspose(const Tensor& x, const std::vector<float>& onnxWeights,
                          const std::vector<float>& bias, const ConvolutionTransposeDescriptor& d,
                          const Placement& p, uint32_t dn, uint32_t dc, uint32_t dh, uint32_t dw) {
  const bool mps = d.padding.mode == Padding::Mode::mpsDefault;
  const int64_t padLeft = mps ? 0 : d.padding.left, padTop = mps ? 0 : d.padding.top;
  const uint32_t cin = d.inputFeatureChannels, cout = d.outputFeatureChannels;
  const uint32_t inPerGroup = cin / d.groups, outPerGroup = cout / d.groups;
  const uint32_t fullW =
      expectedSize(x.w, d.kernelWidth, d.strideInPixelsX, d.dilationRateX, 0, 0, d.outputPaddingX);
  const uint32_t fullH =
      expectedSize(x.h, d.kernelHeight, d.strideInPixelsY, d.dilationRateY, 0, 0, d.outputPaddingY);
  const uint32_t depth = p.clip.depth == kWholeExtent ? dn - p.clip.z : p.clip.depth;
  const uint32_t clipW = p.clip.width == kWholeExtent ? dw - p.clip.x : p.clip.width;
  const uint32_t clipH = p.clip.height == kWholeExtent ? dh - p.clip.y : p.clip.height;
  Tensor expected(dn, dc, dh, dw, kNaN);
  for (uint32_t i = 0; i < depth; ++i) {
    const uint32_t image = uint32_t(p.offset.z) + i;
    Tensor full(1, cout, fullH, fullW, 0.0);
    for (uint32_t ic = 0; ic < cin; ++ic) {
      const uint32_t group = ic / inPerGroup;
      for (uint32_t iy = 0; iy < x.h; ++iy)
        for (uint32_t ix = 0; ix < x.w; ++ix) {
          const double v = x.at(image, p.sourceChannelOffset + ic, iy, ix);
          for (uint32_t local = 0; local < outPerGroup; ++local)
            for (uint32_t ky = 0; ky < d.kernelHeight; ++ky)
              for (uint32_t kx = 0; kx < d.kernelWidth; ++kx) {
                const double w =
                    onnxWeights[((size_t(ic) * outPerGroup + local) * d.kernelHeight + ky) *
                                    d.kernelWidth +
                                kx];
                full.at(0, group * outPerGroup + local,
                        iy * d.strideInPixelsY + ky * d.dilationRateY,
                        ix * d.strideInPixelsX + kx * d.dilationRateX) += v * w;
              }
        }
    }
    for (uint32_t oc = 0; oc < cout; ++oc)
      for (uint32_t py = p.clip.y; py < p.clip.y + clipH; ++py)
        for (uint32_t px = p.clip.x; px < p.clip.x + clipW; ++px) {
          const int64_t qx =
              int64_t(px - p.clip.x) + int64_t(p.offset.x) * d.strideInPixelsX + padLeft;
          const int64_t qy =
              int64_t(py - p.clip.y) + int64_t(p.offset.y) * d.strideInPixelsY + padTop;
          double v = full.atOrZero(0, oc, qy, qx);
          if (!bias.empty()) v += double(bias[oc]);
          expected.at(p.clip.z + i, p.destinationChannelOffset + oc, py, px) =
              applyNeuron(d.neuron, v, oc);
        }
  }
  return expected;
}

struct TransposeCase {
  ConvolutionTransposeDescriptor d;
  bool bias = false;
  uint32_t n = 1, sourceChannels = 0, h = 4, w = 5;  // sourceChannels 0: inputFeatureChannels
  ChannelFormat format = ChannelFormat::float32;
  Placement placement;
  uint32_t dn = 0, dc = 0, dh = 0, dw = 0;  // 0: the natural destination
};

void runTransposeCase(const TransposeCase& tc, uint32_t seed) {
  const ConvolutionTransposeDescriptor& d = tc.d;
  const uint32_t sourceChannels = tc.sourceChannels ? tc.sourceChannels : d.inputFeatureChannels;
  Tensor x = roundedTo(randomTensor(tc.n, sourceChannels, tc.h, tc.w, seed), tc.format);
  const size_t weightCount = size_t(d.inputFeatureChannels) * (d.outputFeatureChannels / d.groups) *
                             d.kernelHeight * d.kernelWidth;
  const std::vector<float> onnxWeights = randomFloats(weightCount, seed + 1);
  const std::vector<float> bias =
      tc.bias ? randomFloats(d.outputFeatureChannels, seed + 2) : std::vector<float>{};
  ConvolutionTranspose kernel(context(), d, convolutionTransposeWeightsFromOnnx(d, onnxWeights),
                              bias);
  const Placement& p = tc.placement;
  kernel.offset = p.offset;
  kernel.clipRect = p.clip;
  kernel.sourceFeatureChannelOffset = p.sourceChannelOffset;
  kernel.sourceFeatureChannelMaxCount = d.inputFeatureChannels;
  kernel.destinationFeatureChannelOffset = p.destinationChannelOffset;

  const bool mps = d.padding.mode == Padding::Mode::mpsDefault;
  const uint32_t naturalW =
      expectedSize(tc.w, d.kernelWidth, d.strideInPixelsX, d.dilationRateX,
                   mps ? 0 : d.padding.left, mps ? 0 : d.padding.right, d.outputPaddingX);
  const uint32_t naturalH =
      expectedSize(tc.h, d.kernelHeight, d.strideInPixelsY, d.dilationRateY,
                   mps ? 0 : d.padding.top, mps ? 0 : d.padding.bottom, d.outputPaddingY);
  CHECK(kernel.destinationWidth(tc.w) == naturalW);
  CHECK(kernel.destinationHeight(tc.h) == naturalH);
  const uint32_t dn = tc.dn ? tc.dn : tc.n - uint32_t(p.offset.z);
  const uint32_t dc = tc.dc ? tc.dc : p.destinationChannelOffset + d.outputFeatureChannels;
  const uint32_t dh = tc.dh ? tc.dh : naturalH, dw = tc.dw ? tc.dw : naturalW;
  Image source = makeImage(x, tc.format, "x");
  Image destination = makePoisoned(context(), {dw, dh, dc, dn, tc.format, ImageUsage::all, "y"});
  runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
  compare(download(destination), referenceTranspose(x, onnxWeights, bias, d, p, dn, dc, dh, dw),
          tolerance(tc.format));
}

NeuronDescriptor sampleNeuron(uint32_t which, uint32_t channels) {
  switch (which % 6) {
    case 1:
      return NeuronDescriptor::relu();
    case 2:
      return NeuronDescriptor::of(NeuronType::leakyRelu, 0.1f);
    case 3:
      return NeuronDescriptor::of(NeuronType::sigmoid);
    case 4: {
      NeuronDescriptor n{NeuronType::prelu};
      for (uint32_t c = 0; c < channels; ++c) n.preluSlopes.push_back(0.05f * float(c + 1));
      return n;
    }
    case 5:
      return NeuronDescriptor::relu6();
    default:
      return NeuronDescriptor{};
  }
}

}  // namespace

TEST_CASE("convolution transpose: weight order and orientation on a hand-computed case") {
  // 1 -> 1 channel, kernel 2x1 with weights {10, 1}, stride 2: [1, 2] -> [10, 1, 20, 2]; with
  // padding left 1 the first column is cropped. No 180-degree rotation.
  Tensor x(1, 1, 1, 2);
  x.data = {1, 2};
  Image source = makeImage(x, ChannelFormat::float32);
  ConvolutionTransposeDescriptor d;
  d.kernelWidth = 2;
  d.strideInPixelsX = 2;
  const std::vector<float> weights = {10, 1};
  ConvolutionTranspose plain(context(), d, weights);
  d.padding = Padding::explicitPadding(0, 1, 0, 0);
  ConvolutionTranspose cropped(context(), d, weights, std::vector<float>{0.5f});
  Image a = makePoisoned(context(), {4, 1, 1, 1, ChannelFormat::float32});
  Image b = makePoisoned(context(), {3, 1, 1, 1, ChannelFormat::float32});
  runOnce([&](CommandBuffer& cb) {
    plain.encode(cb, source, a);
    cropped.encode(cb, source, b);
  });
  CHECK(download(a).data == std::vector<double>{10, 1, 20, 2});
  CHECK(download(b).data == std::vector<double>{1.5, 20.5, 2.5});

  // The ONNX permutation: [C_in][C_out/groups][kH][kW] -> [C_out][kH][kW][C_in/groups].
  ConvolutionTransposeDescriptor e;
  e.inputFeatureChannels = 4;
  e.outputFeatureChannels = 2;
  const std::vector<float> onnx = {0, 1, 2, 3, 4, 5, 6, 7};  // W[ic][oc] = 2 ic + oc
  CHECK(convolutionTransposeWeightsFromOnnx(e, onnx) == std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7});
  e.groups = 2;  // W[ic][oc local]: [4][1]; output o takes inputs 2 (o) .. 2 (o) + 1
  CHECK(convolutionTransposeWeightsFromOnnx(e, std::vector<float>{0, 1, 2, 3}) ==
        std::vector<float>{0, 1, 2, 3});
}

TEST_CASE("convolution transpose: strides, dilations, groups, kernels, padding, output padding") {
  struct Channels {
    uint32_t in, out, groups;
  };
  // Groups of 5 -> 3 and 3 -> 7 channels straddle slices; 5 groups of 1 is depthwise-like.
  const Channels channelSets[] = {{1, 1, 1},  {3, 5, 1},  {4, 4, 1}, {13, 17, 1}, {5, 13, 1},
                                  {10, 6, 2}, {6, 14, 2}, {8, 4, 2}, {5, 5, 5},   {32, 8, 2}};
  uint32_t seed = 1, index = 0;
  for (uint32_t kernel = 1; kernel <= 5; ++kernel)
    for (uint32_t stride = 1; stride <= 3; ++stride)
      for (uint32_t dilation = 1; dilation <= 2; ++dilation)
        for (uint32_t groupsKind = 0; groupsKind < 2; ++groupsKind)
          for (int paddingKind = 0; paddingKind < 2; ++paddingKind, ++index) {
            // Ungrouped and grouped channel sets in turn.
            const Channels& ch = channelSets[(index % 5) + 5 * groupsKind];
            TransposeCase tc;
            ConvolutionTransposeDescriptor& d = tc.d;
            d.kernelWidth = kernel;
            d.kernelHeight = index % 4 == 0 ? kernel : 1 + (index + 2) % 5;
            d.strideInPixelsX = stride;
            d.strideInPixelsY = 1 + (stride + index) % 3;
            d.dilationRateX = dilation;
            d.dilationRateY = 1 + index % 2;
            d.inputFeatureChannels = ch.in;
            d.outputFeatureChannels = ch.out;
            d.groups = ch.groups;
            if (paddingKind == 1) {
              const uint32_t wx = (d.kernelWidth - 1) * d.dilationRateX + 1;
              const uint32_t wy = (d.kernelHeight - 1) * d.dilationRateY + 1;
              d.padding = Padding::explicitPadding(wy / 2, (wx - 1) / 2, (wy - 1) / 2, wx / 2);
            }
            // Output padding wherever the stride or dilation allows one.
            d.outputPaddingX = std::max(d.strideInPixelsX, d.dilationRateX) - 1;
            d.outputPaddingY =
                index % 3 == 0 ? std::max(d.strideInPixelsY, d.dilationRateY) - 1 : 0;
            d.neuron = sampleNeuron(index, ch.out);
            tc.bias = index % 2 == 1;
            tc.h = 3 + index % 3;
            tc.w = 4 + index % 4;
            CAPTURE(kernel);
            CAPTURE(stride);
            CAPTURE(dilation);
            CAPTURE(d.kernelHeight);
            CAPTURE(d.strideInPixelsY);
            CAPTURE(d.dilationRateY);
            CAPTURE(ch.in);
            CAPTURE(ch.out);
            CAPTURE(ch.groups);
            CAPTURE(paddingKind);
            CAPTURE(toString(d.neuron.type));
            runTransposeCase(tc, seed);
            seed += 3;
          }
}

TEST_CASE("convolution transpose: batch sub-ranges, clip, offsets and channel windows") {
  uint32_t seed = 400;
  ConvolutionTransposeDescriptor base;
  base.kernelWidth = 3;
  base.kernelHeight = 4;
  base.strideInPixelsX = 2;
  base.strideInPixelsY = 2;
  base.inputFeatureChannels = 5;
  base.outputFeatureChannels = 7;
  base.padding = Padding::explicitPadding(1, 1, 2, 1);
  base.outputPaddingX = 1;
  {  // Source images 1, 2 of 4 into destination images 1, 2 of 3.
    TransposeCase tc;
    tc.d = base;
    tc.bias = true;
    tc.n = 4;
    tc.placement.offset.z = 1;
    tc.placement.clip.z = 1;
    tc.placement.clip.depth = 2;
    tc.dn = 3;
    runTransposeCase(tc, seed++);
  }
  {  // A clip inside the destination, offset in source pixels (times the stride).
    for (int32_t ox : {-1, 0, 2}) {
      TransposeCase tc;
      tc.d = base;
      tc.d.neuron = NeuronDescriptor::relu();
      tc.placement.clip = {2, 1, 0, 5, 4, kWholeExtent};
      tc.placement.offset = {ox, 1, 0};
      CAPTURE(ox);
      runTransposeCase(tc, seed++);
    }
  }
  // A channel window of a larger source into aligned and unaligned destination offsets.
  for (uint32_t sourceOffset : {0u, 3u, 4u})
    for (uint32_t destinationOffset : {0u, 1u, 3u, 4u, 5u}) {
      TransposeCase tc;
      tc.d = base;
      tc.n = 2;
      tc.sourceChannels = 13;
      tc.placement.sourceChannelOffset = sourceOffset;
      tc.placement.destinationChannelOffset = destinationOffset;
      tc.dc = destinationOffset + 7 + 2;  // channels past the written ones keep their poison
      CAPTURE(sourceOffset);
      CAPTURE(destinationOffset);
      runTransposeCase(tc, seed++);
    }
  {  // A destination larger than the natural output: its extra pixels get bias + neuron only.
    TransposeCase tc;
    tc.d = base;
    tc.d.neuron = NeuronDescriptor::of(NeuronType::leakyRelu, 0.2f);
    tc.bias = true;
    tc.dw = 14;
    tc.dh = 11;
    runTransposeCase(tc, seed++);
  }
}

TEST_CASE("convolution transpose: a decoder-sized layer (32 -> 16 channels, 4x4, stride 2)") {
  TransposeCase tc;
  tc.d.kernelWidth = tc.d.kernelHeight = 4;
  tc.d.strideInPixelsX = tc.d.strideInPixelsY = 2;
  tc.d.inputFeatureChannels = 32;
  tc.d.outputFeatureChannels = 16;
  tc.d.padding = Padding::explicitPadding(1, 1, 1, 1);
  tc.d.neuron = NeuronDescriptor::relu();
  tc.bias = true;
  tc.h = 15;
  tc.w = 20;
  runTransposeCase(tc, 550);
}

TEST_CASE("convolution transpose: float16 storage on small shapes") {
  uint32_t seed = 600;
  for (uint32_t stride = 1; stride <= 3; ++stride) {
    TransposeCase tc;
    tc.format = ChannelFormat::float16;
    tc.d.kernelWidth = 1 + stride;
    tc.d.kernelHeight = 3;
    tc.d.strideInPixelsX = tc.d.strideInPixelsY = stride;
    tc.d.inputFeatureChannels = stride == 2 ? 6 : 5;
    tc.d.outputFeatureChannels = stride == 2 ? 10 : 3;
    tc.d.groups = stride == 2 ? 2 : 1;
    tc.d.padding = Padding::explicitPadding(1, 0, 1, 1);
    tc.d.outputPaddingY = stride - 1;
    tc.d.neuron = sampleNeuron(stride, tc.d.outputFeatureChannels);
    tc.bias = true;
    tc.h = 3;
    tc.w = 4;
    tc.placement.destinationChannelOffset = stride - 1;
    CAPTURE(stride);
    runTransposeCase(tc, seed++);
  }
}

TEST_CASE("convolution transpose: a temporary destination gets the natural output shape") {
  ConvolutionTransposeDescriptor d;
  d.kernelWidth = 4;
  d.kernelHeight = 3;
  d.strideInPixelsX = 2;
  d.strideInPixelsY = 3;
  d.inputFeatureChannels = 3;
  d.outputFeatureChannels = 6;
  d.padding = Padding::explicitPadding(1, 1, 0, 2);
  d.outputPaddingY = 2;
  Tensor x = randomTensor(2, 3, 4, 5, 700);
  const std::vector<float> onnx = randomFloats(3 * 6 * 4 * 3, 701);
  ConvolutionTranspose kernel(context(), d, convolutionTransposeWeightsFromOnnx(d, onnx));
  const uint32_t w = expectedSize(5, 4, 2, 1, 1, 2, 0), h = expectedSize(4, 3, 3, 1, 1, 0, 2);
  Image source = makeImage(x, ChannelFormat::float32);
  Image destination = makePoisoned(context(), {w, h, 6, 2, ChannelFormat::float32});
  Neuron copy(context(), NeuronDescriptor::of(NeuronType::none));
  runOnce([&](CommandBuffer& cb) {
    TemporaryImage y = kernel.encode(cb, source);
    CHECK(y.width() == w);
    CHECK(y.height() == h);
    CHECK(y.featureChannels() == 6);
    CHECK(y.numberOfImages() == 2);
    copy.encode(cb, y, destination);
  });
  compare(download(destination), referenceTranspose(x, onnx, {}, d, Placement{}, 2, 6, h, w),
          tolerance(ChannelFormat::float32));
}

TEST_CASE("convolution transpose: bad descriptors and shapes are errors before any encoding") {
  auto descriptor = [] {
    ConvolutionTransposeDescriptor d;
    d.kernelWidth = d.kernelHeight = 3;
    d.strideInPixelsX = d.strideInPixelsY = 2;
    d.inputFeatureChannels = 4;
    d.outputFeatureChannels = 6;
    d.groups = 2;
    return d;
  };
  const std::vector<float> weights(6 * 3 * 3 * 2, 0.5f);
  auto make = [&](auto change, std::span<const float> w, std::span<const float> bias = {}) {
    ConvolutionTransposeDescriptor d = descriptor();
    change(d);
    return ConvolutionTranspose(context(), d, w, bias);
  };
  VKCNN_CHECK_ERROR(make([](auto& d) { d.kernelWidth = 0; }, weights), ErrorCode::invalidArgument,
                    "kernelWidth is 0");
  VKCNN_CHECK_ERROR(make([](auto& d) { d.strideInPixelsY = 0; }, weights),
                    ErrorCode::invalidArgument, "strideInPixelsY is 0");
  VKCNN_CHECK_ERROR(make([](auto& d) { d.dilationRateX = 0; }, weights), ErrorCode::invalidArgument,
                    "dilationRateX is 0");
  VKCNN_CHECK_ERROR(make([](auto& d) { d.groups = 0; }, weights), ErrorCode::invalidArgument,
                    "groups is 0");
  VKCNN_CHECK_ERROR(make([](auto& d) { d.groups = 4; }, weights), ErrorCode::invalidArgument,
                    "divisible by groups 4");
  VKCNN_CHECK_ERROR(make([](auto& d) { d.inputFeatureChannels = 5; }, weights),
                    ErrorCode::invalidArgument, "divisible by groups 2");
  VKCNN_CHECK_ERROR(make([](auto&) {}, std::vector<float>(weights.size() - 1)),
                    ErrorCode::invalidArgument, "expected 108");
  VKCNN_CHECK_ERROR(make([](auto&) {}, weights, std::vector<float>(5)), ErrorCode::invalidArgument,
                    "bias values given, expected 0 or 6");
  VKCNN_CHECK_ERROR(make([](auto& d) { d.outputPaddingX = 2; }, weights),
                    ErrorCode::invalidArgument, "outputPaddingX 2 must be smaller");
  VKCNN_CHECK_ERROR(make(
                        [](auto& d) {
                          d.strideInPixelsY = 1;
                          d.outputPaddingY = 1;
                        },
                        weights),
                    ErrorCode::invalidArgument, "outputPaddingY 1 must be smaller");
  VKCNN_CHECK_ERROR(make([](auto& d) { d.padding.ceilMode = true; }, weights),
                    ErrorCode::invalidArgument, "ceilMode");
  VKCNN_CHECK_ERROR(make([](auto& d) { d.neuron.type = NeuronType::prelu; }, weights),
                    ErrorCode::invalidArgument, "PReLU");
  VKCNN_CHECK_ERROR(make(
                        [](auto& d) {
                          d.neuron = {NeuronType::prelu, 0, 0, 0, {0.1f, 0.2f}};
                        },
                        weights),
                    ErrorCode::invalidArgument, "2 PReLU slopes for 6 output channels");
  VKCNN_CHECK_ERROR(convolutionTransposeWeightsFromOnnx(descriptor(), std::vector<float>(7)),
                    ErrorCode::invalidArgument, "7 weights given");

  // Padding that crops the whole output.
  ConvolutionTransposeDescriptor cropping = descriptor();
  cropping.padding = Padding::explicitPadding(0, 4, 0, 4);
  ConvolutionTranspose crop(context(), cropping, weights);
  VKCNN_CHECK_ERROR(crop.destinationWidth(2), ErrorCode::invalidArgument, "crops the whole");
  CHECK(crop.destinationWidth(4) == 1);  // (4 - 1) * 2 + 3 - 8

  ConvolutionTranspose kernel(context(), descriptor(), weights);
  Image source(context(), {3, 3, 5, 2, ChannelFormat::float32});
  Image destination(context(), {7, 7, 6, 2, ChannelFormat::float32});
  CommandBuffer cb(context());
  VKCNN_CHECK_ERROR(kernel.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "holds 5 channels but inputFeatureChannels is 4");
  kernel.sourceFeatureChannelMaxCount = 4;
  kernel.destinationFeatureChannelOffset = 1;
  VKCNN_CHECK_ERROR(kernel.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset");
  // offset.x * stride past the shader's 32-bit coordinates.
  kernel.destinationFeatureChannelOffset = 0;
  kernel.offset.x = 1 << 30;
  VKCNN_CHECK_ERROR(kernel.encode(cb, source, destination), ErrorCode::limitExceeded,
                    "output origin x 2147483648");
  VKCNN_CHECK_ERROR(crop.encode(cb, Image(context(), {2, 2, 4, 1, ChannelFormat::float32})),
                    ErrorCode::invalidArgument, "horizontal padding");
  CHECK(cb.encodingStatistics().dispatches == 0);
}
