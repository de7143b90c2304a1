// Buffer and the buffer <-> image layout kernels: host transfers of Buffers, BufferToImage and
// ImageToBuffer for NCHW and NHWC tensors against Image::writeBytes/readBytes of the same data and
// against the host data itself, channel offsets, zeroed padding, chains in one command buffer
// (barriers on buffer hazards, checked by synchronization validation), wrapped application
// buffers and images, and errors.
#include <vkcnn/buffer.h>
#include <vkcnn/rearrange.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

const float kNaNf = std::numeric_limits<float>::quiet_NaN();
const float kSentinel = -12345.5f;

// Index of element (n, c, y, x) of a tensor of c channels, h x w, in `layout`.
size_t indexOf(TensorLayout layout, uint32_t C, uint32_t H, uint32_t W, uint32_t n, uint32_t c,
               uint32_t y, uint32_t x) {
  if (layout == TensorLayout::NHWC) return ((size_t(n) * H + y) * W + x) * C + c;
  return ((size_t(n) * C + c) * H + y) * W + x;
}

DataLayout hostLayout(TensorLayout layout) {
  return layout == TensorLayout::NHWC ? DataLayout::HeightxWidthxFeatureChannels
                                      : DataLayout::FeatureChannelsxHeightxWidth;
}

// Writes image i of a tensor held in `data` (layout order) with Image::writeBytes.
void writeTensor(Image& image, const float* data, TensorLayout layout, uint32_t channelOffset,
                 uint32_t channels) {
  const size_t perImage = size_t(channels) * image.height() * image.width();
  for (uint32_t i = 0; i < image.numberOfImages(); ++i) {
    ImageReadWriteParams p;
    p.dataLayout = hostLayout(layout);
    p.imageIndex = i;
    p.featureChannelOffset = channelOffset;
    p.numberOfFeatureChannels = channels;
    image.writeBytes(data + i * perImage, p);
  }
}

