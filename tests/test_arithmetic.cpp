// Element-wise arithmetic against a double-precision reference: every operation, every way the
// secondary broadcasts, fused neurons, scales and bias, constants given at init, batch
// sub-ranges, clip rectangles, channel windows and unaligned destination channel offsets, all into
// poisoned destinations; and the errors for shapes that do not broadcast.
#include <vkcnn/arithmetic.h>

#include <cmath>
#include <limits>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr ArithmeticOperation kOperations[] = {
    ArithmeticOperation::add, ArithmeticOperation::subtract, ArithmeticOperation::multiply,
    ArithmeticOperation::divide};

// Written out here rather than taken from the library, so the test checks applyArithmetic too.
double op(ArithmeticOperation operation, double a, double b) {
  switch (operation) {
    case ArithmeticOperation::add:
      return a + b;
    case ArithmeticOperation::subtract:
      return a - b;
    case ArithmeticOperation::multiply:
      return a * b;
    case ArithmeticOperation::divide:
      return a / b;
  }
  return kNaN;
}

// Random values whose magnitude is in [0.5, 1.5) with random signs: safe divisors.
Tensor divisors(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t seed) {
  Tensor t = randomTensor(n, c, h, w, seed, 0.5, 1.5);
  Tensor sign = randomTensor(n, c, h, w, seed + 7777);
  for (size_t k = 0; k < t.data.size(); ++k)
    if (sign.data[k] < 0) t.data[k] = -t.data[k];
  return t;
}

struct Scaling {
  double primaryScale = 1, secondaryScale = 1, bias = 0;
};

// The destination the kernel should leave: its result inside the clip and the destination
// channel window, NaN (untouched poison) everywhere else. Reads the geometry off the kernel.
Tensor reference(const Kernel& k, const Offset& secondaryOffset, uint32_t secondaryChannelOffset,
                 ArithmeticOperation operation, const Scaling& s, const NeuronDescriptor& neuron,
                 const Tensor& a, const Tensor& b, const ImageDescriptor& destination) {
  Tensor y(destination.numberOfImages, destination.featureChannels, destination.height,
           destination.width, kNaN);
  const ClipRect& clip = k.clipRect;
  const uint32_t cw = clip.width == kWholeExtent ? y.w - clip.x : clip.width;
  const uint32_t chh = clip.height == kWholeExtent ? y.h - clip.y : clip.height;
  const uint32_t n = clip.depth == kWholeExtent ? y.n - clip.z : clip.depth;
  const uint32_t channels =
      std::min(k.sourceFeatureChannelMaxCount, a.c - k.sourceFeatureChannelOffset);
  const uint32_t bChannels = std::min(k.sourceFeatureChannelMaxCount, b.c - secondaryChannelOffset);
  const bool bx = b.w == 1 && a.w > 1, by = b.h == 1 && a.h > 1;
  const bool bc = bChannels == 1 && channels > 1, bn = b.n == 1;
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t c = 0; c < channels; ++c)
      for (uint32_t yy = 0; yy < chh; ++yy)
        for (uint32_t xx = 0; xx < cw; ++xx) {
          const double av = a.atOrZero(k.offset.z + i, k.sourceFeatureChannelOffset + c,
                                       int64_t(yy) + k.offset.y, int64_t(xx) + k.offset.x);
          const double bv = b.atOrZero(
              bn ? 0 : secondaryOffset.z + i, secondaryChannelOffset + (bc ? 0 : c),
              by ? 0 : int64_t(yy) + secondaryOffset.y, bx ? 0 : int64_t(xx) + secondaryOffset.x);
          const double r = op(operation, s.primaryScale * av, s.secondaryScale * bv) + s.bias;
          y.at(clip.z + i, k.destinationFeatureChannelOffset + c, clip.y + yy, clip.x + xx) =
              applyNeuron(neuron, r, c);
        }
  return y;
}

// NaN in `expected` marks poison that must survive; everything else is compared by relative L2.
void checkResult(const Tensor& actual, const Tensor& expected, ChannelFormat format) {
  REQUIRE(actual.data.size() == expected.data.size());
  Tensor a = actual, e = expected;
  size_t poisonLost = 0;
  for (size_t k = 0; k < e.data.size(); ++k)
    if (std::isnan(e.data[k])) {
      poisonLost += !std::isnan(a.data[k]);
      a.data[k] = e.data[k] = 0;
    }
  CHECK_MESSAGE(poisonLost == 0, poisonLost << " elements outside the output were written");
  CHECK_FALSE(hasNaN(a));
  const double error = relativeL2(a, e);
  CHECK_MESSAGE(error <= tolerance(format), "relative L2 " << error);
}

