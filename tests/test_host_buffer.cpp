// Shared (host-mapped) Buffers: one inference as one submission (host writes the input through
// contents(), BufferToImage + a kernel + ImageToBuffer in one reusable command buffer, host reads
// the output through contents()), resubmitted with new inputs; the barrier that publishes shader
// writes to the host; Buffer::write/read on shared buffers ordered after earlier submissions; the
// Context's staging buffers reused across host transfers; and errors.
#include <vkcnn/buffer.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

const float kNaNf = std::numeric_limits<float>::quiet_NaN();
const float kSentinel = -12345.5f;

Buffer sharedBuffer(size_t bytes, BufferCpuCacheMode cache, const std::string& label) {
  BufferOptions o;
  o.storageMode = BufferStorageMode::shared;
  o.cpuCacheMode = cache;
  o.label = label;
  return Buffer(context(), bytes, o);
}

float* floats(Buffer& b) {
  return static_cast<float*>(b.contents());
}

// What the device computes for a*x + b on a value stored in `format`, stored in `format` again.
double linearThroughImages(double x, double a, double b, ChannelFormat format) {
  const bool half = format == ChannelFormat::float16;
  const double stored = half ? roundToHalf(x) : double(float(x));
  const double y = a * stored + b;
  return half ? roundToHalf(y) : y;
}

}  // namespace

TEST_CASE("host buffer: zero-filled, contents() shared by copies, write/read through it") {
  for (BufferCpuCacheMode cache :
       {BufferCpuCacheMode::defaultCache, BufferCpuCacheMode::writeCombined}) {
    Buffer b = sharedBuffer(40, cache, "shared");
    CHECK((b.storageMode() == BufferStorageMode::shared));
    REQUIRE((b.contents() != nullptr));
    CHECK(b.readFloats() == std::vector<float>(10, 0.0f));
    Buffer copy = b;
    CHECK(copy.contents() == b.contents());
    const std::vector<float> values = randomFloats(10, 3);
    b.writeFloats(values);
    CHECK(std::memcmp(copy.contents(), values.data(), 40) == 0);
    floats(b)[7] = 42.0f;
    CHECK(b.readFloats(7, 1) == std::vector<float>{42.0f});
    const Buffer& constant = b;
    CHECK(constant.contents() == b.contents());
  }
}

TEST_CASE(
    "host buffer: upload, kernel and download in one command buffer, resubmitted with new "
    "inputs") {
  // Odd channels and a batch, so every slice, padding channel and image is exercised; the output
  // tensor sits at an offset inside a larger buffer whose other bytes must stay untouched.
  const uint32_t N = 3, C = 7, H = 5, W = 6;
  const size_t count = size_t(N) * C * H * W;
  const size_t outputOffset = 16;  // floats before the tensor
  const double a = 1.75, b = -0.375;
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    for (TensorLayout layout : {TensorLayout::NCHW, TensorLayout::NHWC}) {
      CAPTURE(format);
      CAPTURE(toString(layout));
      Buffer input = sharedBuffer(count * 4, BufferCpuCacheMode::writeCombined, "input");
      Buffer output =
          sharedBuffer((count + 2 * outputOffset) * 4, BufferCpuCacheMode::defaultCache, "output");
      Image loaded = makePoisoned(context(), {W, H, C, N, format});
      Image result = makePoisoned(context(), {W, H, C, N, format});

      CommandBufferOptions reusable;
      reusable.reusable = true;
      CommandBuffer cb(context(), "one submission", reusable);
      BufferToImage upload(context(), layout);
      upload.encode(cb, input, loaded);
      Neuron linear(context(), NeuronDescriptor::of(NeuronType::linear, float(a), float(b)));
      linear.encode(cb, loaded, result);
      ImageToBuffer download(context(), layout);
      download.bufferOffset = outputOffset * 4;
      download.encode(cb, result, output);

      for (uint32_t round = 0; round < 4; ++round) {
        CAPTURE(round);
        // Each round's input lies in another range, so stale data cannot pass for fresh.
        const std::vector<float> x =
            randomFloats(count, 100 + round, -2.0f - float(round), 2.0f + float(round));
        std::memcpy(input.contents(), x.data(), count * 4);
        float* out = floats(output);
        for (size_t i = 0; i < count + 2 * outputOffset; ++i)
          out[i] = i < outputOffset || i >= outputOffset + count ? kSentinel : kNaNf;
        cb.commit();
        cb.waitUntilCompleted();
        CHECK((cb.status() == CommandBufferStatus::completed));

        Tensor actual(N, C, H, W), expected(N, C, H, W);
        for (uint32_t n = 0; n < N; ++n)
          for (uint32_t c = 0; c < C; ++c)
            for (uint32_t y = 0; y < H; ++y)
              for (uint32_t xx = 0; xx < W; ++xx) {
                const size_t i = layout == TensorLayout::NHWC
                                     ? ((size_t(n) * H + y) * W + xx) * C + c
                                     : ((size_t(n) * C + c) * H + y) * W + xx;
                actual.at(n, c, y, xx) = out[outputOffset + i];
                expected.at(n, c, y, xx) = linearThroughImages(x[i], a, b, format);
              }
        compare(actual, expected, tolerance(format));
        bool sentinels = true;
        for (size_t i = 0; i < outputOffset; ++i)
          sentinels &= out[i] == kSentinel && out[outputOffset + count + i] == kSentinel;
        CHECK_MESSAGE(sentinels, "ImageToBuffer wrote outside its tensor");
      }
    }
  }
}

