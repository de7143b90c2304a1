// Convolution's epilogue and prologue against the CPU reference: a residual added before the
// neuron, a source activation (batch norm and ReLU before the convolution) on every shader and
// every forced configuration, temporary residuals' reads and bad residuals, and every neuron
// fixed in a tile's pipeline.
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

TEST_CASE("convolution: a residual added before the neuron, on every shader") {
  // Each path adds it in its own epilogue (convolution_bindings.glsl): GEMM tiles large and small
  // (and the matrix-unit tiles for float16 on GPUs that have them), the direct shader (groups, an
  // unaligned destination offset), depthwise; residuals whole and as windows of larger images,
  // clip rectangles over a batch.
  uint32_t seed = 900;
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    std::vector<Case> cases;
    Case large;  // 1x1 over 2 x 100x100: large GEMM tiles
    large.descriptor = ConvolutionDescriptor::make(1, 1, 8, 20, NeuronDescriptor::relu());
    large.width = large.height = 100;
    large.sourceImages = 2;
    cases.push_back(large);
    Case small;  // few pixels, long reduction, the residual a window from channel 4
    small.descriptor = ConvolutionDescriptor::make(3, 3, 24, 13, NeuronDescriptor::relu());
    small.width = 6;
    small.height = 5;
    small.residualChannelOffset = 4;
    cases.push_back(small);
    Case grouped;  // direct shader, PReLU, clip over images 1..2 of 3
    grouped.descriptor = ConvolutionDescriptor::make(3, 3, 6, 9);
    grouped.descriptor.groups = 3;
    grouped.descriptor.neuron = sampleNeuron(NeuronType::prelu, 9);
    grouped.sourceImages = 3;
    grouped.offset = {0, 0, 1};
    grouped.clip = {1, 0, 1, 3, kWholeExtent, 2};
    grouped.destinationImages = 3;
    grouped.destinationWidth = 5;
    grouped.destinationHeight = 5;
    grouped.residualChannelOffset = 8;
    cases.push_back(grouped);
    Case unaligned;  // direct shader: an unaligned destination offset (concatenation)
    unaligned.descriptor = ConvolutionDescriptor::make(3, 3, 5, 7, NeuronDescriptor::relu());
    unaligned.destinationChannelOffset = 3;
    unaligned.extraDestinationChannels = 2;
    unaligned.residualChannelOffset = 4;
    cases.push_back(unaligned);
    Case depthwise;  // depthwise, stride 2, batch normalisation folded first
    depthwise.descriptor = ConvolutionDescriptor::depthwise(3, 3, 10, 1, NeuronDescriptor::relu());
    depthwise.descriptor.strideInPixelsX = depthwise.descriptor.strideInPixelsY = 2;
    depthwise.descriptor.setBatchNormalizationParametersForInference(
        randomFloats(10, 5), randomFloats(10, 6, 0.5f, 1.5f), randomFloats(10, 7),
        randomFloats(10, 8), 1e-5f);
    depthwise.width = 9;
    depthwise.height = 7;
    cases.push_back(depthwise);
    for (Case c : cases) {
      c.format = format;
      c.residual = true;
      c.seed = seed++;
      CAPTURE(describe(c));
      CAPTURE(c.residualChannelOffset);
      run(c);
    }
  }
}

// A source activation for d's input channels: scales in [0.5, 1.5) of random sign, shifts in
// [-0.5, 0.5) (about half the ReLU's inputs negative), from seeds seed and seed + 1.
void sampleSourceActivation(ConvolutionDescriptor& d, uint32_t seed, NeuronType neuron) {
  SourceActivation a;
  a.scale = randomFloats(d.inputFeatureChannels, seed, 0.5f, 1.5f);
  for (size_t c = 0; c < a.scale.size(); c += 3) a.scale[c] = -a.scale[c];
  a.shift = randomFloats(d.inputFeatureChannels, seed + 1, -0.5f, 0.5f);
  a.neuron = neuron;
  d.sourceActivation = a;
}