std::vector<float> readTensor(const Image& image, TensorLayout layout) {
  const size_t perImage = size_t(image.featureChannels()) * image.height() * image.width();
  std::vector<float> out(perImage * image.numberOfImages());
  for (uint32_t i = 0; i < image.numberOfImages(); ++i) {
    ImageReadWriteParams p;
    p.dataLayout = hostLayout(layout);
    p.imageIndex = i;
    image.readBytes(out.data() + i * perImage, p);
  }
  return out;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

Buffer makeBuffer(const std::vector<float>& values, const std::string& label = {}) {
  Buffer b(context(), values.size() * 4, label);
  b.writeFloats(values);
  return b;
}

// Just enough raw Vulkan, through the loader, to make application-owned buffers and images for
// the wrap tests.
struct RawVulkan {
  PFN_vkGetDeviceProcAddr getDeviceProcAddr = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties getMemoryProperties = nullptr;
  PFN_vkCreateBuffer createBuffer = nullptr;
  PFN_vkDestroyBuffer destroyBuffer = nullptr;
  PFN_vkGetBufferMemoryRequirements bufferRequirements = nullptr;
  PFN_vkBindBufferMemory bindBuffer = nullptr;
  PFN_vkCreateImage createImage = nullptr;
  PFN_vkDestroyImage destroyImage = nullptr;
  PFN_vkGetImageMemoryRequirements imageRequirements = nullptr;
  PFN_vkBindImageMemory bindImage = nullptr;
  PFN_vkAllocateMemory allocateMemory = nullptr;
  PFN_vkFreeMemory freeMemory = nullptr;
  PFN_vkCmdPipelineBarrier cmdPipelineBarrier = nullptr;
  VkDevice device = VK_NULL_HANDLE;
  std::vector<VkBuffer> buffers;
  std::vector<VkImage> images;
  std::vector<VkDeviceMemory> memories;

  RawVulkan() {
    auto gipa = vulkanLoader();
    REQUIRE((gipa != nullptr));
    VkInstance instance = context().vkInstance();
    device = context().vkDevice();
    getDeviceProcAddr =
        reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"));
    getMemoryProperties = reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
        gipa(instance, "vkGetPhysicalDeviceMemoryProperties"));
    load(createBuffer, "vkCreateBuffer");
    load(destroyBuffer, "vkDestroyBuffer");
    load(bufferRequirements, "vkGetBufferMemoryRequirements");
    load(bindBuffer, "vkBindBufferMemory");
    load(createImage, "vkCreateImage");
    load(destroyImage, "vkDestroyImage");
    load(imageRequirements, "vkGetImageMemoryRequirements");
    load(bindImage, "vkBindImageMemory");
    load(allocateMemory, "vkAllocateMemory");
    load(freeMemory, "vkFreeMemory");
    load(cmdPipelineBarrier, "vkCmdPipelineBarrier");
  }
  ~RawVulkan() {
    context().waitIdle();
    for (VkBuffer b : buffers) destroyBuffer(device, b, nullptr);
    for (VkImage i : images) destroyImage(device, i, nullptr);
    for (VkDeviceMemory m : memories) freeMemory(device, m, nullptr);
  }
  template <typename F>
  void load(F& f, const char* name) {
    f = reinterpret_cast<F>(getDeviceProcAddr(device, name));
    REQUIRE((f != nullptr));
  }

  VkDeviceMemory memoryFor(const VkMemoryRequirements& req) {
    VkPhysicalDeviceMemoryProperties props;
    getMemoryProperties(context().vkPhysicalDevice(), &props);
    uint32_t type = UINT32_MAX;
    for (uint32_t t = 0; t < props.memoryTypeCount && type == UINT32_MAX; ++t)
      if ((req.memoryTypeBits & (1u << t)) &&
          (props.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
        type = t;
    REQUIRE(type != UINT32_MAX);
    VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    info.allocationSize = req.size;
    info.memoryTypeIndex = type;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    REQUIRE(allocateMemory(device, &info, nullptr, &memory) == VK_SUCCESS);
    memories.push_back(memory);
    return memory;
  }

  VkBuffer buffer(VkDeviceSize size, VkBufferUsageFlags usage) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = usage;
    VkBuffer b = VK_NULL_HANDLE;
    REQUIRE(createBuffer(device, &info, nullptr, &b) == VK_SUCCESS);
    buffers.push_back(b);
    VkMemoryRequirements req;
    bufferRequirements(device, b, &req);
    REQUIRE(bindBuffer(device, b, memoryFor(req), 0) == VK_SUCCESS);
    return b;
  }

  // An rgba32f 2D array in VK_IMAGE_LAYOUT_GENERAL.
  VkImage image(uint32_t width, uint32_t height, uint32_t layers) {
    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = VK_FORMAT_R32G32B32A32_SFLOAT;
    info.extent = {width, height, 1};
    info.mipLevels = 1;
    info.arrayLayers = layers;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
                 VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage image = VK_NULL_HANDLE;
    REQUIRE(createImage(device, &info, nullptr, &image) == VK_SUCCESS);
    images.push_back(image);
    VkMemoryRequirements req;
    imageRequirements(device, image, &req);
    REQUIRE(bindImage(device, image, memoryFor(req), 0) == VK_SUCCESS);
    runOnce([&](CommandBuffer& cb) {
      VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
      b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
      b.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
      b.newLayout = VK_IMAGE_LAYOUT_GENERAL;
      b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
      b.image = image;
      b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers};
      cmdPipelineBarrier(cb.vkCommandBuffer(), VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                         VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0, nullptr, 1, &b);
    });
    return image;
  }
};

constexpr VkImageUsageFlags kWrappedImageUsage =
    VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
    VK_IMAGE_USAGE_TRANSFER_DST_BIT;

}  // namespace

