// What a convolution kernel keeps and refuses: the copies of its weights by destination format
// and size, packing on several threads (parallelRanges), weights and bias from .dat files, and
// every descriptor and shape error before anything is encoded.
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

TEST_CASE("convolution: a float32 destinationFormat makes no float16 copies of the weights") {
  // Fully connected layers keep a float16 copy for fully_connected_batched_half.comp (and every
  // dense layer one for the matrix units where there are some): a float32 network never reads
  // them. The lower bound below is the half copy alone, so it holds with matrix units or without.
  const ConvolutionDescriptor plain = ConvolutionDescriptor::make(4, 4, 64, 96);
  ConvolutionDescriptor float32Only = plain;
  float32Only.destinationFormat = ChannelFormat::float32;
  const std::vector<float> w = randomFloats(size_t(plain.weightCount()), 77);
  const std::vector<float> bias = randomFloats(96, 78);
  auto inUse = [] { return context().memoryStatistics().deviceBytesInUse; };
  { FullyConnected warm(context(), plain, w, bias); }  // staging buffers, kept for reuse
  const uint64_t before32 = inUse();
  uint64_t with32 = 0, with16 = 0;
  {
    FullyConnected kernel(context(), float32Only, w, bias);
    with32 = inUse() - before32;
  }
  const uint64_t before16 = inUse();
  {
    FullyConnected kernel(context(), plain, w, bias);
    with16 = inUse() - before16;
  }
  CAPTURE(with32);
  CAPTURE(with16);
  CHECK(with32 >= plain.weightCount() * sizeof(float));
  CHECK(with16 >= with32 + plain.weightCount() * sizeof(uint16_t));

  // Results stay right, float16 destinations included (they read the float32 weights then).
  uint32_t seed = 2100;
  for (bool fullyConnected : {true, false})
    for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
      Case c;
      c.seed = seed++;
      c.fullyConnected = fullyConnected;
      c.descriptor = fullyConnected ? ConvolutionDescriptor::make(3, 2, 12, 9)
                                    : ConvolutionDescriptor::make(3, 3, 12, 9);
      c.descriptor.destinationFormat = ChannelFormat::float32;
      c.width = fullyConnected ? 3 : 7;
      c.height = fullyConnected ? 2 : 5;
      c.sourceImages = c.destinationImages = 2;
      c.format = format;
      INFO(describe(c));
      run(c);
    }
}

TEST_CASE("convolution: a large fully connected layer keeps no matrix-unit copy") {
  // From 2 M weights (kLargeFullyConnected) the float16 batched shader serves the layer at every
  // batch, so only the float32 weights and their float16 copy are kept (with matrix units or
  // without); a destination starting inside an array layer, which that shader does not take, runs
  // on the float32 weights.
  const ConvolutionDescriptor d = ConvolutionDescriptor::make(1, 1, 2048, 2048);
  REQUIRE(d.weightCount() >= 2000000);
  const std::vector<float> w = randomFloats(size_t(d.weightCount()), 79, -0.05f, 0.05f);
  auto inUse = [] { return context().memoryStatistics().deviceBytesInUse; };
  { FullyConnected warm(context(), d, w); }  // staging buffers, kept for reuse
  const uint64_t before = inUse();
  uint64_t bytes = 0;
  {
    FullyConnected kernel(context(), d, w);
    bytes = inUse() - before;
  }
  CAPTURE(bytes);
  const uint64_t weights = d.weightCount() * (sizeof(float) + sizeof(uint16_t));
  CHECK(bytes >= weights);
  CHECK(bytes < weights + d.weightCount() * sizeof(uint16_t) / 2);

  uint32_t seed = 2200;
  for (uint32_t offset : {0u, 2u}) {
    Case c;
    c.seed = seed++;
    c.fullyConnected = true;
    c.descriptor = d;
    c.width = c.height = 1;
    c.format = ChannelFormat::float16;
    c.destinationChannelOffset = offset;
    INFO(describe(c));
    run(c);
  }
}

