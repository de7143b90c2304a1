// Neuron kernel against the double-precision reference: every type, swept channel counts, both
// float formats, batch sub-ranges, channel windows and unaligned destination channel offsets;
// NaN and infinities as PyTorch's kernels give them.
#include <cmath>
#include <limits>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

Tensor reference(const Tensor& x, const NeuronDescriptor& n) {
  Tensor y = x;
  for (uint32_t i = 0; i < x.n; ++i)
    for (uint32_t c = 0; c < x.c; ++c)
      for (uint32_t yy = 0; yy < x.h; ++yy)
        for (uint32_t xx = 0; xx < x.w; ++xx)
          y.at(i, c, yy, xx) = applyNeuron(n, x.at(i, c, yy, xx), c);
  return y;
}

}  // namespace

TEST_CASE("neuron: every type matches the reference") {
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    for (uint32_t t = 0; t < kNeuronTypeCount; ++t) {
      const auto type = NeuronType(t);
      const uint32_t channels = format == ChannelFormat::float32 ? 13 : 5;
      CAPTURE(toString(type));
      CAPTURE(toString(format));
      Tensor x = roundedTo(randomTensor(1, channels, 5, 7, 100 + t, -3, 3), format);
      NeuronDescriptor n = sampleNeuron(type, channels);
      Image source = makeImage(x, format, "x");
      Image destination = makePoisoned(context(), {7, 5, channels, 1, format});
      Neuron kernel(context(), n);
      runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
      Tensor y = download(destination);
      CHECK_FALSE(hasNaN(y));
      CHECK(relativeL2(y, reference(x, n)) <= tolerance(format));
    }
  }
}

TEST_CASE("neuron: channel counts, batch sub-ranges and the MPS batch example") {
  // Source batch 5, destination batch 4: source images 2 and 3 go to destination images 1 and 2.
  for (uint32_t channels : {1u, 3u, 4u, 5u, 8u, 16u, 17u}) {
    CAPTURE(channels);
    Tensor x = randomTensor(5, channels, 3, 4, channels);
    Image source = makeImage(x, ChannelFormat::float32);
    Image destination = makePoisoned(context(), {4, 3, channels, 4, ChannelFormat::float32});
    Neuron relu(context(), NeuronDescriptor::relu());
    relu.offset.z = 2;
    relu.clipRect.z = 1;
    relu.clipRect.depth = 2;
    runOnce([&](CommandBuffer& cb) { relu.encode(cb, source, destination); });
    Tensor y = download(destination);
    for (uint32_t i = 0; i < 4; ++i)
      for (uint32_t c = 0; c < channels; ++c)
        for (uint32_t yy = 0; yy < 3; ++yy)
          for (uint32_t xx = 0; xx < 4; ++xx) {
            double v = y.at(i, c, yy, xx);
            if (i == 1 || i == 2) {
              CHECK(v == doctest::Approx(std::max(0.0, double(float(x.at(i + 1, c, yy, xx))))));
            } else {
              CHECK(std::isnan(v));  // outside the clip: untouched
            }
          }
  }
}

TEST_CASE("neuron: clip rectangle and offset in x and y leave the rest untouched") {
  Tensor x = randomTensor(1, 6, 8, 9, 7);
  Image source = makeImage(x, ChannelFormat::float32);
  Image destination = makePoisoned(context(), {9, 8, 6, 1, ChannelFormat::float32});
  Neuron copy(context(), NeuronDescriptor::of(NeuronType::none));
  copy.clipRect = {2, 3, 0, 4, 2, kWholeExtent};
  copy.offset = {-1, 2, 0};
  runOnce([&](CommandBuffer& cb) { copy.encode(cb, source, destination); });
  Tensor y = download(destination);
  for (uint32_t c = 0; c < 6; ++c)
    for (uint32_t yy = 0; yy < 8; ++yy)
      for (uint32_t xx = 0; xx < 9; ++xx) {
        const bool inside = xx >= 2 && xx < 6 && yy >= 3 && yy < 5;
        if (!inside) {
          CHECK(std::isnan(y.at(0, c, yy, xx)));
          continue;
        }
        const int64_t sx = int64_t(xx) - 2 - 1, sy = int64_t(yy) - 3 + 2;
        CHECK(y.at(0, c, yy, xx) == doctest::Approx(float(x.atOrZero(0, c, sy, sx))));
      }
}

TEST_CASE("neuron: source channel window into any destination channel offset (concatenation)") {
  for (uint32_t sourceOffset : {0u, 1u, 4u, 6u}) {
    for (uint32_t destinationOffset : {0u, 1u, 3u, 4u, 5u, 8u}) {
      CAPTURE(sourceOffset);
      CAPTURE(destinationOffset);
      const uint32_t count = 7;
      Tensor x = randomTensor(2, 13, 3, 3, sourceOffset * 10 + destinationOffset);
      Image source = makeImage(x, ChannelFormat::float32);
      const uint32_t dstChannels = 17;
      Image destination = makePoisoned(context(), {3, 3, dstChannels, 2, ChannelFormat::float32});
      Neuron copy(context(), NeuronDescriptor::of(NeuronType::none));
      copy.sourceFeatureChannelOffset = sourceOffset;
      copy.sourceFeatureChannelMaxCount = count;
      copy.destinationFeatureChannelOffset = destinationOffset;
      runOnce([&](CommandBuffer& cb) { copy.encode(cb, source, destination); });
      Tensor y = download(destination);
      bool ok = true;
      for (uint32_t i = 0; i < 2; ++i)
        for (uint32_t c = 0; c < dstChannels; ++c)
          for (uint32_t p = 0; p < 9; ++p) {
            const double v = y.at(i, c, p / 3, p % 3);
            if (c >= destinationOffset && c < destinationOffset + count) {
              ok &= v == double(float(x.at(i, c - destinationOffset + sourceOffset, p / 3, p % 3)));
            } else {
              ok &= std::isnan(v);  // neighbouring channels keep their contents
            }
          }
      CHECK(ok);
    }
  }
}