TEST_CASE("buffer: zero-filled, host writes and reads of whole and partial ranges") {
  Buffer b(context(), 64, "b");
  CHECK(b.valid());
  CHECK(b.size() == 64);
  CHECK(b.floatCount() == 16);
  CHECK(b.label() == "b");
  CHECK_FALSE(b.isWrapped());
  CHECK(b.vkBuffer() != VK_NULL_HANDLE);
  CHECK(b.readFloats() == std::vector<float>(16, 0.0f));
  std::vector<float> values = randomFloats(16, 3);
  b.writeFloats(values);
  CHECK(sameBits(b.readFloats(), values));
  b.writeFloats(std::vector<float>{7, 8, 9}, 5);
  values[5] = 7, values[6] = 8, values[7] = 9;
  CHECK(sameBits(b.readFloats(), values));
  CHECK(sameBits(b.readFloats(4, 5), std::vector<float>(values.begin() + 4, values.begin() + 9)));
  uint8_t bytes[3];
  b.read(bytes, 3, 21);  // bytes need not be whole floats
  CHECK(std::memcmp(bytes, reinterpret_cast<const uint8_t*>(values.data()) + 21, 3) == 0);
  Buffer copy = b;  // a handle: same storage
  copy.writeFloats(std::vector<float>{1.5f});
  CHECK(b.readFloats(0, 1)[0] == 1.5f);
}

TEST_CASE("buffer: bad sizes, ranges and handles are errors") {
  VKCNN_CHECK_ERROR(Buffer(context(), 0), ErrorCode::invalidArgument, "multiple of 4");
  VKCNN_CHECK_ERROR(Buffer(context(), 6, "six"), ErrorCode::invalidArgument, "buffer 'six'");
  Buffer b(context(), 16, "small");
  std::vector<float> five(5, 1.0f);
  VKCNN_CHECK_ERROR(b.writeFloats(five), ErrorCode::invalidArgument, "outside the buffer");
  VKCNN_CHECK_ERROR(b.writeFloats(std::vector<float>(2), 3), ErrorCode::invalidArgument,
                    "bytes [12, 20)");
  VKCNN_CHECK_ERROR(b.readFloats(5), ErrorCode::invalidArgument, "'small'");
  VKCNN_CHECK_ERROR(b.write(nullptr, 4), ErrorCode::invalidArgument, "null");
  Buffer empty;
  CHECK_FALSE(empty.valid());
  VKCNN_CHECK_ERROR(empty.size(), ErrorCode::invalidArgument, "empty Buffer");
  VKCNN_CHECK_ERROR(
      Buffer::wrap(context(), VK_NULL_HANDLE, 0, 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT),
      ErrorCode::invalidArgument, "null");
  VKCNN_CHECK_ERROR(
      Buffer::wrap(context(), b.vkBuffer(), 2, 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT),
      ErrorCode::invalidArgument, "multiples of 4");
  VKCNN_CHECK_ERROR(Buffer::wrap(context(), b.vkBuffer(), 0, 16, VK_BUFFER_USAGE_TRANSFER_DST_BIT),
                    ErrorCode::invalidArgument, "STORAGE_BUFFER_BIT");
  Buffer readOnly =
      Buffer::wrap(context(), b.vkBuffer(), 0, 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, "ro");
  CHECK(readOnly.isWrapped());
  VKCNN_CHECK_ERROR(readOnly.readFloats(), ErrorCode::unsupported, "TRANSFER_SRC");
  VKCNN_CHECK_ERROR(readOnly.writeFloats(five), ErrorCode::invalidArgument, "outside");
  VKCNN_CHECK_ERROR(readOnly.writeFloats(std::vector<float>(1)), ErrorCode::unsupported,
                    "TRANSFER_DST");
}