TEST_CASE("convolution: a layer large enough to be packed on several threads") {
  // 1030 -> 2050 (2.1 M weights, neither a multiple of 4): its output channels are packed in
  // ranges on threads (parallelRanges), the padding of each range zeroed by its thread. In
  // float16 on a device with matrix units the transposed float16 layout is what runs.
  for (auto [batchNorm, format] : {std::pair{false, ChannelFormat::float32},
                                   {true, ChannelFormat::float32},
                                   {true, ChannelFormat::float16}}) {
    Case c;
    c.seed = 880 + batchNorm + 2 * (format == ChannelFormat::float16);
    c.format = format;
    c.fullyConnected = true;
    c.descriptor = ConvolutionDescriptor::make(1, 1, 1030, 2050, NeuronDescriptor::relu());
    if (batchNorm)
      c.descriptor.setBatchNormalizationParametersForInference(
          randomFloats(2050, 7, -0.5f, 0.5f), randomFloats(2050, 8, 0.5f, 2.f),
          randomFloats(2050, 9, 0.5f, 1.5f), randomFloats(2050, 10, -0.5f, 0.5f), 1e-3f);
    c.width = c.height = 1;
    c.destinationChannelOffset = 4;
    CAPTURE(batchNorm);
    CAPTURE(int(format));
    run(c);
  }
}

TEST_CASE("convolution: parallelRanges covers every item once, in whole grains") {
  for (auto [count, grain, minimum] : {std::tuple<size_t, size_t, size_t>{0, 1, 1},
                                       {1, 1, 1},
                                       {1000, 1, 1},
                                       {1000, 64, 1},
                                       {1000, 7, 300},
                                       {1000, 1, 2000},
                                       {5, 64, 1}}) {
    CAPTURE(count);
    CAPTURE(grain);
    CAPTURE(minimum);
    std::vector<std::atomic<int>> seen(count);
    std::mutex mutex;
    std::vector<std::pair<size_t, size_t>> ranges;
    detail::parallelRanges(count, grain, minimum, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) ++seen[i];
      std::lock_guard lock(mutex);
      ranges.emplace_back(b, e);
    });
    for (size_t i = 0; i < count; ++i) CHECK(seen[i] == 1);
    for (auto [b, e] : ranges) {
      CHECK(b < e);
      CHECK(b % grain == 0);
      CHECK((e % grain == 0 || e == count));
    }
    // Fewer than `minimum` items per thread: the calling thread alone, in one range.
    if (count < 2 * minimum) CHECK(ranges.size() <= 1);
    CHECK(ranges.size() <= std::max(1u, std::thread::hardware_concurrency()));
  }
}

TEST_CASE("convolution: weights and bias from .dat files") {
  ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 5, 6, NeuronDescriptor::relu());
  std::vector<float> w = randomWeights(d, 41);
  std::vector<float> bias = randomFloats(6, 42);
  const std::string weightsPath = writeTemporaryDatFile(w, "conv-weights");
  const std::string biasPath = writeTemporaryDatFile(bias, "conv-bias");
  Case c;
  c.descriptor = d;
  c.width = 7;
  c.height = 6;
  c.seed = 43;
  Tensor x = randomTensor(1, 5, 6, 7, 43);
  {
    Convolution conv = Convolution::fromDatFiles(context(), d, weightsPath, biasPath);
    runWith(conv, c, x, w, bias);
  }
  {
    Convolution conv = Convolution::fromDatFiles(context(), d, weightsPath);  // no bias
    runWith(conv, c, x, w, {});
  }
  {
    Case fc = c;
    fc.fullyConnected = true;
    fc.descriptor = ConvolutionDescriptor::make(7, 6, 5, 6, NeuronDescriptor::relu());
    std::vector<float> fw = randomWeights(fc.descriptor, 44);
    FullyConnected kernel = FullyConnected::fromDatFiles(
        context(), fc.descriptor, writeTemporaryDatFile(fw, "fc-weights"), biasPath);
    runWith(kernel, fc, x, fw, bias);
  }
  std::filesystem::remove(weightsPath);
  std::filesystem::remove(biasPath);
}

