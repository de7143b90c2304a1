// LocalResponseNormalization and InstanceNormalization against double-precision references:
// swept channel counts and window sizes, odd and even image sizes, batch sub-ranges, clip and
// offset, source channel windows into unaligned destination channel offsets, fused neurons,
// values far from zero, float16, NaN and infinities, and every bad parameter.
#include <cmath>
#include <vector>

#include "reductions_check.h"
#include "test_support.h"
#include "vkcnn/normalization.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

uint32_t windowOf(const Kernel& k, uint32_t sourceChannels) {
  return std::min(k.sourceFeatureChannelMaxCount, sourceChannels - k.sourceFeatureChannelOffset);
}

// ONNX LRN over the window [first, +count) of source pixel (i, y, x); zero outside the source.
struct LrnReference {
  const Tensor& x;
  uint32_t first, count;
  LocalResponseNormalizationDescriptor d;

  double operator()(uint32_t i, uint32_t c, int64_t y, int64_t xx) const {
    const int64_t lo = std::max<int64_t>(0, int64_t(c) - (int64_t(d.size) - 1) / 2);
    const int64_t hi = std::min<int64_t>(int64_t(count) - 1, int64_t(c) + int64_t(d.size) / 2);
    double squares = 0;
    for (int64_t k = lo; k <= hi; ++k) {
      const double v = x.atOrZero(i, first + uint32_t(k), y, xx);
      squares += v * v;
    }
    const double base = double(d.bias) + double(d.alpha) / d.size * squares;
    return x.atOrZero(i, first + c, y, xx) / std::pow(base, double(d.beta));
  }
};

// Instance normalisation with statistics over the whole source image of each window channel.
struct InstanceNormReference {
  const Tensor& x;
  uint32_t first, count;
  InstanceNormalizationDescriptor d;
  std::vector<double> mean, variance;  // [image][window channel]

  InstanceNormReference(const Tensor& x, uint32_t first, uint32_t count,
                        InstanceNormalizationDescriptor d)
      : x(x), first(first), count(count), d(std::move(d)) {
    for (uint32_t i = 0; i < x.n; ++i)
      for (uint32_t c = 0; c < count; ++c) {
        double sum = 0;
        for (uint32_t y = 0; y < x.h; ++y)
          for (uint32_t xx = 0; xx < x.w; ++xx) sum += x.at(i, first + c, y, xx);
        const double m = sum / (double(x.h) * x.w);
        double squares = 0;
        for (uint32_t y = 0; y < x.h; ++y)
          for (uint32_t xx = 0; xx < x.w; ++xx)
            squares += (x.at(i, first + c, y, xx) - m) * (x.at(i, first + c, y, xx) - m);
        mean.push_back(m);
        variance.push_back(squares / (double(x.h) * x.w));
      }
  }

  double operator()(uint32_t i, uint32_t c, int64_t y, int64_t xx) const {
    const double gamma = d.gamma.empty() ? 1.0 : double(d.gamma[c]);
    const double beta = d.beta.empty() ? 0.0 : double(d.beta[c]);
    const size_t s = size_t(i) * count + c;
    const double v = gamma * (x.atOrZero(i, first + c, y, xx) - mean[s]) /
                         std::sqrt(variance[s] + double(d.epsilon)) +
                     beta;
    return applyNeuron(d.neuron, v, c);
  }
};

// Runs `kernel` from `x` (already rounded to `format`) into a poisoned destination and checks it
// against `ref`.
template <typename Ref>
void runAndCheck(UnaryKernel& kernel, const Tensor& x, ChannelFormat format,
                 ImageDescriptor destination, const Ref& ref) {
  Image source = makeImage(x, format, "x");
  destination.channelFormat = format;
  Image output = makePoisoned(context(), destination);
  runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, output); });
  checkDestination(
      download(output),
      expectedDestination(kernel, destination.numberOfImages, destination.featureChannels,
                          destination.height, destination.width, windowOf(kernel, x.c), ref),
      tolerance(format));
}

void checkLrn(LocalResponseNormalization& kernel, const Tensor& unrounded, ChannelFormat format,
              const ImageDescriptor& destination) {
  const Tensor x = roundedTo(unrounded, format);
  runAndCheck(kernel, x, format, destination,
              LrnReference{x, kernel.sourceFeatureChannelOffset, windowOf(kernel, x.c),
                           kernel.descriptor()});
}