TEST_CASE("layout: NCHW and NHWC round trips, channels 1 to 17, batches 1 to 3") {
  const ChannelFormat f32 = ChannelFormat::float32;
  for (TensorLayout layout : {TensorLayout::NCHW, TensorLayout::NHWC})
    for (uint32_t channels : {1u, 3u, 4u, 5u, 13u, 17u})
      for (uint32_t batch : {1u, 2u, 3u}) {
        CAPTURE(toString(layout));
        CAPTURE(channels);
        CAPTURE(batch);
        const uint32_t w = 5, h = 3;
        const size_t count = size_t(batch) * channels * h * w;
        std::vector<float> data = randomFloats(count, channels * 10 + batch, -2, 2);
        Buffer source = makeBuffer(data, "tensor");
        // Reference: the same data through the host path.
        Image reference(context(), {w, h, channels, batch, f32, ImageUsage::all, "reference"});
        writeTensor(reference, data.data(), layout, 0, channels);
        Image destination = makePoisoned(context(), {w, h, channels, batch, f32});
        BufferToImage toImage(context(), layout);
        CHECK(toImage.tensorBytes(destination) == count * 4);
        // Back into a larger buffer at an offset: the bytes around the tensor keep the sentinel.
        const size_t before = 3, after = 5;
        std::vector<float> sentinels(before + count + after, kSentinel);
        Buffer back = makeBuffer(sentinels, "back");
        ImageToBuffer toBuffer(context(), layout);
        toBuffer.bufferOffset = before * 4;
        runOnce([&](CommandBuffer& cb) {
          toImage.encode(cb, source, destination);
          toBuffer.encode(cb, reference, back);
        });
        const std::vector<float> written = readTensor(destination, layout);
        CHECK(sameBits(written, readTensor(reference, layout)));
        CHECK(sameBits(written, data));
        const std::vector<float> result = back.readFloats();
        CHECK(sameBits(std::vector<float>(result.begin() + before, result.end() - after), data));
        bool untouched = true;
        for (size_t k = 0; k < before; ++k) untouched &= result[k] == kSentinel;
        for (size_t k = 0; k < after; ++k) untouched &= result[before + count + k] == kSentinel;
        CHECK(untouched);
        CHECK(sameBits(source.readFloats(), data));  // the source buffer is only read
      }
}

TEST_CASE("layout: element order against the host tensor in double precision") {
  // Independent of Image::writeBytes: element (n, c, y, x) of the tensor must land in channel c
  // of pixel (x, y) of image n, for both orders.
  for (TensorLayout layout : {TensorLayout::NCHW, TensorLayout::NHWC}) {
    CAPTURE(toString(layout));
    const uint32_t n = 2, c = 6, h = 4, w = 3;
    Tensor x = roundedTo(randomTensor(n, c, h, w, 5), ChannelFormat::float32);
    std::vector<float> data(x.data.size());
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t yy = 0; yy < h; ++yy)
          for (uint32_t xx = 0; xx < w; ++xx)
            data[indexOf(layout, c, h, w, i, ch, yy, xx)] = float(x.at(i, ch, yy, xx));
    Buffer source = makeBuffer(data);
    Image image = makePoisoned(context(), {w, h, c, n, ChannelFormat::float32});
    Buffer back(context(), data.size() * 4);
    BufferToImage toImage(context(), layout);
    ImageToBuffer toBuffer(context(), layout);
    runOnce([&](CommandBuffer& cb) {
      toImage.encode(cb, source, image);
      toBuffer.encode(cb, image, back);
    });
    Tensor y = download(image);
    CHECK(relativeL2(y, x) == 0.0);
    CHECK(sameBits(back.readFloats(), data));
  }
}

