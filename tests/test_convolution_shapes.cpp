// Convolution against the double-precision CPU reference over shapes: a sampled sweep of kernel
// sizes, strides, dilations, groups, channel counts, sizes and both padding modes; MPS batch
// geometry, clip rectangles, offsets, channel windows and concatenation offsets; depthwise and
// grouped layers; every fused neuron and PReLU; batch normalisation folding; float16 and unorm8
// sources; temporary destinations' sizes.
#include <unistd.h>
#include <vkcnn/convolution.h>
#include <vkcnn/convolution_tuning.h>
#include <vkcnn/neuron.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <type_traits>

#include "convolution_tiles.h"
#include "kernels/weights.h"
#include "convolution_case.h"
#include "scoped_choice.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

TEST_CASE("convolution: sampled sweep of kernel sizes, strides, dilations, groups and channels") {
  // A fixed-seed sample of the cartesian product: kernel sizes cycle through 1..7 in each axis,
  // strides and dilations through 1..3, groups through dense / 2 / depthwise, so every value of
  // each occurs; the rest is drawn at random.
  std::mt19937 rng(2024);
  auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
  const uint32_t cases = 84;
  for (uint32_t i = 0; i < cases; ++i) {
    Case c;
    c.seed = 1000 + i * 7;
    ConvolutionDescriptor& d = c.descriptor;
    d.kernelWidth = 1 + i % 7;
    d.kernelHeight = 1 + (i / 7 + i) % 7;
    d.strideInPixelsX = 1 + i % 3;
    d.strideInPixelsY = 1 + (i / 3) % 3;
    d.dilationRateX = 1 + (i / 2) % 3;
    d.dilationRateY = 1 + (i / 5) % 3;
    const uint32_t groupKind = (i / 4) % 3;  // dense, 2 groups, depthwise
    if (groupKind == 0) {
      d.inputFeatureChannels = kChannels[pick(9)];
      d.outputFeatureChannels = kChannels[pick(9)];
    } else if (groupKind == 1) {
      static const uint32_t even[] = {4, 8, 16, 32, 2, 6, 10, 26, 34};  // 13 and 17 per group too
      d.groups = 2;
      d.inputFeatureChannels = even[pick(9)];
      d.outputFeatureChannels = even[pick(9)];
    } else {
      d.inputFeatureChannels = kChannels[pick(9)];
      d.groups = d.inputFeatureChannels;
      d.outputFeatureChannels = d.inputFeatureChannels * (1 + pick(3));
    }
    c.width = 3 + pick(9);
    c.height = 3 + pick(9);
    if (i % 2) {
      c.padding = Padding::explicitPadding(pick(4), pick(4), pick(4), pick(4));
      // The explicit output size must be at least one pixel.
      c.width = std::max(c.width, d.dilatedKernelWidth());
      c.height = std::max(c.height, d.dilatedKernelHeight());
      c.padding.ceilMode = pick(4) == 0;
    }
    c.sourceImages = 1 + pick(2);
    c.withBias = pick(3) != 0;
    if (pick(3) == 0) d.neuron = NeuronDescriptor::relu();
    if (pick(4) == 0) {
      c.extraSourceChannels = 1 + pick(6);
      c.sourceChannelOffset = pick(c.extraSourceChannels + 1);
    }
    if (pick(3) == 0) c.destinationChannelOffset = pick(9);
    if (pick(4) == 0) c.extraDestinationChannels = 1 + pick(4);
    CAPTURE(i);
    CAPTURE(describe(c));
    run(c);
  }
}

TEST_CASE(
    "convolution: every kernel size 1..7 with strides and dilations on an odd and an even size") {
  // The sweep samples; this covers square kernels exhaustively in both padding modes.
  for (uint32_t k = 1; k <= 7; ++k)
    for (uint32_t s = 1; s <= 3; ++s) {
      Case c;
      c.seed = 50 + k * 3 + s;
      c.descriptor = ConvolutionDescriptor::make(k, k, 5, 8);
      c.descriptor.strideInPixelsX = c.descriptor.strideInPixelsY = s;
      c.descriptor.dilationRateX = c.descriptor.dilationRateY = 1 + (k + s) % 3;
      c.width = 7 + k % 2 + c.descriptor.dilatedKernelWidth();
      c.height = 6 + k % 2;
      if (s == 2) c.padding = Padding::explicitPadding(k / 2, k / 2, (k - 1) / 2, (k - 1) / 2);
      c.height = std::max(c.height, c.descriptor.dilatedKernelHeight());
      CAPTURE(describe(c));
      run(c);
    }
}

