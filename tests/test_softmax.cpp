// Softmax and LogSoftmax against a double-precision reference: swept channel counts (up to 1000),
// odd and even sizes, batch sub-ranges, clip and offset, source channel windows into unaligned
// destination channel offsets, large logits, float16, and temporaries.
#include "vkcnn/softmax.h"

#include <cmath>
#include <vector>

#include "reductions_check.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// Softmax (or log-softmax) of the window [first, +count) of source pixel (i, y, x); zero outside.
struct SoftmaxReference {
  const Tensor& x;
  uint32_t first, count;
  bool logarithm;

  double operator()(uint32_t i, uint32_t c, int64_t y, int64_t xx) const {
    double m = -INFINITY;
    // NaN anywhere makes every output NaN, as in PyTorch.
    for (uint32_t k = 0; k < count; ++k) m = nanMax(m, x.atOrZero(i, first + k, y, xx));
    double sum = 0;
    for (uint32_t k = 0; k < count; ++k) sum += std::exp(x.atOrZero(i, first + k, y, xx) - m);
    const double v = x.atOrZero(i, first + c, y, xx) - m;
    return logarithm ? v - std::log(sum) : std::exp(v) / sum;
  }
};

// Runs `kernel` from `x` into a poisoned destination of the given shape and checks it.
void runAndCheck(UnaryKernel& kernel, bool logarithm, const Tensor& unrounded, ChannelFormat format,
                 ImageDescriptor destination) {
  const Tensor x = roundedTo(unrounded, format);
  const uint32_t window =
      std::min(kernel.sourceFeatureChannelMaxCount, x.c - kernel.sourceFeatureChannelOffset);
  Image source = makeImage(x, format, "logits");
  destination.channelFormat = format;
  Image output = makePoisoned(context(), destination);
  runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, output); });
  SoftmaxReference ref{x, kernel.sourceFeatureChannelOffset, window, logarithm};
  checkDestination(
      download(output),
      expectedDestination(kernel, destination.numberOfImages, destination.featureChannels,
                          destination.height, destination.width, window, ref),
      tolerance(format));
}

}  // namespace

TEST_CASE("softmax: channel counts and sizes, float32") {
  struct Shape {
    uint32_t channels, width, height, images;
  };
  const Shape shapes[] = {{1, 3, 2, 1},  {3, 4, 5, 2},   {4, 7, 3, 1},   {5, 2, 2, 3},
                          {8, 5, 5, 1},  {13, 6, 3, 2},  {17, 3, 7, 1},  {32, 4, 4, 1},
                          {64, 3, 2, 2}, {100, 5, 3, 1}, {1000, 2, 3, 1}};
  for (bool logarithm : {false, true}) {
    for (const Shape& s : shapes) {
      CAPTURE(logarithm);
      CAPTURE(s.channels);
      Tensor x =
          randomTensor(s.images, s.channels, s.height, s.width, s.channels + logarithm, -4, 4);
      Softmax softmax(context());
      LogSoftmax logSoftmax(context());
      UnaryKernel& kernel = logarithm ? static_cast<UnaryKernel&>(logSoftmax) : softmax;
      runAndCheck(kernel, logarithm, x, ChannelFormat::float32,
                  {s.width, s.height, s.channels, s.images});
    }
  }
}

TEST_CASE("softmax: float16 on small shapes") {
  for (bool logarithm : {false, true}) {
    for (uint32_t channels : {3u, 5u, 13u}) {
      CAPTURE(logarithm);
      CAPTURE(channels);
      Tensor x =
          roundedTo(randomTensor(2, channels, 3, 4, 50 + channels, -3, 3), ChannelFormat::float16);
      Softmax softmax(context());
      LogSoftmax logSoftmax(context());
      UnaryKernel& kernel = logarithm ? static_cast<UnaryKernel&>(logSoftmax) : softmax;
      runAndCheck(kernel, logarithm, x, ChannelFormat::float16, {4, 3, channels, 2});
    }
  }
}