TEST_CASE("layout: channel windows at unaligned offsets keep neighbouring channels") {
  const ChannelFormat f32 = ChannelFormat::float32;
  for (TensorLayout layout : {TensorLayout::NCHW, TensorLayout::NHWC})
    for (uint32_t offset : {1u, 3u, 4u, 6u, 12u}) {
      CAPTURE(toString(layout));
      CAPTURE(offset);
      const uint32_t w = 3, h = 2, n = 2, channels = 5, total = 17;
      std::vector<float> data = randomFloats(size_t(n) * channels * h * w, offset);
      Buffer source = makeBuffer(data);
      Image destination = makePoisoned(context(), {w, h, total, n, f32});
      BufferToImage toImage(context(), layout);
      toImage.featureChannels = channels;
      toImage.destinationFeatureChannelOffset = offset;
      // And back out of a wider source at the same unaligned offset.
      Tensor wide = roundedTo(randomTensor(n, total, h, w, 100 + offset), f32);
      Image wideImage = makeImage(wide, f32);
      Buffer back(context(), data.size() * 4);
      ImageToBuffer toBuffer(context(), layout);
      toBuffer.sourceFeatureChannelOffset = offset;
      toBuffer.featureChannels = channels;
      runOnce([&](CommandBuffer& cb) {
        toImage.encode(cb, source, destination);
        toBuffer.encode(cb, wideImage, back);
      });
      Tensor y = download(destination);
      const std::vector<float> out = back.readFloats();
      bool ok = true;
      for (uint32_t i = 0; i < n; ++i)
        for (uint32_t c = 0; c < total; ++c)
          for (uint32_t yy = 0; yy < h; ++yy)
            for (uint32_t xx = 0; xx < w; ++xx) {
              const double v = y.at(i, c, yy, xx);
              if (c >= offset && c < offset + channels) {
                ok &= v == data[indexOf(layout, channels, h, w, i, c - offset, yy, xx)];
                ok &= out[indexOf(layout, channels, h, w, i, c - offset, yy, xx)] ==
                      float(wide.at(i, c, yy, xx));
              } else {
                ok &= std::isnan(v);
              }
            }
      CHECK(ok);
    }
}

TEST_CASE("layout: batch representations and sub-images select images and channels") {
  // The tensor's batch is the view's: image 1 of 3 (and channels 4..11 of 13 through a
  // sub-image) are written, the rest keeps its poison; the reverse reads the same view.
  const ChannelFormat f32 = ChannelFormat::float32;
  const uint32_t w = 5, h = 3, total = 13;
  Image destination = makePoisoned(context(), {w, h, total, 3, f32});
  Image view = destination.batchRepresentation({1, 1}).subImage({4, 8});
  std::vector<float> data = randomFloats(size_t(8) * h * w, 21);
  Buffer source = makeBuffer(data);
  Buffer back(context(), data.size() * 4);
  BufferToImage toImage(context(), TensorLayout::NCHW);
  ImageToBuffer toBuffer(context(), TensorLayout::NCHW);
  runOnce([&](CommandBuffer& cb) {
    toImage.encode(cb, source, view);
    toBuffer.encode(cb, view, back);
  });
  Tensor y = download(destination);
  bool ok = true;
  for (uint32_t i = 0; i < 3; ++i)
    for (uint32_t c = 0; c < total; ++c)
      for (uint32_t yy = 0; yy < h; ++yy)
        for (uint32_t xx = 0; xx < w; ++xx) {
          const double v = y.at(i, c, yy, xx);
          if (i == 1 && c >= 4 && c < 12)
            ok &= v == data[indexOf(TensorLayout::NCHW, 8, h, w, 0, c - 4, yy, xx)];
          else
            ok &= std::isnan(v);
        }
  CHECK(ok);
  CHECK(sameBits(back.readFloats(), data));
}