TEST_CASE("convolution: .dat files too short, too long, missing") {
  ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 5, 6);
  // 270 weights = 1080 bytes; 6 bias values = 24 bytes.
  const std::string shortPath = writeTemporaryDatFile(std::vector<float>(269), "short");
  const std::string longPath = writeTemporaryDatFile(std::vector<float>(271), "long");
  const std::string goodPath = writeTemporaryDatFile(std::vector<float>(270), "good");
  const std::string emptyPath = writeTemporaryDatFile({}, "empty");
  const std::string missingPath = shortPath + ".missing";
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, shortPath), ErrorCode::io, shortPath);
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, shortPath), ErrorCode::io,
                    "too short: expected 1080 bytes (270 float32 values), found 1076 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, longPath), ErrorCode::io,
                    "too long: expected 1080 bytes (270 float32 values), found 1084 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, emptyPath), ErrorCode::io,
                    "found 0 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, missingPath), ErrorCode::io,
                    missingPath);
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, missingPath), ErrorCode::io,
                    "expected 1080 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, goodPath, longPath), ErrorCode::io,
                    "bias file '" + longPath + "' is too long: expected 24 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, goodPath, missingPath), ErrorCode::io,
                    "bias file '" + missingPath);
  VKCNN_CHECK_ERROR(
      Convolution::fromDatFiles(context(), d, std::filesystem::temp_directory_path().string()),
      ErrorCode::io, "not a regular file");
  ConvolutionDescriptor fc = ConvolutionDescriptor::make(2, 2, 3, 4);
  VKCNN_CHECK_ERROR(FullyConnected::fromDatFiles(context(), fc, shortPath), ErrorCode::io,
                    "expected 192 bytes (48 float32 values), found 1076 bytes");
  // The descriptor is checked before any file is opened.
  ConvolutionDescriptor bad = d;
  bad.groups = 2;
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), bad, missingPath),
                    ErrorCode::invalidArgument, "divisible by groups");
  for (const auto& p : {shortPath, longPath, goodPath, emptyPath}) std::filesystem::remove(p);
}