TEST_CASE("softmax: large logits stay finite and accurate") {
  for (bool logarithm : {false, true}) {
    for (uint32_t channels : {5u, 17u}) {
      CAPTURE(logarithm);
      CAPTURE(channels);
      // exp(80) overflows float16 and exp(80) * 17 is near float32's limit without the max shift.
      Tensor x =
          roundedTo(randomTensor(1, channels, 3, 3, 7 + channels, -80, 80), ChannelFormat::float32);
      for (uint32_t c = 0; c < channels; ++c) {
        x.at(0, c, 0, 0) = 80;   // all equal and large: uniform
        x.at(0, c, 0, 1) = -80;  // all equal and very negative: uniform, not 0/0
        x.at(0, c, 1, 1) = c == channels / 2 ? 80 : -80;  // one-hot
      }
      Softmax softmax(context());
      LogSoftmax logSoftmax(context());
      UnaryKernel& kernel = logarithm ? static_cast<UnaryKernel&>(logSoftmax) : softmax;
      runAndCheck(kernel, logarithm, x, ChannelFormat::float32, {3, 3, channels, 1});
    }
  }
  // The same in float16 storage (arithmetic stays float32).
  Tensor x = roundedTo(randomTensor(1, 6, 2, 3, 99, -80, 80), ChannelFormat::float16);
  Softmax softmax(context());
  runAndCheck(softmax, false, x, ChannelFormat::float16, {3, 2, 6, 1});
}

TEST_CASE("softmax: NaN and infinities propagate as in PyTorch") {
  // A NaN logit makes its pixel's outputs NaN (a NaN maximum: GLSL's max may drop it, so the
  // shader selects it explicitly); +inf gives inf - inf = NaN as in PyTorch; -inf is probability
  // 0 (log: -inf); a pixel of -inf only is 0 / 0.
  const double inf = INFINITY;
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16})
    for (bool logarithm : {false, true}) {
      CAPTURE(std::string(toString(format)));
      CAPTURE(logarithm);
      Tensor x = roundedTo(randomTensor(1, 7, 2, 4, 31, -3, 3), format);
      x.at(0, 2, 0, 0) = NAN;
      x.at(0, 1, 0, 1) = inf;
      x.at(0, 3, 0, 2) = -inf;
      x.at(0, 0, 0, 3) = inf;
      x.at(0, 6, 0, 3) = -inf;
      for (uint32_t c = 0; c < 7; ++c) x.at(0, c, 1, 0) = -inf;
      x.at(0, 4, 1, 1) = -inf;
      x.at(0, 5, 1, 1) = -inf;
      Softmax softmax(context());
      LogSoftmax logSoftmax(context());
      UnaryKernel& kernel = logarithm ? static_cast<UnaryKernel&>(logSoftmax) : softmax;
      Image source = makeImage(x, format, "logits");
      Image output(context(), {4, 2, 7, 1, format});
      fill(output, 1234.f);
      runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, output); });
      const SoftmaxReference ref{x, 0, 7, logarithm};
      Tensor expected(1, 7, 2, 4);
      for (uint32_t c = 0; c < 7; ++c)
        for (uint32_t y = 0; y < 2; ++y)
          for (uint32_t xx = 0; xx < 4; ++xx) expected.at(0, c, y, xx) = ref(0, c, y, xx);
      compareSpecials(download(output), expected, format == ChannelFormat::float32 ? 1e-5 : 2e-3);
    }
}