TEST_CASE("convolution: the MPS batch example, 16 to 32 channels, source batch 5, destination 4") {
  // offset.z = 2, clipRect.z = 1, depth 2: source images 2..3 go to destination images 1..2 and
  // destination images 0 and 3 stay untouched (checked by compare through the poison).
  Case c;
  c.descriptor = ConvolutionDescriptor::make(3, 3, 16, 32, NeuronDescriptor::relu());
  c.sourceImages = 5;
  c.destinationImages = 4;
  c.width = 6;
  c.height = 5;
  c.offset.z = 2;
  c.clip.z = 1;
  c.clip.depth = 2;
  run(c);
}

TEST_CASE("convolution: clip rectangle and offset in x and y") {
  for (uint32_t stride : {1u, 2u}) {
    Case c;
    c.seed = 70 + stride;
    c.descriptor = ConvolutionDescriptor::make(3, 2, 4, 5);
    c.descriptor.strideInPixelsX = c.descriptor.strideInPixelsY = stride;
    c.width = 9;
    c.height = 8;
    c.destinationWidth = 9;
    c.destinationHeight = 8;
    c.clip = {2, 3, 0, 4, 3, kWholeExtent};
    c.offset = {-1, 2, 0};
    CAPTURE(stride);
    run(c);
  }
}

TEST_CASE("convolution: source channel windows into any destination channel offset") {
  // Dense, grouped and depthwise; aligned and unaligned on both sides (concatenation).
  uint32_t seed = 300;
  for (uint32_t kind = 0; kind < 3; ++kind)
    for (uint32_t sourceOffset : {0u, 1u, 4u, 6u})
      for (uint32_t destinationOffset : {0u, 3u, 4u, 5u}) {
        Case c;
        c.seed = seed++;
        if (kind == 0) c.descriptor = ConvolutionDescriptor::make(3, 3, 5, 7);
        if (kind == 1) {
          c.descriptor = ConvolutionDescriptor::make(3, 3, 6, 10);
          c.descriptor.groups = 2;
        }
        if (kind == 2) c.descriptor = ConvolutionDescriptor::depthwise(3, 3, 5, 2);
        c.width = 4;
        c.height = 3;
        c.sourceImages = 2;
        c.extraSourceChannels = 7;
        c.sourceChannelOffset = sourceOffset;
        c.destinationChannelOffset = destinationOffset;
        c.extraDestinationChannels = 3;
        CAPTURE(kind);
        CAPTURE(sourceOffset);
        CAPTURE(destinationOffset);
        run(c);
      }
}

TEST_CASE("convolution: depthwise with channel multipliers 1, 2 and 3") {
  uint32_t seed = 400;
  for (uint32_t channels : {1u, 3u, 4u, 5u, 13u, 16u, 17u})
    for (uint32_t multiplier : {1u, 2u, 3u}) {
      Case c;
      c.seed = seed++;
      c.descriptor = ConvolutionDescriptor::depthwise(3, 3, channels, multiplier);
      c.descriptor.strideInPixelsX = 1 + channels % 2;
      c.width = 7;
      c.height = 6;
      CAPTURE(channels);
      CAPTURE(multiplier);
      run(c);
    }
}

