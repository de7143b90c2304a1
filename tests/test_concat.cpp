// Concatenation along channels: 3 and 4 sources with odd channel counts at aligned and unaligned
// destination offsets into poisoned destinations, every channel checked; barriers between sources
// that share a destination layer (synchronization validation would flag a missing one); temporary
// sources and destinations; and the errors.
#include <vkcnn/concat.h>

#include <cmath>
#include <limits>
#include <vector>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The destination after concatenating `sources` at `offset`: NaN (untouched poison) elsewhere.
Tensor reference(const std::vector<Tensor>& sources, uint32_t offset, uint32_t channels) {
  const Tensor& first = sources.front();
  Tensor y(first.n, channels, first.h, first.w, kNaN);
  uint32_t at = offset;
  for (const Tensor& s : sources) {
    for (uint32_t i = 0; i < s.n; ++i)
      for (uint32_t c = 0; c < s.c; ++c)
        for (uint32_t yy = 0; yy < s.h; ++yy)
          for (uint32_t xx = 0; xx < s.w; ++xx) y.at(i, at + c, yy, xx) = s.at(i, c, yy, xx);
    at += s.c;
  }
  return y;
}

// Exact comparison (a copy must not change a bit), NaN where poison must survive.
void checkExact(const Tensor& actual, const Tensor& expected) {
  REQUIRE(actual.data.size() == expected.data.size());
  size_t wrong = 0;
  for (size_t k = 0; k < expected.data.size(); ++k) {
    const double e = expected.data[k], a = actual.data[k];
    wrong += std::isnan(e) ? !std::isnan(a) : !(a == e);
  }
  CHECK_MESSAGE(wrong == 0, wrong << " of " << expected.data.size() << " elements differ");
}

struct Case {
  std::vector<uint32_t> channels;
  uint32_t offset;
  uint32_t extra;  // destination channels after the last source's
};

}  // namespace

TEST_CASE("concat: 3 and 4 sources at aligned and unaligned offsets, every channel checked") {
  const Case cases[] = {
      {{3, 5, 4, 13}, 0, 0}, {{3, 5, 4, 13}, 1, 2}, {{3, 5, 4, 13}, 4, 3}, {{4, 8, 4}, 0, 0},
      {{4, 8, 4}, 4, 1},     {{5, 13, 17}, 3, 0},   {{1, 1, 1, 1}, 2, 1},  {{32, 17, 3}, 7, 0},
  };
  uint32_t seed = 0;
  for (ChannelFormat f : {ChannelFormat::float32, ChannelFormat::float16})
    for (uint32_t n : {1u, 2u})
      for (const Case& k : cases) {
        if (f == ChannelFormat::float16 && n == 2) continue;
        std::vector<uint32_t> channels = k.channels;
        CAPTURE(toString(f));
        CAPTURE(n);
        CAPTURE(k.offset);
        CAPTURE(channels.size());
        CAPTURE(channels[1]);
        const uint32_t w = f == ChannelFormat::float16 ? 3 : 5 + seed % 2;
        const uint32_t h = f == ChannelFormat::float16 ? 2 : 4 - seed % 2;
        std::vector<Tensor> tensors;
        std::vector<Image> sources;
        for (uint32_t c : channels) {
          tensors.push_back(roundedTo(randomTensor(n, c, h, w, 100 + seed++), f));
          sources.push_back(makeImage(tensors.back(), f, "s" + std::to_string(sources.size())));
        }
        const uint32_t total = k.offset + Concat::featureChannels(sources) + k.extra;
        Image destination = makePoisoned(context(), {w, h, total, n, f, ImageUsage::all, "y"});
        Concat concat(context());
        concat.destinationFeatureChannelOffset = k.offset;
        EncodingStatistics statistics;
        runOnce([&](CommandBuffer& cb) {
          concat.encode(cb, sources, destination);
          statistics = cb.encodingStatistics();
        });
        CHECK(statistics.dispatches == channels.size());
        // Neighbours that share a destination layer need a barrier between their writes. With one
        // image, sources starting on multiples of 4 write disjoint layers: no barrier beyond the
        // first dispatch's. (A batch's view spans the other sources' layers of the images between,
        // so there every copy waits for the previous one.)
        uint32_t shared = 0, at = k.offset;
        for (size_t s = 1; s < channels.size(); ++s) {
          at += channels[s - 1];
          shared += at % 4 != 0;
        }
        if (shared == 0 && n == 1) CHECK(statistics.barriers == 1);
        if (shared > 0) CHECK(statistics.barriers >= 2);
        checkExact(download(destination), reference(tensors, k.offset, total));
      }
}