NeuronDescriptor prelu(uint32_t channels) {
  NeuronDescriptor n{NeuronType::prelu};
  for (uint32_t c = 0; c < channels; ++c) n.preluSlopes.push_back(0.1f + 0.03f * float(c));
  return n;
}

enum class Broadcast { sameShape, perChannel, scalar, spatialMap, rowVector, batch };

const char* name(Broadcast b) {
  switch (b) {
    case Broadcast::sameShape:
      return "same shape";
    case Broadcast::perChannel:
      return "per channel";
    case Broadcast::scalar:
      return "scalar";
    case Broadcast::spatialMap:
      return "spatial map";
    case Broadcast::rowVector:
      return "row vector";
    case Broadcast::batch:
      return "one image for the batch";
  }
  return "";
}

// One run: primary n x c x h x w, the secondary shaped by `broadcast`.
void runCase(ArithmeticOperation operation, Broadcast broadcast, const NeuronDescriptor& neuron,
             uint32_t n, uint32_t c, uint32_t h, uint32_t w, ChannelFormat format, uint32_t seed,
             const Scaling& scaling = {}) {
  CAPTURE(toString(operation));
  CAPTURE(name(broadcast));
  CAPTURE(toString(neuron.type));
  CAPTURE(c);
  CAPTURE(h);
  CAPTURE(w);
  CAPTURE(toString(format));
  uint32_t bn = n, bc = c, bh = h, bw = w;
  switch (broadcast) {
    case Broadcast::sameShape:
      break;
    case Broadcast::perChannel:
      bh = bw = 1;
      break;
    case Broadcast::scalar:
      bc = bh = bw = 1;
      break;
    case Broadcast::spatialMap:
      bc = 1;
      break;
    case Broadcast::rowVector:
      bh = 1;
      break;
    case Broadcast::batch:
      bn = 1;
      break;
  }
  Tensor a = roundedTo(randomTensor(n, c, h, w, seed, -2, 2), format);
  Tensor b = roundedTo(operation == ArithmeticOperation::divide
                           ? divisors(bn, bc, bh, bw, seed + 1)
                           : randomTensor(bn, bc, bh, bw, seed + 1, -2, 2),
                       format);
  Image primary = makeImage(a, format, "a");
  Image secondary = makeImage(b, format, "b");
  const ImageDescriptor dd{w, h, c, n, format};
  Image destination = makePoisoned(context(), dd);
  Arithmetic kernel(context(), operation, neuron);
  kernel.primaryScale = float(scaling.primaryScale);
  kernel.secondaryScale = float(scaling.secondaryScale);
  kernel.bias = float(scaling.bias);
  runOnce([&](CommandBuffer& cb) { kernel.encode(cb, primary, secondary, destination); });
  checkResult(download(destination), reference(kernel, {}, 0, operation, scaling, neuron, a, b, dd),
              format);
}

}  // namespace

TEST_CASE("arithmetic: reference helpers agree with the library") {
  for (ArithmeticOperation o : kOperations)
    CHECK(applyArithmetic(o, 1.5, -0.75) == op(o, 1.5, -0.75));
  CHECK(std::string(toString(ArithmeticOperation::divide)) == "divide");
  CHECK(int(Add(context()).operation()) == int(ArithmeticOperation::add));
  CHECK(int(Subtract(context()).operation()) == int(ArithmeticOperation::subtract));
  CHECK(int(Multiply(context()).operation()) == int(ArithmeticOperation::multiply));
  CHECK(int(Divide(context()).operation()) == int(ArithmeticOperation::divide));
}