TEST_CASE("host buffer: a download into a shared buffer ends with a barrier to the host") {
  // Synchronization validation does not track host reads, so count the barrier instead: the same
  // recording into a device-local buffer has none at its end.
  Image image = makeImage(randomTensor(2, 5, 3, 4, 9), ChannelFormat::float16);
  const size_t bytes = size_t(2) * 5 * 3 * 4 * 4;
  auto barriersInto = [&](Buffer destination) {
    CommandBuffer cb(context());
    ImageToBuffer(context()).encode(cb, image, destination);
    cb.commit();
    cb.waitUntilCompleted();
    return cb.encodingStatistics().barriers;
  };
  const uint32_t device = barriersInto(Buffer(context(), bytes, "device"));
  const uint32_t shared = barriersInto(sharedBuffer(bytes, BufferCpuCacheMode::defaultCache, "s"));
  CHECK(device == 1);  // the first dispatch's
  CHECK(shared == device + 1);
  // An upload from a shared buffer needs none: the submission makes host writes visible.
  CommandBuffer cb(context());
  Buffer source = sharedBuffer(bytes, BufferCpuCacheMode::writeCombined, "source");
  Image target(context(), {4, 3, 5, 2, ChannelFormat::float16});
  BufferToImage(context()).encode(cb, source, target);
  cb.commit();
  cb.waitUntilCompleted();
  CHECK(cb.encodingStatistics().barriers == 1);
}

TEST_CASE("host buffer: write() and read() wait for work submitted before them") {
  const uint32_t N = 2, C = 6, H = 4, W = 5;
  const size_t count = size_t(N) * C * H * W;
  Buffer input = sharedBuffer(count * 4, BufferCpuCacheMode::writeCombined, "input");
  Buffer output = sharedBuffer(count * 4, BufferCpuCacheMode::defaultCache, "output");
  Image image(context(), {W, H, C, N, ChannelFormat::float32});
  const std::vector<float> x = randomFloats(count, 21);
  input.writeFloats(x);
  CommandBuffer cb(context());
  BufferToImage(context()).encode(cb, input, image);
  ImageToBuffer(context()).encode(cb, image, output);
  std::fill(floats(output), floats(output) + count, kNaNf);
  cb.commit();
  // No waitUntilCompleted: read() orders itself after the committed work.
  const std::vector<float> back = output.readFloats();
  CHECK(std::memcmp(back.data(), x.data(), count * 4) == 0);
  // write() after the command buffer: the kernel read the old input, not this one.
  input.writeFloats(std::vector<float>(count, 3.0f));
  cb.waitUntilCompleted();
  CHECK(std::memcmp(output.contents(), x.data(), count * 4) == 0);
}

TEST_CASE("host buffer: host transfers reuse the Context's staging buffers") {
  Context ctx = makeContext();
  Image image(ctx, {9, 7, 13, 2, ChannelFormat::float16, ImageUsage::all, "streamed"});
  Buffer device(ctx, 4096, "device");
  const std::vector<float> values = randomFloats(9 * 7 * 13, 5);
  auto transfers = [&] {
    for (uint32_t i = 0; i < 2; ++i) {
      image.writeFloats(values, DataLayout::FeatureChannelsxHeightxWidth, i);
      (void)image.readFloats(DataLayout::FeatureChannelsxHeightxWidth, i);
    }
    device.writeFloats(std::vector<float>(1024, 1.0f));
    (void)device.readFloats();
  };
  transfers();
  const MemoryStatistics warm = ctx.memoryStatistics();
  for (int i = 0; i < 5; ++i) transfers();
  const MemoryStatistics after = ctx.memoryStatistics();
  CHECK(after.allocationRequests == warm.allocationRequests);  // nothing allocated per transfer
  CHECK(after.liveAllocations == warm.liveAllocations);
  // trimTemporaryMemory gives the kept staging buffer back.
  ctx.trimTemporaryMemory();
  CHECK(ctx.memoryStatistics().liveAllocations == warm.liveAllocations - 1);
  transfers();
  CHECK(ctx.memoryStatistics().allocationRequests == warm.allocationRequests + 1);
}

TEST_CASE("host buffer: errors") {
  Buffer device(context(), 16, "private");
  VKCNN_CHECK_ERROR(device.contents(), ErrorCode::invalidArgument,
                    "contents of buffer 'private' (16 bytes): the host cannot address a "
                    "device-local buffer; make it with BufferStorageMode::shared");
  const Buffer& constant = device;
  VKCNN_CHECK_ERROR(constant.contents(), ErrorCode::invalidArgument, "device-local");
  CHECK((device.storageMode() == BufferStorageMode::device));
  VKCNN_CHECK_ERROR(Buffer().contents(), ErrorCode::invalidArgument,
                    "contents on an empty Buffer handle");
  VKCNN_CHECK_ERROR(
      Buffer::wrap(context(), device.vkBuffer(), 0, 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, "app")
          .contents(),
      ErrorCode::invalidArgument, "the host cannot address a wrapped buffer");
  BufferOptions bad;
  bad.storageMode = BufferStorageMode(7);
  bad.label = "odd";
  VKCNN_CHECK_ERROR(Buffer(context(), 16, bad), ErrorCode::invalidArgument,
                    "buffer 'odd' (16 bytes): storage mode 7 does not exist");
  bad.storageMode = BufferStorageMode::shared;
  bad.cpuCacheMode = BufferCpuCacheMode(3);
  VKCNN_CHECK_ERROR(Buffer(context(), 16, bad), ErrorCode::invalidArgument,
                    "CPU cache mode 3 does not exist");
  bad.cpuCacheMode = BufferCpuCacheMode::defaultCache;
  VKCNN_CHECK_ERROR(Buffer(context(), 6, bad), ErrorCode::invalidArgument, "multiple of 4");
  CHECK(std::string(toString(BufferStorageMode::shared)) == "shared");
}