TEST_CASE("layout: float16 images round and saturate as writeBytes does") {
  const ChannelFormat f16 = ChannelFormat::float16;
  for (TensorLayout layout : {TensorLayout::NCHW, TensorLayout::NHWC})
    for (uint32_t channels : {3u, 5u}) {
      CAPTURE(toString(layout));
      CAPTURE(channels);
      const uint32_t w = 3, h = 2, n = 2;
      std::vector<float> data = randomFloats(size_t(n) * channels * h * w, channels, -3, 3);
      data[1] = 1e6f;  // beyond float16: saturates to 65504
      data[2] = -70000.0f;
      Buffer source = makeBuffer(data);
      Image reference(context(), {w, h, channels, n, f16});
      writeTensor(reference, data.data(), layout, 0, channels);
      Image destination = makePoisoned(context(), {w, h, channels, n, f16});
      Buffer back(context(), data.size() * 4);
      BufferToImage toImage(context(), layout);
      ImageToBuffer toBuffer(context(), layout);
      runOnce([&](CommandBuffer& cb) {
        toImage.encode(cb, source, destination);
        toBuffer.encode(cb, reference, back);
      });
      Tensor actual = download(destination), expected = download(reference);
      CHECK(relativeL2(actual, expected) <= tolerance(f16));
      CHECK_FALSE(hasNaN(actual));
      const std::vector<float> written = readTensor(destination, layout);
      CHECK(written[1] == 65504.0f);
      CHECK(written[2] == -65504.0f);
      // float16 -> float32 is exact: the buffer holds exactly what readBytes reports.
      CHECK(sameBits(back.readFloats(), readTensor(reference, layout)));
    }
}

TEST_CASE("layout: buffer -> image -> kernels -> image -> buffer in one command buffer") {
  // Temporaries in between, a buffer written and read back by a later dispatch of the same
  // command buffer, and two writes of disjoint buffer ranges: every hazard needs its barrier and
  // synchronization validation reports any that is missing.
  for (TensorLayout layout : {TensorLayout::NCHW, TensorLayout::NHWC}) {
    CAPTURE(toString(layout));
    // 2304 bytes per tensor: the second one starts at any device's storage buffer alignment.
    const uint32_t n = 2, c = 12, h = 3, w = 8, g = 3;
    Tensor x = roundedTo(randomTensor(n, c, h, w, 9, -2, 2), ChannelFormat::float32);
    std::vector<float> data(x.data.size());
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t yy = 0; yy < h; ++yy)
          for (uint32_t xx = 0; xx < w; ++xx)
            data[indexOf(layout, c, h, w, i, ch, yy, xx)] = float(x.at(i, ch, yy, xx));
    // Reference: shuffle then ReLU.
    std::vector<float> expected(data.size());
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t o = 0; o < c; ++o)
        for (uint32_t yy = 0; yy < h; ++yy)
          for (uint32_t xx = 0; xx < w; ++xx)
            expected[indexOf(layout, c, h, w, i, o, yy, xx)] =
                float(std::max(0.0, x.at(i, (o % g) * (c / g) + o / g, yy, xx)));

    const size_t bytes = data.size() * 4;
    Buffer input = makeBuffer(data, "input");
    Buffer middle(context(), 2 * bytes, "middle");  // two tensors side by side
    Buffer output(context(), bytes, "output");
    Image final = makePoisoned(context(), {w, h, c, n, ChannelFormat::float32});
    BufferToImage toImage(context(), layout);
    ImageToBuffer toBuffer(context(), layout);
    ChannelShuffle shuffle(context(), g);
    Neuron relu(context(), NeuronDescriptor::relu());

    CommandBuffer cb(context());
    TemporaryImage loaded(cb, {w, h, c, n, ChannelFormat::float32});
    toImage.encode(cb, input, loaded);                     // barrier 1 (first dispatch)
    TemporaryImage shuffled = shuffle.encode(cb, loaded);  // 2: reads `loaded`
    TemporaryImage activated = relu.encode(cb, shuffled);  // 3
    activated.setReadCount(2);
    toBuffer.encode(cb, activated, middle);  // 4: reads `activated`, writes middle [0, bytes)
    toBuffer.bufferOffset = bytes;
    toBuffer.encode(cb, activated,
                    middle);  // no barrier: disjoint range, both only read `activated`
    CHECK(cb.encodingStatistics().barriers == 4);
    toImage.bufferOffset = bytes;
    toImage.encode(cb, middle, final);  // 5: reads what the last dispatch wrote
    toBuffer.bufferOffset = 0;
    toBuffer.encode(cb, final, output);  // 6
    CHECK(cb.encodingStatistics().barriers == 6);
    CHECK(cb.encodingStatistics().dispatches == 7);
    cb.commit();
    cb.waitUntilCompleted();

    const std::vector<float> m = middle.readFloats();
    CHECK(sameBits(std::vector<float>(m.begin(), m.begin() + data.size()), expected));
    CHECK(sameBits(std::vector<float>(m.begin() + data.size(), m.end()), expected));
    CHECK(sameBits(output.readFloats(), expected));
  }
}