void checkInstanceNorm(InstanceNormalization& kernel, const Tensor& unrounded, ChannelFormat format,
                       const ImageDescriptor& destination) {
  const Tensor x = roundedTo(unrounded, format);
  runAndCheck(kernel, x, format, destination,
              InstanceNormReference(x, kernel.sourceFeatureChannelOffset, windowOf(kernel, x.c),
                                    kernel.descriptor()));
}

InstanceNormalizationDescriptor randomInstanceNorm(uint32_t channels, uint32_t seed,
                                                   NeuronDescriptor neuron = {}) {
  InstanceNormalizationDescriptor d;
  d.featureChannels = channels;
  d.gamma = randomFloats(channels, seed, 0.5f, 2.0f);
  d.beta = randomFloats(channels, seed + 1, -1.0f, 1.0f);
  d.neuron = std::move(neuron);
  return d;
}

// 8 channels of 5x5: a NaN in channel 1, +inf in 3, -inf in 5, both infinities in 6.
Tensor withSpecials(ChannelFormat format) {
  Tensor x = roundedTo(randomTensor(1, 8, 5, 5, 123, -2, 2), format);
  x.at(0, 1, 2, 3) = NAN;
  x.at(0, 3, 0, 0) = INFINITY;
  x.at(0, 5, 4, 1) = -INFINITY;
  x.at(0, 6, 1, 1) = INFINITY;
  x.at(0, 6, 3, 2) = -INFINITY;
  return x;
}

// Runs `kernel` on `x` into a destination poisoned with a finite value; compares element by
// element with `ref`, NaN and infinities included.
template <typename Ref>
void checkSpecials(UnaryKernel& kernel, const Tensor& x, ChannelFormat format, const Ref& ref) {
  Image source = makeImage(x, format, "x");
  Image output(context(), {x.w, x.h, x.c, x.n, format});
  fill(output, 1234.f);
  runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, output); });
  compareSpecials(download(output), expectedDestination(kernel, x.n, x.c, x.h, x.w, x.c, ref),
                  format == ChannelFormat::float32 ? 1e-4 : 4e-3);
}

}  // namespace

TEST_CASE("lrn and instance norm: NaN and infinities propagate as in PyTorch") {
  // LRN: a NaN reaches the channels whose window holds it; an infinite neighbour makes the
  // denominator infinite (0 for finite x, NaN for the infinity itself: inf / inf). Instance
  // norm: a channel holding NaN or an infinity has a NaN mean or variance, so all of it is NaN
  // (its variance's clamp at 0 keeps the NaN: glsl/nan.glsl); the other channels are untouched.
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    const Tensor x = withSpecials(format);
    LocalResponseNormalization lrn(context(), {3, 0.8f, 0.75f, 1.5f});
    checkSpecials(lrn, x, format, LrnReference{x, 0, 8, lrn.descriptor()});
    for (const NeuronDescriptor& neuron : {NeuronDescriptor{}, NeuronDescriptor::relu()}) {
      InstanceNormalization norm(context(), randomInstanceNorm(8, 5, neuron));
      checkSpecials(norm, x, format, InstanceNormReference(x, 0, 8, norm.descriptor()));
    }
  }
}

// ---- LocalResponseNormalization ---------------------------------------------------------------

TEST_CASE("lrn: channel counts and window sizes, float32") {
  struct Shape {
    uint32_t channels, width, height, images;
  };
  const Shape shapes[] = {{1, 3, 2, 1},  {3, 4, 5, 2},  {4, 7, 3, 1},  {5, 2, 2, 3}, {8, 5, 5, 1},
                          {13, 6, 3, 2}, {17, 3, 7, 1}, {32, 4, 4, 1}, {64, 3, 2, 2}};
  for (uint32_t size : {1u, 2u, 3u, 4u, 5u, 1000u}) {
    for (const Shape& s : shapes) {
      CAPTURE(size);
      CAPTURE(s.channels);
      // alpha large enough that the denominator differs clearly from bias^beta.
      LocalResponseNormalization kernel(context(), {size, 0.8f, 0.75f, 1.5f});
      Tensor x =
          randomTensor(s.images, s.channels, s.height, s.width, size * 100 + s.channels, -2, 2);
      checkLrn(kernel, x, ChannelFormat::float32, {s.width, s.height, s.channels, s.images});
    }
  }
  // ONNX defaults, and an AlexNet-like setting with bias 2 and beta 0.75 on larger values.
  Tensor x = randomTensor(1, 13, 5, 4, 5, -20, 20);
  LocalResponseNormalization onnxDefaults(context(), {});
  checkLrn(onnxDefaults, x, ChannelFormat::float32, {4, 5, 13, 1});
  LocalResponseNormalization alexNet(context(), {5, 1e-2f, 0.75f, 2.0f});
  checkLrn(alexNet, x, ChannelFormat::float32, {4, 5, 13, 1});
  LocalResponseNormalization negativeBeta(context(), {3, 0.5f, -0.5f, 1.0f});
  checkLrn(negativeBeta, x, ChannelFormat::float32, {4, 5, 13, 1});
}