TEST_CASE("convolution: a source activation (batch norm and ReLU before it) on every shader") {
  // ConvolutionDescriptor::sourceActivation: each shader applies it where it reads the source
  // (convolution_bindings.glsl): the GEMM tiles (and, in float16 on GPUs with matrix units, the
  // tiles and split-k shaders), the direct shader (groups, an unaligned destination), depthwise
  // (its unrolled rows and its loop). Padding must stay zero, not become relu(shift): the shifts
  // are half positive. Channel windows that start inside a layer, residuals, batch norm folded
  // after, and the affine alone.
  uint32_t seed = 2000;
  std::vector<Case> cases;
  Case dense;  // 1x1 40 -> 36 @14x14, as DenseNet's bottlenecks
  dense.descriptor = ConvolutionDescriptor::make(1, 1, 40, 36, NeuronDescriptor::relu());
  dense.width = dense.height = 14;
  cases.push_back(dense);
  Case padded;  // 3x3 padded on every side, 2 images, a residual: padding reads zero
  padded.descriptor = ConvolutionDescriptor::make(3, 3, 13, 70, NeuronDescriptor::relu());
  padded.padding = Padding::explicitPadding(1, 1, 1, 1);
  padded.width = 13;
  padded.height = 11;
  padded.sourceImages = 2;
  padded.residual = true;
  cases.push_back(padded);
  Case window;  // a window from channel 3 of 42, 3x3 stride 2, batch norm after, affine only
  window.descriptor = ConvolutionDescriptor::make(3, 3, 36, 20);
  window.descriptor.strideInPixelsX = window.descriptor.strideInPixelsY = 2;
  sampleBatchNormalization(window.descriptor, 77);
  window.extraSourceChannels = 6;
  window.sourceChannelOffset = 3;
  window.width = 11;
  window.height = 9;
  cases.push_back(window);
  Case grouped;  // direct shader: 3 groups of 2 input channels
  grouped.descriptor = ConvolutionDescriptor::make(3, 3, 6, 9, NeuronDescriptor::relu());
  grouped.descriptor.groups = 3;
  cases.push_back(grouped);
  Case groupedAligned;  // groups of 8 channels: convolution_tiled per group on matrix units
  groupedAligned.descriptor = ConvolutionDescriptor::make(3, 3, 16, 32);
  groupedAligned.descriptor.groups = 2;
  groupedAligned.width = groupedAligned.height = 9;
  cases.push_back(groupedAligned);
  Case unaligned;  // direct shader: an unaligned destination offset (concatenation)
  unaligned.descriptor = ConvolutionDescriptor::make(1, 1, 5, 7, NeuronDescriptor::relu());
  unaligned.destinationChannelOffset = 3;
  unaligned.extraDestinationChannels = 2;
  cases.push_back(unaligned);
  Case depthwise;  // the unrolled rows: one output per input channel, whole slices
  depthwise.descriptor = ConvolutionDescriptor::depthwise(3, 3, 8, 1, NeuronDescriptor::relu());
  depthwise.padding = Padding::explicitPadding(1, 1, 1, 1);
  cases.push_back(depthwise);
  Case multiplier;  // the loop: a channel multiplier of 2, a window from channel 1
  multiplier.descriptor = ConvolutionDescriptor::depthwise(3, 3, 5, 2);
  multiplier.extraSourceChannels = 2;
  multiplier.sourceChannelOffset = 1;
  cases.push_back(multiplier);
  Case oneChannel;  // dense with one input channel: the depthwise shader too
  oneChannel.descriptor = ConvolutionDescriptor::make(3, 3, 1, 6, NeuronDescriptor::relu());
  cases.push_back(oneChannel);
  {
    // A tuning key of its own: other pipelines, and Winograd cannot run it.
    ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 8, 8);
    const std::vector<float> w = randomWeights(d, 3);
    Convolution plain(context(), d, w);
    sampleSourceActivation(d, 5, NeuronType::relu);
    Convolution activated(context(), d, w);
    Image x(context(), {6, 5, 8, 1, ChannelFormat::float32, ImageUsage::all, "x"});
    Image y(context(), {6, 5, 8, 1, ChannelFormat::float32});
    CommandBuffer cb(context());
    plain.encode(cb, x, y);
    activated.encode(cb, x, y);
    CHECK(activated.tuningKey() == plain.tuningKey() + " activated");
  }
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16})
    for (const NeuronType neuron : {NeuronType::relu, NeuronType::none})
      for (Case c : cases) {
        c.format = format;
        c.seed = seed++;
        sampleSourceActivation(c.descriptor, seed++, neuron);
        CAPTURE(describe(c));
        CAPTURE(toString(neuron));
        run(c);
      }
}