TEST_CASE("convolution: bad descriptors and shapes are errors before anything is encoded") {
  auto make = [](uint32_t kw, uint32_t kh, uint32_t in, uint32_t out) {
    return ConvolutionDescriptor::make(kw, kh, in, out);
  };
  auto weightsFor = [](const ConvolutionDescriptor& d) {
    return std::vector<float>(d.groups ? size_t(d.weightCount()) : 1, 0.1f);
  };
  auto check = [&](ConvolutionDescriptor d, const char* fragment) {
    CAPTURE(fragment);
    VKCNN_CHECK_ERROR(Convolution(context(), d, weightsFor(d)), ErrorCode::invalidArgument,
                      fragment);
  };
  check(make(0, 3, 4, 4), "kernel size 0x3");
  check(make(3, 0, 4, 4), "kernel size 3x0");
  check(make(3, 3, 0, 4), "inputFeatureChannels is 0");
  check(make(3, 3, 4, 0), "outputFeatureChannels is 0");
  ConvolutionDescriptor d = make(3, 3, 6, 8);
  d.groups = 0;
  check(d, "groups is 0");
  d.groups = 4;
  check(d, "inputFeatureChannels 6 is not divisible by groups 4");
  d = make(3, 3, 8, 6);
  d.groups = 4;
  check(d, "outputFeatureChannels 6 is not divisible by groups 4");
  d = make(3, 3, 4, 4);
  d.strideInPixelsX = 0;
  check(d, "stride 0x1");
  d = make(3, 3, 4, 4);
  d.strideInPixelsY = 0;
  check(d, "stride 1x0");
  d = make(3, 3, 4, 4);
  d.dilationRateX = 0;
  check(d, "dilation rate 0x1");
  d = make(3, 3, 4, 4);
  d.dilationRateY = 0;
  check(d, "dilation rate 1x0");

  // Weight and bias counts.
  d = make(3, 3, 4, 5);
  VKCNN_CHECK_ERROR(Convolution(context(), d, std::vector<float>(179)), ErrorCode::invalidArgument,
                    "179 weights given, the descriptor needs 180");
  ConvolutionDescriptor grouped = make(3, 3, 4, 6);
  grouped.groups = 2;
  VKCNN_CHECK_ERROR(Convolution(context(), grouped, std::vector<float>(216)),
                    ErrorCode::invalidArgument, "216 weights given, the descriptor needs 108");
  VKCNN_CHECK_ERROR(Convolution(context(), d, std::vector<float>(180), std::vector<float>(4)),
                    ErrorCode::invalidArgument,
                    "4 bias values given for 5 output feature channels");

  // Neurons.
  d = make(1, 1, 4, 5);
  d.neuron = NeuronDescriptor{NeuronType::prelu};
  check(d, "PReLU neuron needs at least one slope");
  d.setNeuronToPReLUWithParametersA(std::vector<float>(3, 0.1f));
  check(d, "3 PReLU slopes for 5 output feature channels");
  d.neuron = NeuronDescriptor::of(NeuronType(99));
  check(d, "neuron type 99");
  VKCNN_CHECK_ERROR(d.setNeuronType(NeuronType::prelu), ErrorCode::invalidArgument,
                    "setNeuronToPReLUWithParametersA");
  d.setNeuronType(NeuronType::linear, 2, 3);
  CHECK(int(d.neuron.type) == int(NeuronType::linear));
  CHECK(d.neuron.a == 2);
  CHECK(d.neuron.b == 3);

  // Batch normalisation.
  d = make(1, 1, 4, 5);
  d.setBatchNormalizationParametersForInference(std::vector<float>(4), std::vector<float>(5, 1), {},
                                                {}, 0);
  check(d, "batch normalization mean has 4 values for 5 output feature channels");
  d.setBatchNormalizationParametersForInference(std::vector<float>(5), std::vector<float>(5, 1),
                                                std::vector<float>(2), {}, 0);
  check(d, "batch normalization gamma has 2 values");
  d.setBatchNormalizationParametersForInference(std::vector<float>(5), std::vector<float>(5, 1), {},
                                                std::vector<float>(6), 0);
  check(d, "batch normalization beta has 6 values");
  d.setBatchNormalizationParametersForInference(std::vector<float>(5), std::vector<float>(3, 1), {},
                                                {}, 0);
  check(d, "batch normalization variance has 3 values");
  d.setBatchNormalizationParametersForInference(
      std::vector<float>(5), std::vector<float>{1, 1, -0.5f, 1, 1}, {}, {}, 0.25f);
  check(d, "variance[2] + epsilon is -0.25");

  // Source activations.
  d = make(1, 1, 6, 4);
  d.sourceActivation = SourceActivation{std::vector<float>(5, 1.f), std::vector<float>(6, 0.f)};
  check(d, "source activation has 5 scales and 6 shifts for 6 input feature channels");
  d.sourceActivation->scale.push_back(1.f);
  d.sourceActivation->neuron = NeuronType::sigmoid;
  check(d, "source activation neuron sigmoid (must be none or relu)");
  d.sourceActivation->neuron = NeuronType::relu;
  d.sourceActivation->shift[4] = std::numeric_limits<float>::infinity();
  check(d, "source activation scale or shift of channel 4 is not finite");

  // Fully connected.
  ConvolutionDescriptor fc = make(3, 3, 4, 5);
  fc.dilationRateX = 2;
  VKCNN_CHECK_ERROR(FullyConnected(context(), fc, weightsFor(fc)), ErrorCode::invalidArgument,
                    "dilation rate 2x1 must be 1x1");
  fc.dilationRateX = 1;
  fc.sourceActivation = SourceActivation{std::vector<float>(4, 1.f), std::vector<float>(4, 0.f)};
  VKCNN_CHECK_ERROR(FullyConnected(context(), fc, weightsFor(fc)), ErrorCode::invalidArgument,
                    "a fully connected layer takes no source activation");

  // Encode-time shapes.
  CommandBuffer cb(context());
  Image source(context(), {6, 5, 8, 2, ChannelFormat::float32, ImageUsage::all, "source"});
  Image destination(context(), {6, 5, 8, 2, ChannelFormat::float32});
  ConvolutionDescriptor seven = make(3, 3, 7, 8);
  Convolution conv(context(), seven, weightsFor(seven));
  conv.label = "conv1";
  VKCNN_CHECK_ERROR(conv.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "kernel 'conv1': the source channel window of 'source' holds 8 feature "
                    "channels (sourceFeatureChannelOffset 0) but inputFeatureChannels is 7");
  conv.sourceFeatureChannelOffset = 1;
  conv.destinationFeatureChannelOffset = 1;
  VKCNN_CHECK_ERROR(conv.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset 1");
  ConvolutionDescriptor fcd = make(6, 4, 8, 3);
  FullyConnected fully(context(), fcd, weightsFor(fcd));
  VKCNN_CHECK_ERROR(fully.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "source 'source' is 6x5 but the fully connected kernel spans 6x4");
  ConvolutionDescriptor big = make(7, 3, 8, 8);
  Convolution tooBig(context(), big, weightsFor(big));
  tooBig.padding = Padding::explicitPadding(0, 0, 0, 0);
  Image narrow(context(), {5, 5, 8, 1, ChannelFormat::float32});
  VKCNN_CHECK_ERROR(tooBig.encode(cb, narrow), ErrorCode::invalidArgument,
                    "padded source width 5 (5 + 0 + 0) is smaller than the dilated kernel width 7");
  // A window origin (offset minus padding) past the shader's 32-bit coordinates.
  ConvolutionDescriptor eight = make(3, 3, 8, 8);
  Convolution far(context(), eight, weightsFor(eight));
  far.padding = Padding::explicitPadding(0, 0x80000000u, 0, 0);
  far.offset.x = -1;
  VKCNN_CHECK_ERROR(far.encode(cb, source, destination), ErrorCode::limitExceeded,
                    "window origin x -2147483649");
  CHECK(cb.encodingStatistics().dispatches == 0);
}