TEST_CASE("lrn: float16 on small shapes") {
  for (uint32_t channels : {5u, 13u}) {
    for (uint32_t size : {1u, 3u, 5u}) {
      CAPTURE(channels);
      CAPTURE(size);
      Tensor x = roundedTo(randomTensor(2, channels, 3, 2, channels + size, -2, 2),
                           ChannelFormat::float16);
      LocalResponseNormalization kernel(context(), {size, 0.8f, 0.75f, 1.0f});
      checkLrn(kernel, x, ChannelFormat::float16, {2, 3, channels, 2});
    }
  }
}

TEST_CASE("lrn: batch sub-range, clip rectangle and offset") {
  for (uint32_t channels : {5u, 17u}) {
    CAPTURE(channels);
    Tensor x = randomTensor(4, channels, 5, 6, 400 + channels, -2, 2);
    LocalResponseNormalization kernel(context(), {3, 0.6f, 0.75f, 1.0f});
    kernel.offset = {-1, 2, 1};
    kernel.clipRect = {1, 0, 1, 4, 3, 2};
    checkLrn(kernel, x, ChannelFormat::float32, {7, 4, channels, 3});
  }
}

TEST_CASE("lrn: source channel window into unaligned destination channel offsets") {
  // The window's edges count as the ends of the channels: the sum never reaches outside it.
  for (uint32_t sourceOffset : {0u, 1u, 4u, 6u}) {
    for (uint32_t destinationOffset : {0u, 1u, 3u, 4u, 5u, 10u}) {
      CAPTURE(sourceOffset);
      CAPTURE(destinationOffset);
      Tensor x = randomTensor(2, 13, 3, 2, sourceOffset * 10 + destinationOffset, -2, 2);
      LocalResponseNormalization kernel(context(), {5, 0.9f, 0.75f, 1.0f});
      kernel.sourceFeatureChannelOffset = sourceOffset;
      kernel.sourceFeatureChannelMaxCount = 7;
      kernel.destinationFeatureChannelOffset = destinationOffset;
      checkLrn(kernel, x, ChannelFormat::float32, {2, 3, 17, 2});
    }
  }
}

TEST_CASE("lrn: bad parameters are errors") {
  auto make = [](LocalResponseNormalizationDescriptor d) {
    return LocalResponseNormalization(context(), d);
  };
  VKCNN_CHECK_ERROR(make({0, 1e-4f, 0.75f, 1.0f}), ErrorCode::invalidArgument, "size 0");
  VKCNN_CHECK_ERROR(make({3, -1.0f, 0.75f, 1.0f}), ErrorCode::invalidArgument, "alpha -1");
  VKCNN_CHECK_ERROR(make({3, NAN, 0.75f, 1.0f}), ErrorCode::invalidArgument, "alpha");
  VKCNN_CHECK_ERROR(make({3, 1e-4f, INFINITY, 1.0f}), ErrorCode::invalidArgument, "beta inf");
  VKCNN_CHECK_ERROR(make({3, 1e-4f, 0.75f, 0.0f}), ErrorCode::invalidArgument,
                    "bias (MPS delta) 0");
  VKCNN_CHECK_ERROR(make({3, 1e-4f, 0.75f, -2.0f}), ErrorCode::invalidArgument, "bias");

  Image source(context(), {4, 4, 8, 2, ChannelFormat::float32});
  Image destination(context(), {4, 4, 8, 2, ChannelFormat::float32});
  CommandBuffer cb(context());
  LocalResponseNormalization kernel(context(), {});
  kernel.label = "lrn1";
  kernel.destinationFeatureChannelOffset = 3;
  VKCNN_CHECK_ERROR(kernel.encode(cb, source, destination), ErrorCode::invalidArgument, "'lrn1'");
  kernel.destinationFeatureChannelOffset = 0;
  VKCNN_CHECK_ERROR(kernel.encode(cb, source, source), ErrorCode::invalidArgument, "in-place");
  CHECK(cb.encodingStatistics().dispatches == 0);
}