TEST_CASE("convolution: depthwise rows of 1 to 7 taps, dilated, strided, windows, float16") {
  // One output channel per input channel and whole source slices take the unrolled rows of up to
  // 5 taps (depthwise_convolution.comp); wider kernels, channel windows not starting at a layer
  // and a last partial slice take the loop. Edges on every side (padding), dilation and stride
  // put taps outside the source.
  uint32_t seed = 450;
  for (auto [kw, kh] : {std::pair{1u, 1u}, {3u, 3u}, {5u, 5u}, {5u, 3u}, {2u, 4u}, {7u, 7u}})
    for (uint32_t variant = 0; variant < 4; ++variant) {
      Case c;
      c.seed = seed++;
      const uint32_t channels = variant == 3 ? 14 : 8 + 4 * variant;
      c.descriptor =
          ConvolutionDescriptor::depthwise(kw, kh, channels, 1, NeuronDescriptor::relu());
      c.descriptor.strideInPixelsX = 1 + variant % 2;
      c.descriptor.strideInPixelsY = 1 + (variant / 2) % 2;
      c.descriptor.dilationRateX = variant == 1 ? 2 : 1;
      c.descriptor.dilationRateY = variant == 2 ? 2 : 1;
      c.width = 11;
      c.height = 9;
      if (variant == 2) {  // a window starting inside a layer: the loop
        c.extraSourceChannels = 3;
        c.sourceChannelOffset = 1;
      }
      c.format = variant == 1 ? ChannelFormat::float16 : ChannelFormat::float32;
      CAPTURE(kw);
      CAPTURE(kh);
      CAPTURE(variant);
      run(c);
    }
}

TEST_CASE("convolution: groups with channels per group not a multiple of 4") {
  uint32_t seed = 500;
  for (auto [in, out, groups] : {std::tuple{6u, 9u, 3u},
                                 {10u, 4u, 2u},
                                 {15u, 5u, 5u},
                                 {8u, 8u, 4u},
                                 {32u, 16u, 2u},
                                 {34u, 26u, 2u}}) {
    Case c;
    c.seed = seed++;
    c.descriptor = ConvolutionDescriptor::make(3, 3, in, out);
    c.descriptor.groups = groups;
    c.width = 5;
    c.height = 4;
    CAPTURE(in);
    CAPTURE(out);
    CAPTURE(groups);
    run(c);
  }
}

TEST_CASE("convolution: every neuron type fused, PReLU per channel and shared") {
  for (uint32_t t = 0; t < kNeuronTypeCount; ++t) {
    const auto type = NeuronType(t);
    CAPTURE(toString(type));
    Case c;
    c.seed = 600 + t;
    c.descriptor = ConvolutionDescriptor::make(3, 3, 5, 7, sampleNeuron(type, 7));
    c.width = 5;
    c.height = 4;
    c.destinationChannelOffset = t % 4;
    run(c);
    // Depthwise and fully connected fuse it through their own shaders.
    Case depthwise = c;
    depthwise.descriptor = ConvolutionDescriptor::depthwise(3, 3, 7, 1, sampleNeuron(type, 7));
    run(depthwise);
    Case fullyConnected = c;
    fullyConnected.fullyConnected = true;
    fullyConnected.descriptor.kernelWidth = 5;
    fullyConnected.descriptor.kernelHeight = 4;
    run(fullyConnected);
  }
  // One slope for all channels; and the MPS setter.
  Case shared;
  shared.descriptor = ConvolutionDescriptor::make(3, 3, 4, 6);
  shared.descriptor.setNeuronToPReLUWithParametersA(std::vector<float>{0.25f});
  run(shared);
  Case perChannel;
  perChannel.descriptor = ConvolutionDescriptor::make(1, 1, 8, 13);
  std::vector<float> slopes = randomFloats(13, 9, 0.f, 1.f);
  perChannel.descriptor.setNeuronToPReLUWithParametersA(slopes);
  perChannel.destinationChannelOffset = 2;
  run(perChannel);
}

TEST_CASE("convolution: batch normalization folded at init, with and without gamma, beta, bias") {
  uint32_t seed = 700;
  for (uint32_t variant = 0; variant < 8; ++variant) {
    const bool gamma = variant & 1, beta = variant & 2, bias = variant & 4;
    CAPTURE(gamma);
    CAPTURE(beta);
    CAPTURE(bias);
    for (bool depthwise : {false, true}) {
      Case c;
      c.seed = seed++;
      c.descriptor = depthwise ? ConvolutionDescriptor::depthwise(3, 3, 6, 2)
                               : ConvolutionDescriptor::make(3, 3, 5, 12);
      const uint32_t out = c.descriptor.outputFeatureChannels;
      // BN before a neuron: leaky ReLU shows whether the order is right.
      c.descriptor.neuron = NeuronDescriptor::of(NeuronType::leakyRelu, 0.1f);
      c.descriptor.setBatchNormalizationParametersForInference(
          randomFloats(out, c.seed + 10, -0.5f, 0.5f), randomFloats(out, c.seed + 11, 0.2f, 2.f),
          gamma ? randomFloats(out, c.seed + 12, 0.5f, 1.5f) : std::vector<float>{},
          beta ? randomFloats(out, c.seed + 13) : std::vector<float>{}, 1e-3f);
      c.withBias = bias;
      c.width = 6;
      c.height = 5;
      run(c);
    }
  }
}