TEST_CASE("layout: padding channels of the destination end as zero") {
  // One application image seen twice: as 5 channels (layers hold channels 5..7 as padding) and as
  // 8 channels, through which the padding is poisoned first and inspected afterwards.
  RawVulkan raw;
  const uint32_t w = 3, h = 2, n = 2;
  VkImage vkImage = raw.image(w, h, 2 * n);
  {
    Image asEight = Image::wrap(context(), vkImage, VK_FORMAT_R32G32B32A32_SFLOAT, w, h, 2 * n, 8,
                                kWrappedImageUsage, VK_IMAGE_LAYOUT_GENERAL, "eight");
    fill(asEight, kNaNf);
    Image asFive = Image::wrap(context(), vkImage, VK_FORMAT_R32G32B32A32_SFLOAT, w, h, 2 * n, 5,
                               kWrappedImageUsage, VK_IMAGE_LAYOUT_GENERAL, "five");
    std::vector<float> data = randomFloats(size_t(n) * 5 * h * w, 11);
    Buffer source = makeBuffer(data);
    BufferToImage toImage(context(), TensorLayout::NCHW);
    runOnce([&](CommandBuffer& cb) { toImage.encode(cb, source, asFive); });
    Tensor seen = download(asEight);
    bool ok = true;
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t c = 0; c < 8; ++c)
        for (uint32_t yy = 0; yy < h; ++yy)
          for (uint32_t xx = 0; xx < w; ++xx)
            ok &= seen.at(i, c, yy, xx) ==
                  (c < 5 ? double(data[indexOf(TensorLayout::NCHW, 5, h, w, i, c, yy, xx)]) : 0.0);
    CHECK(ok);
  }
}

TEST_CASE("layout: wrapped application buffers at unaligned offsets, two wraps of one VkBuffer") {
  RawVulkan raw;
  const uint32_t w = 4, h = 3, n = 2, c = 5;
  const size_t count = size_t(n) * c * h * w, bytes = count * 4;
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  VkBuffer vkBuffer = raw.buffer(4096, usage);
  {
    // Offsets below any minStorageBufferOffsetAlignment: the kernels bind from an aligned start.
    Buffer first = Buffer::wrap(context(), vkBuffer, 20, bytes, usage, "first");
    Buffer second = Buffer::wrap(context(), vkBuffer, 20 + bytes + 4, bytes, usage, "second");
    CHECK(first.vkOffset() == 20);
    std::vector<float> data = randomFloats(count, 12);
    first.writeFloats(data);
    second.writeFloats(std::vector<float>(count, kSentinel));
    Image image = makePoisoned(context(), {w, h, c, n, ChannelFormat::float32});
    Image copy = makePoisoned(context(), {w, h, c, n, ChannelFormat::float32});
    BufferToImage toImage(context(), TensorLayout::NHWC);
    ImageToBuffer toBuffer(context(), TensorLayout::NHWC);
    // `alias` wraps the same bytes as `second`: writing through one and reading through the other
    // in one command buffer needs a barrier, which only a tracker keyed on the VkBuffer places.
    Buffer alias = Buffer::wrap(context(), vkBuffer, 20 + bytes + 4, bytes, usage, "alias");
    runOnce([&](CommandBuffer& cb) {
      toImage.encode(cb, first, image);
      toBuffer.encode(cb, image, second);
      toImage.encode(cb, alias, copy);
      CHECK(cb.encodingStatistics().barriers == 3);
    });
    CHECK(sameBits(readTensor(image, TensorLayout::NHWC), data));
    CHECK(sameBits(second.readFloats(), data));
    CHECK(sameBits(readTensor(copy, TensorLayout::NHWC), data));
    CHECK(sameBits(first.readFloats(), data));
  }
}