TEST_CASE("neuron: bad geometry is an error before anything is encoded") {
  Image source(context(), {4, 4, 8, 2, ChannelFormat::float32});
  Image destination(context(), {4, 4, 8, 2, ChannelFormat::float32});
  CommandBuffer cb(context());
  Neuron relu(context(), NeuronDescriptor::relu());
  relu.clipRect = {5, 0, 0};
  VKCNN_CHECK_ERROR(relu.encode(cb, source, destination), ErrorCode::invalidArgument, "clipRect");
  relu.clipRect = {0, 0, 0, 5, 4, 1};
  VKCNN_CHECK_ERROR(relu.encode(cb, source, destination), ErrorCode::invalidArgument, "clipRect");
  relu.clipRect = ClipRect{};
  relu.offset.z = 1;
  VKCNN_CHECK_ERROR(relu.encode(cb, source, destination), ErrorCode::invalidArgument, "offset.z");
  relu.offset.z = 0;
  relu.destinationFeatureChannelOffset = 4;
  VKCNN_CHECK_ERROR(relu.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset");
  relu.destinationFeatureChannelOffset = 0;
  relu.sourceFeatureChannelOffset = 8;
  VKCNN_CHECK_ERROR(relu.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "sourceFeatureChannelOffset");
  relu.sourceFeatureChannelOffset = 0;
  NeuronDescriptor prelu{NeuronType::prelu};
  VKCNN_CHECK_ERROR(Neuron(context(), prelu), ErrorCode::invalidArgument, "PReLU");
  VKCNN_CHECK_ERROR(relu.encode(cb, source, source), ErrorCode::invalidArgument, "in-place");
  CHECK(cb.encodingStatistics().dispatches == 0);
}

TEST_CASE("neuron: kernels store float16 rounded to nearest even, saturated, as the host does") {
  // Vulkan allows image stores to convert to float16 by truncation (lavapipe does); vkcnn rounds
  // in the shader so kernels and writeBytes agree, and the error does not drift through a network.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> in = {
      1.0f + 3.0f / 4096, -(1.0f + 3.0f / 4096), 70000.f, -1e6f, inf, 65519.f, 1.0f + 1.0f / 4096,
      2.0f / 3.0f};
  Image source(context(), {uint32_t(in.size()), 1, 1, 1, ChannelFormat::float32});
  source.writeFloats(in, DataLayout::HeightxWidthxFeatureChannels);
  Image destination(context(), {uint32_t(in.size()), 1, 1, 1, ChannelFormat::float16});
  Neuron copy(context(), NeuronDescriptor{});
  runOnce([&](CommandBuffer& cb) { copy.encode(cb, source, destination); });
  std::vector<float> out = destination.readFloats(DataLayout::HeightxWidthxFeatureChannels);
  std::vector<float> expected = {
      1.0f + 1.0f / 1024,           -(1.0f + 1.0f / 1024), 65504.f, -65504.f, inf, 65504.f, 1.0f,
      float(roundToHalf(2.0 / 3.0))};
  for (size_t i = 0; i < in.size(); ++i) {
    CAPTURE(i);
    CHECK(out[i] == expected[i]);
  }
  // And what writeBytes stores for the same values.
  Image viaHost(context(), {uint32_t(in.size()), 1, 1, 1, ChannelFormat::float16});
  viaHost.writeFloats(in, DataLayout::HeightxWidthxFeatureChannels);
  CHECK(viaHost.readFloats(DataLayout::HeightxWidthxFeatureChannels) == out);
}

TEST_CASE("neuron: NaN and infinities propagate as PyTorch's kernels propagate them") {
  // GLSL's max/min/clamp may return the non-NaN operand (NVIDIA's do), so relu(NaN) was 0;
  // glsl/neuron.glsl selects the NaN explicitly. Lavapipe may propagate NaN without that, so
  // this test passing there is not proof on its own: the shader is correct by construction.
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    for (uint32_t t = 0; t < kNeuronTypeCount; ++t) {
      const auto type = NeuronType(t);
      CAPTURE(std::string(toString(type)));
      CAPTURE(std::string(toString(format)));
      Tensor x = roundedTo(randomTensor(1, 7, 3, 5, 200 + t, -3, 3), format);
      sprinkleSpecials(x.data, 4, t % 4);
      // GLSL's pow and log are undefined for negative arguments: -inf is left out of both.
      if (type == NeuronType::power || type == NeuronType::logarithm)
        for (double& v : x.data)
          if (v == -std::numeric_limits<double>::infinity()) v = 0;
      NeuronDescriptor n = sampleNeuron(type, 7);
      const Tensor expected = reference(x, n);
      Image source = makeImage(x, format, "x");
      Image destination(context(), {5, 3, 7, 1, format});
      fill(destination, 1234.f);  // finite: an unwritten element must fail
      Neuron kernel(context(), n);
      runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
      compareSpecials(download(destination), roundedTo(expected, format),
                      format == ChannelFormat::float32 ? 1e-4 : 1e-2);
    }
  }
}