TEST_CASE("convolution: float16 and unorm8 sources on small shapes") {
  uint32_t seed = 900;
  for (uint32_t kind = 0; kind < 4; ++kind) {
    Case c;
    c.seed = seed++;
    c.format = ChannelFormat::float16;
    if (kind == 0) c.descriptor = ConvolutionDescriptor::make(3, 3, 5, 8, NeuronDescriptor::relu());
    if (kind == 1) {
      c.descriptor = ConvolutionDescriptor::make(2, 3, 13, 4);
      c.descriptor.strideInPixelsX = 2;
      c.descriptor.dilationRateY = 2;
      c.destinationChannelOffset = 1;
    }
    if (kind == 2) c.descriptor = ConvolutionDescriptor::depthwise(3, 3, 17, 1);
    if (kind == 3) {
      c.fullyConnected = true;
      c.descriptor = ConvolutionDescriptor::make(4, 4, 5, 7);
    }
    c.width = 4;
    c.height = 4;
    CAPTURE(kind);
    run(c);
  }
  // A picture (unorm8) into a float32 first layer.
  Case picture;
  picture.separateSourceFormat = true;
  picture.sourceFormat = ChannelFormat::unorm8;
  picture.descriptor = ConvolutionDescriptor::make(3, 3, 3, 16);
  picture.descriptor.strideInPixelsX = picture.descriptor.strideInPixelsY = 2;
  picture.width = 9;
  picture.height = 7;
  run(picture);
}

TEST_CASE("convolution: temporary destinations get the output size of each padding mode") {
  // encode(cb, source) sizes its TemporaryImage; a copy reads it back into a host-visible image.
  Tensor x = randomTensor(2, 5, 9, 8, 31);
  for (uint32_t mode = 0; mode < 3; ++mode) {
    CAPTURE(mode);
    ConvolutionDescriptor d = ConvolutionDescriptor::make(4, 3, 5, 6);
    d.strideInPixelsX = 2;
    d.strideInPixelsY = 3;
    d.dilationRateX = 2;
    std::vector<float> w = randomWeights(d, 32);
    Convolution conv(context(), d, w);
    Case c;
    c.descriptor = d;
    c.sourceImages = 2;
    c.width = 8;
    c.height = 9;
    if (mode > 0) {
      c.padding = Padding::explicitPadding(1, 2, 0, 2);
      c.padding.ceilMode = mode == 2;
    }
    conv.padding = c.padding;
    // Source 8x9, dilated kernel 7x3, stride 2x3: mpsDefault ceil(8/2) x ceil(9/3); explicit
    // (8+4-7)/2+1 x (9+1-3)/3+1, rounded down, then up.
    const uint32_t expectW[] = {4, 3, 4}, expectH[] = {3, 3, 4};
    Image source = makeImage(x, ChannelFormat::float32);
    ImageDescriptor td = conv.destinationImageDescriptor(source);
    CHECK(td.width == expectW[mode]);
    CHECK(td.height == expectH[mode]);
    CHECK(td.featureChannels == 6);
    CHECK(td.numberOfImages == 2);
    Image destination =
        makePoisoned(context(), {td.width, td.height, 6, 2, ChannelFormat::float32});
    runOnce([&](CommandBuffer& cb) {
      TemporaryImage t = conv.encode(cb, source);
      Neuron(context(), NeuronDescriptor{}).encode(cb, t, destination);
    });
    compare(download(destination), reference(c, x, w, {}, td.width, td.height, 2, 6),
            tolerance(ChannelFormat::float32));
  }
}