// ---- InstanceNormalization --------------------------------------------------------------------

TEST_CASE("instance norm: channel counts and sizes, float32") {
  struct Shape {
    uint32_t channels, width, height, images;
  };
  // 1x1 (variance 0: the output is beta), sizes above and below the 256-invocation workgroup.
  const Shape shapes[] = {{1, 5, 3, 1},   {3, 4, 4, 2},  {4, 1, 1, 2},  {5, 7, 2, 3},
                          {8, 17, 16, 1}, {13, 6, 3, 2}, {17, 3, 7, 1}, {32, 9, 4, 1},
                          {64, 3, 2, 2},  {5, 37, 29, 1}};
  for (const Shape& s : shapes) {
    CAPTURE(s.channels);
    CAPTURE(s.width);
    Tensor x =
        randomTensor(s.images, s.channels, s.height, s.width, s.channels * 7 + s.width, -2, 3);
    InstanceNormalization kernel(context(), randomInstanceNorm(s.channels, s.channels));
    checkInstanceNorm(kernel, x, ChannelFormat::float32, {s.width, s.height, s.channels, s.images});
  }
}

TEST_CASE("instance norm: fused neurons") {
  const uint32_t channels = 13;
  Tensor x = randomTensor(2, channels, 5, 6, 31, -2, 2);
  std::vector<NeuronDescriptor> neurons = {NeuronDescriptor::relu(), NeuronDescriptor::relu6(),
                                           NeuronDescriptor::of(NeuronType::sigmoid),
                                           NeuronDescriptor::of(NeuronType::leakyRelu, 0.2f),
                                           NeuronDescriptor::of(NeuronType::tanh, 1.5f, 0.7f)};
  NeuronDescriptor prelu{NeuronType::prelu};
  for (uint32_t c = 0; c < channels; ++c) prelu.preluSlopes.push_back(0.05f * float(c + 1));
  neurons.push_back(prelu);
  NeuronDescriptor sharedSlope{NeuronType::prelu};
  sharedSlope.preluSlopes = {0.3f};
  neurons.push_back(sharedSlope);
  for (const NeuronDescriptor& n : neurons) {
    CAPTURE(toString(n.type));
    InstanceNormalization kernel(context(), randomInstanceNorm(channels, 3, n));
    checkInstanceNorm(kernel, x, ChannelFormat::float32, {6, 5, channels, 2});
  }
  // Without gamma and beta (1 and 0) but with a neuron, in float16.
  InstanceNormalizationDescriptor d;
  d.featureChannels = 5;
  d.neuron = NeuronDescriptor::relu();
  InstanceNormalization plain(context(), d);
  Tensor small = roundedTo(randomTensor(1, 5, 4, 3, 8, -1, 1), ChannelFormat::float16);
  checkInstanceNorm(plain, small, ChannelFormat::float16, {3, 4, 5, 1});
}

TEST_CASE("instance norm: large images with values far from zero") {
  // E[x^2] - E[x]^2 in float32 would lose most of the variance of 100 + u.
  for (uint32_t channels : {3u, 8u}) {
    CAPTURE(channels);
    Tensor x = randomTensor(2, channels, 64, 64, 900 + channels, 99, 101);
    InstanceNormalization kernel(context(), randomInstanceNorm(channels, channels));
    checkInstanceNorm(kernel, x, ChannelFormat::float32, {64, 64, channels, 2});
  }
  // A tiny spread around a large negative offset, and a constant channel (output beta).
  Tensor x = randomTensor(1, 5, 33, 31, 17, -1000.01, -999.99);
  for (uint32_t y = 0; y < 33; ++y)
    for (uint32_t xx = 0; xx < 31; ++xx) x.at(0, 2, y, xx) = 42;
  x = roundedTo(x, ChannelFormat::float32);
  InstanceNormalization kernel(context(), randomInstanceNorm(5, 9));
  checkInstanceNorm(kernel, x, ChannelFormat::float32, {31, 33, 5, 1});
}

TEST_CASE("instance norm: float16 on small shapes") {
  for (uint32_t channels : {3u, 5u, 13u}) {
    CAPTURE(channels);
    Tensor x =
        roundedTo(randomTensor(2, channels, 5, 4, 60 + channels, -2, 2), ChannelFormat::float16);
    InstanceNormalization kernel(context(), randomInstanceNorm(channels, channels + 1));
    checkInstanceNorm(kernel, x, ChannelFormat::float16, {4, 5, channels, 2});
  }
}