TEST_CASE("convolution: a source activation on every configuration, forced") {
  // VKCNN_CONVOLUTION_TILE forces each portable GEMM tile (float32), and on GPUs with matrix units
  // each tile of convolution_tiles.h, split or whole, and each split-k shader (float16); the
  // shapes: a 1x1 bottleneck over 3 row tiles, and a padded 3x3 with a residual. Lavapipe runs the
  // portable tiles only (docs/testing.md names the GPU command).
  std::vector<std::string> configurations = {"gemm_128x32w16", "gemm_128x32w8", "gemm_128x16w8",
                                             "gemm_large", "gemm_small"};
  const bool matrixUnits = context().capabilities().matrixUnits;
  if (matrixUnits) {
    configurations.insert(configurations.end(), {"matrix_large", "matrix_medium", "matrix_small"});
    for (const detail::MatrixTile& tile : detail::kMatrixTiles)
      for (const char* splits : {"", "s2"})
        configurations.push_back(tile.name + std::string(splits));
  }
  Case a;  // 1x1 72 -> 40 over 2 images of 12x13 (312 rows)
  a.descriptor = ConvolutionDescriptor::make(1, 1, 72, 40, NeuronDescriptor::relu());
  a.width = 12;
  a.height = 13;
  a.sourceImages = 2;
  Case b;  // 3x3 padded, 13 -> 70, a residual
  b.descriptor = ConvolutionDescriptor::make(3, 3, 13, 70, NeuronDescriptor::relu());
  b.padding = Padding::explicitPadding(1, 1, 1, 1);
  b.width = 13;
  b.height = 11;
  b.residual = true;
  uint32_t seed = 2100;
  for (const std::string& configuration : configurations) {
    CAPTURE(configuration);
    forceChoice(&detail::ChoiceOverrides::tile, configuration.c_str());
    const bool portable = configuration.rfind("gemm_", 0) == 0;
    for (Case c : {a, b}) {
      c.format = portable ? ChannelFormat::float32 : ChannelFormat::float16;
      c.seed = seed++;
      sampleSourceActivation(c.descriptor, seed++, NeuronType::relu);
      CAPTURE(describe(c));
      run(c);
    }
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
}

TEST_CASE("convolution: a temporary residual is one read; bad residuals are errors") {
  const ConvolutionDescriptor d = ConvolutionDescriptor::make(1, 1, 4, 4, NeuronDescriptor::relu());
  Convolution kernel(context(), d, randomFloats(d.weightCount(), 3));
  const Tensor x = randomTensor(2, 4, 3, 3, 4);
  const Image source = makeImage(x, ChannelFormat::float32, "x");

  // A temporary residual goes back to the pool after its one read, as if an Arithmetic add read
  // it; a source that is also the residual is read once.
  runOnce([&](CommandBuffer& cb) {
    TemporaryImage shortcut(cb, {3, 3, 4, 2, ChannelFormat::float32});
    Neuron copy(context(), NeuronDescriptor{});
    copy.encode(cb, source, shortcut);
    shortcut.setReadCount(2);
    TemporaryImage y = kernel.encodeWithResidual(cb, source, shortcut);
    CHECK(shortcut.readCount() == 1);
    TemporaryImage z = kernel.encodeWithResidual(cb, shortcut, shortcut);
    CHECK(shortcut.readCount() == 0);
    VKCNN_CHECK_ERROR(kernel.encodeWithResidual(cb, source, shortcut, y), ErrorCode::misuse,
                      "residual");
    CHECK(y.readCount() == 1);
    CHECK(z.readCount() == 1);
  });

  Image destination(context(), {3, 3, 8, 2, ChannelFormat::float32, ImageUsage::all, "y"});
  auto wrong = [&](ImageDescriptor descriptor, const char* fragment) {
    descriptor.label = "r";
    const Image residual(context(), descriptor);
    CAPTURE(fragment);
    runOnce([&](CommandBuffer& cb) {
      VKCNN_CHECK_ERROR(kernel.encodeWithResidual(cb, source, residual, destination),
                        ErrorCode::invalidArgument, fragment);
    });
  };
  wrong({4, 3, 4, 2}, "residual 'r' is 4x3x4 with 2 images but must be 3x3x4 with 2 images");
  wrong({3, 2, 4, 2}, "residual 'r' is 3x2x4 with 2 images");
  wrong({3, 3, 5, 2}, "residual 'r' is 3x3x5 with 2 images");
  wrong({3, 3, 4, 1}, "residual 'r' is 3x3x4 with 1 images");
  // The residual may not be the layers the kernel writes.
  runOnce([&](CommandBuffer& cb) {
    VKCNN_CHECK_ERROR(
        kernel.encodeWithResidual(cb, source, destination.subImage({0, 4}), destination),
        ErrorCode::invalidArgument, "in-place kernels are not supported");
    VKCNN_CHECK_ERROR(kernel.encodeWithResidual(cb, source, Image{}), ErrorCode::invalidArgument,
                      "the residual is empty");
  });
  // Other layers of the destination's image are fine: channels [4, 8) into [0, 4).
  Image both = makeImage(randomTensor(2, 8, 3, 3, 5), ChannelFormat::float32, "both");
  const Tensor before = download(both);
  runOnce([&](CommandBuffer& cb) {
    kernel.encodeWithResidual(cb, source, both.subImage({4, 4}), both);
  });
  const Tensor after = download(both);
  CHECK(after.at(1, 5, 2, 2) == before.at(1, 5, 2, 2));
  const std::vector<float> w = randomFloats(d.weightCount(), 3);
  double sum = before.at(1, 6, 2, 1);
  for (uint32_t ic = 0; ic < 4; ++ic) sum += x.at(1, ic, 2, 1) * w[2 * 4 + ic];
  CHECK(std::abs(after.at(1, 2, 2, 1) - std::max(sum, 0.0)) < 1e-5);
}

TEST_CASE(
    "convolution: every neuron type, with and without a residual, fixed in a tile's pipeline") {
  // The neuron's type and the residual are specialization constants of the tiles' pipelines
  // (convolution_tiled.glsl's EPILOGUE_OPS): every type, each with and without a residual, on a
  // 64x64 tile whose epilogue reads ahead ("ahead") or as it goes ("inline-fixed", what small
  // layers get), and with both in the push constants ("inline"); the pieces shader's in "a
  // batch's pieces in one matrix-unit dispatch". On a GPU without matrix units (lavapipe) the
  // same cases run on the portable shaders.
  for (const char* epilogue : {"ahead", "inline-fixed", "inline"}) {
    // Lavapipe runs the portable shaders, which the variable does not change: twice is enough.
    if (std::string(epilogue) == "inline" && !context().capabilities().matrixUnits) continue;
    CAPTURE(epilogue);
    forceChoice(&detail::ChoiceOverrides::epilogue, epilogue);
    for (uint32_t t = 0; t < kNeuronTypeCount; ++t) {
      const auto type = NeuronType(t);
      CAPTURE(toString(type));
      for (bool residual : {false, true}) {
        CAPTURE(residual);
        forceChoice(&detail::ChoiceOverrides::tile, "64x64");
        Case c;
        c.seed = 1700 + 2 * t + (residual ? 1 : 0);
        c.descriptor = ConvolutionDescriptor::make(3, 3, 16, 24, sampleNeuron(type, 24));
        c.padding = Padding::explicitPadding(1, 1, 1, 1);
        c.width = 9;
        c.height = 7;
        c.sourceImages = 2;
        c.residual = residual;
        c.format = ChannelFormat::float16;
        run(c);
      }
    }
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
  forceChoice(&detail::ChoiceOverrides::epilogue, "");
}