TEST_CASE("arithmetic: every operation x broadcast x fused neuron, float32") {
  const NeuronDescriptor neurons[] = {NeuronDescriptor{}, NeuronDescriptor::relu(),
                                      NeuronDescriptor::of(NeuronType::sigmoid),
                                      NeuronDescriptor::of(NeuronType::leakyRelu, 0.2f)};
  const uint32_t channelCounts[] = {1, 3, 4, 5, 13, 17, 32};
  const uint32_t sizes[][2] = {{5, 7}, {4, 6}, {3, 3}, {8, 5}, {1, 6}};
  const Broadcast broadcasts[] = {Broadcast::sameShape,  Broadcast::perChannel, Broadcast::scalar,
                                  Broadcast::spatialMap, Broadcast::rowVector,  Broadcast::batch};
  uint32_t k = 0;
  for (ArithmeticOperation operation : kOperations)
    for (Broadcast broadcast : broadcasts)
      for (const NeuronDescriptor& neuron : neurons) {
        const uint32_t c = channelCounts[k % 7];
        const auto& s = sizes[k % 5];
        const uint32_t n = broadcast == Broadcast::batch ? 3 : 1 + k % 2;
        runCase(operation, broadcast, neuron, n, c, s[0], s[1], ChannelFormat::float32, 1000 + k);
        ++k;
      }
}

TEST_CASE("arithmetic: every channel count with per-channel PReLU") {
  for (uint32_t c : {1u, 3u, 4u, 5u, 13u, 17u, 32u})
    for (Broadcast broadcast : {Broadcast::sameShape, Broadcast::perChannel})
      runCase(ArithmeticOperation::add, broadcast, prelu(c), 2, c, 3, 4, ChannelFormat::float32,
              c * 3 + uint32_t(broadcast));
}

TEST_CASE("arithmetic: primaryScale, secondaryScale and bias") {
  const Scaling scaling{0.5, -1.75, 0.25};
  uint32_t k = 0;
  for (ArithmeticOperation operation : kOperations)
    for (Broadcast broadcast : {Broadcast::sameShape, Broadcast::perChannel, Broadcast::scalar}) {
      runCase(operation, broadcast, NeuronDescriptor::of(NeuronType::clamp, -1.5f, 1.5f), 1,
              k % 2 ? 5 : 13, 4, 5, ChannelFormat::float32, 2000 + k, scaling);
      ++k;
    }
}

TEST_CASE("arithmetic: float16 on small shapes") {
  uint32_t k = 0;
  for (ArithmeticOperation operation : kOperations)
    for (Broadcast broadcast : {Broadcast::sameShape, Broadcast::perChannel, Broadcast::scalar}) {
      runCase(operation, broadcast, k % 2 ? NeuronDescriptor::relu() : NeuronDescriptor{}, 1,
              k % 3 == 0 ? 5 : 3, 3, 4, ChannelFormat::float16, 3000 + k, {1, 0.5, -0.25});
      ++k;
    }
}

TEST_CASE("arithmetic: batch sub-ranges, clip, offsets and channel windows") {
  // Primary batch 4, secondary batch 5, destination batch 3: primary images 1..2 and secondary
  // images 2..3 go to destination images 1..2; the rest of the destination stays poisoned.
  const ChannelFormat f = ChannelFormat::float32;
  for (ArithmeticOperation operation :
       {ArithmeticOperation::add, ArithmeticOperation::subtract, ArithmeticOperation::multiply}) {
    for (uint32_t destinationOffset : {0u, 1u, 3u, 4u, 6u}) {
      CAPTURE(toString(operation));
      CAPTURE(destinationOffset);
      const uint32_t seed = 4000 + destinationOffset * 7 + uint32_t(operation);
      Tensor a = randomTensor(4, 9, 6, 7, seed);
      Tensor b = randomTensor(5, 11, 6, 7, seed + 1);
      Image primary = makeImage(a, f, "a");
      Image secondary = makeImage(b, f, "b");
      const ImageDescriptor dd{8, 5, 13, 3, f};
      Image destination = makePoisoned(context(), dd);
      Arithmetic kernel(context(), operation, NeuronDescriptor::of(NeuronType::tanh, 1.2f, 0.8f));
      kernel.offset = {1, -1, 1};
      kernel.secondaryOffset = {-1, 2, 2};
      kernel.clipRect = {2, 1, 1, 5, 3, 2};
      kernel.sourceFeatureChannelOffset = 2;
      kernel.sourceFeatureChannelMaxCount = 5;
      kernel.secondaryFeatureChannelOffset = 5;
      kernel.destinationFeatureChannelOffset = destinationOffset;
      kernel.bias = 0.125f;
      runOnce([&](CommandBuffer& cb) { kernel.encode(cb, primary, secondary, destination); });
      checkResult(download(destination),
                  reference(kernel, kernel.secondaryOffset, 5, operation, {1, 1, 0.125},
                            kernel.neuron(), a, b, dd),
                  f);
    }
  }
}