TEST_CASE("softmax: batch sub-range, clip rectangle and offset") {
  for (uint32_t channels : {3u, 8u, 13u}) {
    CAPTURE(channels);
    // Source images 1 and 2 of 4 go to destination images 1 and 2 of 3; the clip covers part of
    // each image and the offset moves some reads outside the source (zeros: uniform output).
    Tensor x = randomTensor(4, channels, 5, 6, 300 + channels, -2, 2);
    LogSoftmax kernel(context());
    kernel.offset = {-1, 2, 1};
    kernel.clipRect = {1, 0, 1, 4, 3, 2};
    runAndCheck(kernel, true, x, ChannelFormat::float32, {7, 4, channels, 3});
    Softmax softmax(context());
    softmax.offset = {1, 0, 2};
    softmax.clipRect = {0, 1, 0, 5, 2, 1};
    runAndCheck(softmax, false, x, ChannelFormat::float32, {6, 5, channels, 2});
  }
}

TEST_CASE("softmax: source channel window into unaligned destination channel offsets") {
  for (uint32_t sourceOffset : {0u, 1u, 4u, 6u}) {
    for (uint32_t destinationOffset : {0u, 1u, 3u, 4u, 5u, 10u}) {
      for (uint32_t count : {1u, 5u, 7u}) {
        CAPTURE(sourceOffset);
        CAPTURE(destinationOffset);
        CAPTURE(count);
        Tensor x =
            randomTensor(2, 13, 3, 2, sourceOffset * 100 + destinationOffset * 10 + count, -3, 3);
        Softmax kernel(context());
        kernel.sourceFeatureChannelOffset = sourceOffset;
        kernel.sourceFeatureChannelMaxCount = count;
        kernel.destinationFeatureChannelOffset = destinationOffset;
        runAndCheck(kernel, false, x, ChannelFormat::float32, {2, 3, 17, 2});
      }
    }
  }
  // A window reaching the end of the source (MaxCount larger than what is left).
  Tensor x = randomTensor(1, 9, 2, 2, 77, -3, 3);
  LogSoftmax kernel(context());
  kernel.sourceFeatureChannelOffset = 3;
  kernel.destinationFeatureChannelOffset = 2;
  runAndCheck(kernel, true, x, ChannelFormat::float32, {2, 2, 9, 1});
}

TEST_CASE("softmax: through a temporary image") {
  Tensor x = roundedTo(randomTensor(2, 11, 3, 5, 1234, -3, 3), ChannelFormat::float32);
  Image source = makeImage(x, ChannelFormat::float32);
  Image output = makePoisoned(context(), {5, 3, 11, 2, ChannelFormat::float32});
  Softmax softmax(context());
  Neuron copy(context(), NeuronDescriptor::of(NeuronType::none));
  runOnce([&](CommandBuffer& cb) {
    TemporaryImage probabilities = softmax.encode(cb, source);
    CHECK(probabilities.featureChannels() == 11);
    copy.encode(cb, probabilities, output);
  });
  SoftmaxReference ref{x, 0, 11, false};
  checkDestination(download(output), expectedDestination(softmax, 2, 11, 3, 5, 11, ref),
                   tolerance(ChannelFormat::float32));
}

TEST_CASE("softmax: bad geometry is an error before anything is encoded") {
  Image source(context(), {4, 4, 8, 2, ChannelFormat::float32});
  Image destination(context(), {4, 4, 8, 2, ChannelFormat::float32});
  CommandBuffer cb(context());
  Softmax softmax(context());
  softmax.destinationFeatureChannelOffset = 1;
  VKCNN_CHECK_ERROR(softmax.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset");
  softmax.destinationFeatureChannelOffset = 0;
  softmax.sourceFeatureChannelOffset = 8;
  VKCNN_CHECK_ERROR(softmax.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "sourceFeatureChannelOffset");
  softmax.sourceFeatureChannelOffset = 0;
  softmax.offset.z = 1;
  VKCNN_CHECK_ERROR(softmax.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "offset.z");
  softmax.offset.z = 0;
  LogSoftmax logSoftmax(context());
  VKCNN_CHECK_ERROR(logSoftmax.encode(cb, source, source), ErrorCode::invalidArgument, "in-place");
  CHECK(cb.encodingStatistics().dispatches == 0);
}