TEST_CASE("instance norm: batch sub-range, clip and offset write a tile of the whole result") {
  for (uint32_t channels : {4u, 13u}) {
    CAPTURE(channels);
    Tensor x = randomTensor(4, channels, 6, 7, 500 + channels, -2, 2);
    InstanceNormalization kernel(context(), randomInstanceNorm(channels, 11));
    kernel.offset = {-1, 2, 1};
    kernel.clipRect = {1, 0, 1, 5, 3, 2};
    checkInstanceNorm(kernel, x, ChannelFormat::float32, {8, 5, channels, 3});
  }
}

TEST_CASE("instance norm: source channel window into unaligned destination channel offsets") {
  for (uint32_t sourceOffset : {0u, 1u, 4u, 6u}) {
    for (uint32_t destinationOffset : {0u, 1u, 3u, 4u, 5u, 10u}) {
      CAPTURE(sourceOffset);
      CAPTURE(destinationOffset);
      Tensor x = randomTensor(2, 13, 3, 5, sourceOffset * 10 + destinationOffset, -2, 2);
      NeuronDescriptor prelu{NeuronType::prelu};
      for (uint32_t c = 0; c < 7; ++c) prelu.preluSlopes.push_back(0.1f * float(c));
      InstanceNormalization kernel(context(), randomInstanceNorm(7, sourceOffset, prelu));
      kernel.sourceFeatureChannelOffset = sourceOffset;
      kernel.sourceFeatureChannelMaxCount = 7;
      kernel.destinationFeatureChannelOffset = destinationOffset;
      checkInstanceNorm(kernel, x, ChannelFormat::float32, {5, 3, 17, 2});
    }
  }
}

TEST_CASE("instance norm: bad parameters are errors") {
  auto make = [](InstanceNormalizationDescriptor d) { return InstanceNormalization(context(), d); };
  InstanceNormalizationDescriptor d = randomInstanceNorm(5, 1);
  d.featureChannels = 0;
  VKCNN_CHECK_ERROR(make(d), ErrorCode::invalidArgument, "featureChannels is 0");
  d = randomInstanceNorm(5, 1);
  d.gamma.pop_back();
  VKCNN_CHECK_ERROR(make(d), ErrorCode::invalidArgument, "4 gamma values for featureChannels 5");
  d = randomInstanceNorm(5, 1);
  d.beta.push_back(0);
  VKCNN_CHECK_ERROR(make(d), ErrorCode::invalidArgument, "6 beta values for featureChannels 5");
  d = randomInstanceNorm(5, 1);
  d.epsilon = -1e-5f;
  VKCNN_CHECK_ERROR(make(d), ErrorCode::invalidArgument, "epsilon");
  d.epsilon = NAN;
  VKCNN_CHECK_ERROR(make(d), ErrorCode::invalidArgument, "epsilon");
  d = randomInstanceNorm(5, 1, NeuronDescriptor{NeuronType::prelu});
  VKCNN_CHECK_ERROR(make(d), ErrorCode::invalidArgument, "PReLU");
  d.neuron.preluSlopes = {0.1f, 0.2f};
  VKCNN_CHECK_ERROR(make(d), ErrorCode::invalidArgument, "2 PReLU slopes for 5 channels");
  d = randomInstanceNorm(5, 1, NeuronDescriptor::of(NeuronType(99)));
  VKCNN_CHECK_ERROR(make(d), ErrorCode::invalidArgument, "neuron type 99");

  // The descriptor's channel count must match the source window at encode time.
  Image source(context(), {4, 4, 8, 2, ChannelFormat::float32});
  Image destination(context(), {4, 4, 8, 2, ChannelFormat::float32});
  CommandBuffer cb(context());
  InstanceNormalization kernel(context(), randomInstanceNorm(5, 1));
  kernel.label = "in1";
  VKCNN_CHECK_ERROR(kernel.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "holds 8 channels but the kernel normalises featureChannels 5");
  kernel.sourceFeatureChannelOffset = 4;
  VKCNN_CHECK_ERROR(kernel.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "holds 4 channels");
  kernel.sourceFeatureChannelOffset = 1;
  kernel.destinationFeatureChannelOffset = 4;
  VKCNN_CHECK_ERROR(kernel.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset 4");
  kernel.destinationFeatureChannelOffset = 0;
  kernel.sourceFeatureChannelMaxCount = 5;
  VKCNN_CHECK_ERROR(kernel.encode(cb, source, source), ErrorCode::invalidArgument, "in-place");
  CHECK(cb.encodingStatistics().dispatches == 0);
}