TEST_CASE("arithmetic: broadcast secondary with a batch sub-range and an unaligned destination") {
  const ChannelFormat f = ChannelFormat::float32;
  for (Broadcast broadcast : {Broadcast::perChannel, Broadcast::scalar, Broadcast::batch}) {
    CAPTURE(name(broadcast));
    Tensor a = randomTensor(3, 5, 4, 5, 77);
    Tensor b = broadcast == Broadcast::perChannel ? divisors(1, 5, 1, 1, 78)
               : broadcast == Broadcast::scalar   ? divisors(1, 1, 1, 1, 79)
                                                  : divisors(1, 5, 4, 5, 80);
    Image primary = makeImage(a, f, "a");
    Image secondary = makeImage(b, f, "b");
    const ImageDescriptor dd{5, 4, 11, 3, f};
    Image destination = makePoisoned(context(), dd);
    Divide kernel(context(), NeuronDescriptor::relu());
    kernel.offset.z = 1;
    kernel.clipRect.z = 0;
    kernel.clipRect.depth = 2;
    kernel.destinationFeatureChannelOffset = 3;
    runOnce([&](CommandBuffer& cb) { kernel.encode(cb, primary, secondary, destination); });
    checkResult(
        download(destination),
        reference(kernel, {}, 0, ArithmeticOperation::divide, {}, kernel.neuron(), a, b, dd), f);
  }
}

TEST_CASE("arithmetic: the same image as both operands, and temporaries") {
  const ChannelFormat f = ChannelFormat::float32;
  Tensor a = randomTensor(2, 6, 3, 5, 91);
  Image primary = makeImage(a, f, "a");
  Image destination = makePoisoned(context(), {5, 3, 6, 2, f});
  Multiply square(context());
  Add twice(context());
  runOnce([&](CommandBuffer& cb) {
    TemporaryImage t = square.encode(cb, primary, primary);  // a*a
    CHECK(t.readCount() == 1);
    t.setReadCount(1);
    twice.encode(cb, t, t, destination);  // 2*a*a, one read of t
    CHECK(t.readCount() == 0);
  });
  Tensor expected = a;
  for (double& v : expected.data) v = 2 * v * v;
  checkResult(download(destination), expected, f);
}

TEST_CASE("arithmetic: constants given at init") {
  uint32_t k = 0;
  for (ChannelFormat f : {ChannelFormat::float32, ChannelFormat::float16})
    for (ArithmeticOperation operation : kOperations)
      for (bool perChannel : {false, true}) {
        const uint32_t c = f == ChannelFormat::float16 ? 5 : (k % 2 ? 13 : 17);
        CAPTURE(toString(operation));
        CAPTURE(perChannel);
        CAPTURE(toString(f));
        Tensor a = roundedTo(randomTensor(2, c, 3, 5, 5000 + k), f);
        Tensor b = divisors(1, perChannel ? c : 1, 1, 1, 5100 + k);
        std::vector<float> constants;
        for (double v : b.data) constants.push_back(float(v));
        b = roundedTo(b, ChannelFormat::float32);
        Image primary = makeImage(a, f, "a");
        const ImageDescriptor dd{5, 3, c + 2, 2, f};
        Image destination = makePoisoned(context(), dd);
        ArithmeticWithConstant kernel(context(), operation, constants,
                                      NeuronDescriptor::of(NeuronType::elu, 0.7f));
        kernel.primaryScale = 2;
        kernel.secondaryScale = 0.5f;
        kernel.bias = -0.5f;
        kernel.destinationFeatureChannelOffset = 1;
        runOnce([&](CommandBuffer& cb) { kernel.encode(cb, primary, destination); });
        checkResult(download(destination),
                    reference(kernel, {}, 0, operation, {2, 0.5, -0.5}, kernel.neuron(), a, b, dd),
                    f);
        ++k;
      }
}