TEST_CASE("concat: temporary sources into a temporary destination") {
  const ChannelFormat f = ChannelFormat::float32;
  const std::vector<uint32_t> channels = {3, 5, 4};
  std::vector<Tensor> tensors;
  std::vector<Image> inputs;
  for (uint32_t c : channels) {
    tensors.push_back(roundedTo(randomTensor(1, c, 3, 4, 300 + c), f));
    inputs.push_back(makeImage(tensors.back(), f));
  }
  Image result = makePoisoned(context(), {4, 3, 14, 1, f});
  runOnce([&](CommandBuffer& cb) {
    Neuron copy(context(), NeuronDescriptor::of(NeuronType::none));
    std::vector<Image> temporaries;
    for (const Image& input : inputs) temporaries.push_back(copy.encode(cb, input));
    Concat concat(context());
    concat.destinationFeatureChannelOffset = 2;
    CHECK(concat.destinationImageDescriptor(temporaries).featureChannels == 14);
    TemporaryImage joined = concat.encode(cb, temporaries);
    for (const Image& t : temporaries) CHECK(TemporaryImage(t).readCount() == 0);
    CHECK(joined.featureChannels() == 14);
    CHECK(joined.readCount() == 1);
    copy.encode(cb, joined, result);
  });
  Tensor expected = reference(tensors, 2, 14);
  Tensor actual = download(result);
  // Channels 0 and 1 of the temporary were never written: only the concatenated ones are checked.
  for (uint32_t c = 0; c < 2; ++c)
    for (uint32_t p = 0; p < 12; ++p) actual.at(0, c, p / 4, p % 4) = kNaN;
  checkExact(actual, expected);
}

TEST_CASE("concat: makeDestination gives the channel count the sources need") {
  Image a(context(), {4, 2, 3, 2, ChannelFormat::float32});
  Image b(context(), {4, 2, 13, 2, ChannelFormat::float32});
  Image u8(context(), {4, 2, 4, 2, ChannelFormat::unorm8});
  Concat concat(context());
  concat.destinationFeatureChannelOffset = 5;
  const std::vector<Image> sources = {a, b};
  Image destination = concat.makeDestination(sources);
  CHECK(destination.featureChannels() == 21);
  CHECK(destination.width() == 4);
  CHECK(destination.height() == 2);
  CHECK(destination.numberOfImages() == 2);
  CHECK(!destination.isTemporary());
  CHECK(int(destination.channelFormat()) == int(ChannelFormat::float32));
  CHECK(int(concat.destinationImageDescriptor(std::vector<Image>{u8}).channelFormat) ==
        int(ChannelFormat::float16));
}

TEST_CASE("concat: errors before anything is encoded") {
  const ChannelFormat f = ChannelFormat::float32;
  Image a(context(), {4, 3, 3, 2, f, ImageUsage::all, "a"});
  Image b(context(), {4, 3, 5, 2, f, ImageUsage::all, "b"});
  Image wide(context(), {5, 3, 5, 2, f, ImageUsage::all, "wide"});
  Image single(context(), {4, 3, 5, 1, f, ImageUsage::all, "single"});
  Image destination(context(), {4, 3, 8, 2, f, ImageUsage::all, "y"});
  CommandBuffer cb(context());
  Concat concat(context());
  VKCNN_CHECK_ERROR(concat.encode(cb, std::vector<Image>{a, wide}, destination),
                    ErrorCode::invalidArgument, "source 1 'wide' (5x3x5, 2 images) differs");
  VKCNN_CHECK_ERROR(concat.encode(cb, std::vector<Image>{a, single}, destination),
                    ErrorCode::invalidArgument, "'single'");
  VKCNN_CHECK_ERROR(concat.encode(cb, std::vector<Image>{}, destination),
                    ErrorCode::invalidArgument, "no sources");
  VKCNN_CHECK_ERROR(concat.encode(cb, std::vector<Image>{a, Image()}, destination),
                    ErrorCode::invalidArgument, "source 1 is empty");
  VKCNN_CHECK_ERROR(concat.encode(cb, std::vector<Image>{destination, a}, destination),
                    ErrorCode::invalidArgument, "in-place");
  concat.destinationFeatureChannelOffset = 1;
  VKCNN_CHECK_ERROR(concat.encode(cb, std::vector<Image>{a, b}, destination),
                    ErrorCode::invalidArgument, "writes channels [1, 9)");
  // A temporary of another command buffer fails up front, before the first source is copied.
  concat.destinationFeatureChannelOffset = 0;
  CommandBuffer other(context());
  TemporaryImage foreign(other, {4, 3, 5, 2, f});
  VKCNN_CHECK_ERROR(concat.encode(cb, std::vector<Image>{a, foreign}, destination),
                    ErrorCode::misuse, "another command buffer");
  CHECK(cb.encodingStatistics().dispatches == 0);
}