TEST_CASE("layout: wrong sizes and windows are errors before anything is encoded") {
  const ChannelFormat f32 = ChannelFormat::float32;
  Image image(context(), {4, 3, 6, 2, f32, ImageUsage::all, "img"});
  Buffer exact(context(), 4 * 3 * 6 * 2 * 4, "exact");
  Buffer small(context(), 4 * 3 * 6 * 2 * 4 - 4, "small");
  CommandBuffer cb(context());
  BufferToImage toImage(context(), TensorLayout::NCHW);
  toImage.label = "load";
  ImageToBuffer toBuffer(context(), TensorLayout::NHWC);
  toBuffer.label = "store";

  VKCNN_CHECK_ERROR(toImage.encode(cb, small, image), ErrorCode::invalidArgument,
                    "buffer is too small");
  VKCNN_CHECK_ERROR(toBuffer.encode(cb, image, small), ErrorCode::invalidArgument,
                    "needs bytes [0, 576) of destination buffer 'small'");
  toImage.bufferOffset = 4;
  VKCNN_CHECK_ERROR(toImage.encode(cb, exact, image), ErrorCode::invalidArgument, "too small");
  toImage.bufferOffset = 2;
  VKCNN_CHECK_ERROR(toImage.encode(cb, exact, image), ErrorCode::invalidArgument,
                    "bufferOffset 2 is not a multiple of 4");
  toImage.bufferOffset = 0;
  toImage.destinationFeatureChannelOffset = 6;
  VKCNN_CHECK_ERROR(toImage.encode(cb, exact, image), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset 6 is not below");
  toImage.destinationFeatureChannelOffset = 3;
  toImage.featureChannels = 4;
  VKCNN_CHECK_ERROR(toImage.encode(cb, exact, image), ErrorCode::invalidArgument,
                    "channels [3, 7)");
  toImage.featureChannels = 0;
  toBuffer.sourceFeatureChannelOffset = 7;
  VKCNN_CHECK_ERROR(toBuffer.encode(cb, image, exact), ErrorCode::invalidArgument,
                    "ImageToBuffer 'store': sourceFeatureChannelOffset 7");
  toBuffer.sourceFeatureChannelOffset = 0;
  Buffer empty;
  VKCNN_CHECK_ERROR(toImage.encode(cb, empty, image), ErrorCode::invalidArgument,
                    "source Buffer is empty");
  VKCNN_CHECK_ERROR(toBuffer.encode(cb, Image(), exact), ErrorCode::invalidArgument,
                    "source Image is empty");
  VKCNN_CHECK_ERROR(BufferToImage(context(), TensorLayout(5)).encode(cb, exact, image),
                    ErrorCode::invalidArgument, "data layout 5");
  TemporaryImage unwritten(cb, {4, 3, 6, 2, f32});
  VKCNN_CHECK_ERROR(toBuffer.encode(cb, unwritten, exact), ErrorCode::misuse,
                    "read before any kernel wrote it");
  CHECK(cb.encodingStatistics().dispatches == 0);
  cb.commit();
  cb.waitUntilCompleted();
  VKCNN_CHECK_ERROR(toImage.encode(cb, exact, image), ErrorCode::misuse, "no longer encoding");
}