TEST_CASE("arithmetic: shapes that do not broadcast are errors naming both shapes") {
  const ChannelFormat f = ChannelFormat::float32;
  Image a(context(), {5, 4, 5, 2, f, ImageUsage::all, "a"});
  Image destination(context(), {5, 4, 5, 2, f, ImageUsage::all, "y"});
  CommandBuffer cb(context());
  Add add(context());
  Image channels3(context(), {5, 4, 3, 2, f, ImageUsage::all, "b3"});
  VKCNN_CHECK_ERROR(add.encode(cb, a, channels3, destination), ErrorCode::invalidArgument,
                    "'a' (5x4x5, 2 images) and secondary 'b3' (5x4x3, 2 images) do not broadcast");
  Image width4(context(), {4, 4, 5, 2, f, ImageUsage::all, "b4"});
  VKCNN_CHECK_ERROR(add.encode(cb, a, width4, destination), ErrorCode::invalidArgument,
                    "do not broadcast");
  Image height2(context(), {1, 2, 1, 1, f, ImageUsage::all, "h2"});
  VKCNN_CHECK_ERROR(add.encode(cb, a, height2, destination), ErrorCode::invalidArgument, "'h2'");
  Image twoImages(context(), {5, 4, 5, 2, f, ImageUsage::all, "b2"});
  add.clipRect.depth = 2;
  add.secondaryOffset.z = 1;
  VKCNN_CHECK_ERROR(add.encode(cb, a, twoImages, destination), ErrorCode::invalidArgument,
                    "secondary images [1, 3)");
  add.secondaryOffset.z = 0;
  Image oneImage(context(), {5, 4, 5, 1, f, ImageUsage::all, "b1"});
  add.secondaryOffset.z = 1;  // a one-image secondary broadcasts only from its image 0
  VKCNN_CHECK_ERROR(add.encode(cb, a, oneImage, destination), ErrorCode::invalidArgument,
                    "secondary images");
  add.secondaryOffset.z = 0;
  Add prelu3(context(), prelu(3));
  Image b(context(), {5, 4, 5, 2, f});
  VKCNN_CHECK_ERROR(prelu3.encode(cb, a, b, destination), ErrorCode::invalidArgument,
                    "3 PReLU slopes for 5 channels");
  VKCNN_CHECK_ERROR(add.encode(cb, a, b, a), ErrorCode::invalidArgument, "in-place");
  ArithmeticWithConstant threeConstants(context(), ArithmeticOperation::multiply, {1, 2, 3});
  VKCNN_CHECK_ERROR(threeConstants.encode(cb, a, destination), ErrorCode::invalidArgument,
                    "3 constants for a window of 5 channels");
  VKCNN_CHECK_ERROR(ArithmeticWithConstant(context(), ArithmeticOperation::add, {}),
                    ErrorCode::invalidArgument, "none were given");
  VKCNN_CHECK_ERROR(Arithmetic(context(), ArithmeticOperation(7)), ErrorCode::invalidArgument,
                    "operation 7");
  CHECK(cb.encodingStatistics().dispatches == 0);
}

TEST_CASE("arithmetic: NaN and infinities propagate as in PyTorch, through fused neurons") {
  // IEEE arithmetic (inf - inf, 0 * inf and 0 / 0 are NaN), then the neuron, whose max/min/clamp
  // keep the NaN (glsl/neuron.glsl; GLSL's own may return the other operand).
  const NeuronDescriptor neurons[] = {NeuronDescriptor{}, NeuronDescriptor::relu(),
                                      NeuronDescriptor::relu6(),
                                      NeuronDescriptor::of(NeuronType::sigmoid), prelu(6)};
  uint32_t seed = 4000;
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16})
    for (ArithmeticOperation operation : kOperations)
      for (const NeuronDescriptor& neuron : neurons) {
        CAPTURE(std::string(toString(format)));
        CAPTURE(std::string(toString(operation)));
        CAPTURE(std::string(toString(neuron.type)));
        Tensor a = roundedTo(randomTensor(1, 6, 3, 4, seed, -2, 2), format);
        Tensor b = roundedTo(divisors(1, 6, 3, 4, seed + 1), format);
        ++seed;
        sprinkleSpecials(a.data, 5, 0);
        sprinkleSpecials(b.data, 7, 1);
        b.data[20] = 0;  // x / 0
        Image primary = makeImage(a, format, "a");
        Image secondary = makeImage(b, format, "b");
        const ImageDescriptor dd{4, 3, 6, 1, format};
        Image destination(context(), dd);
        fill(destination, 1234.f);
        Arithmetic kernel(context(), operation, neuron);
        runOnce([&](CommandBuffer& cb) { kernel.encode(cb, primary, secondary, destination); });
        compareSpecials(
            download(destination),
            roundedTo(reference(kernel, {}, 0, operation, {}, neuron, a, b, dd), format),
            format == ChannelFormat::float32 ? 1e-5 : 2e-3);
      }
}
