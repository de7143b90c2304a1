// Images: host round trips in both layouts over many channel counts, batches, regions and channel
// ranges; float16 rounding and saturation; padding channels; views sharing storage; limits.
#include <cmath>
#include <cstring>
#include <limits>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// The host value after a trip through storage of this format.
float stored(float v, ChannelFormat format) {
  Image one(context(), {1, 1, 1, 1, format});
  one.writeFloats(std::vector<float>{v}, DataLayout::HeightxWidthxFeatureChannels);
  return one.readFloats(DataLayout::HeightxWidthxFeatureChannels)[0];
}

// What the documented rounding predicts, from the test's own float16 model.
float expectedStored(float v, ChannelFormat format) {
  Tensor t(1, 1, 1, 1, v);
  return float(roundedTo(t, format).data[0]);
}

// Reads the raw padding channels of the storage: the same VkImage wrapped as a whole number of
// layers (4 channels each), so the channels past featureChannels become visible.
std::vector<float> paddingChannels(const Image& image, uint32_t imageIndex) {
  const uint32_t slices = image.slicesPerImage();
  Image raw = Image::wrap(context(), image.vkImage(), image.vkFormat(), image.width(),
                          image.height(), slices * image.numberOfImages(), slices * 4,
                          VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT);
  ImageReadWriteParams p;
  p.dataLayout = DataLayout::FeatureChannelsxHeightxWidth;
  p.featureChannelOffset = image.featureChannels();
  p.numberOfFeatureChannels = slices * 4 - image.featureChannels();
  p.imageIndex = imageIndex;
  std::vector<float> values(size_t(p.numberOfFeatureChannels) * image.width() * image.height());
  if (!values.empty()) raw.readBytes(values.data(), p);
  return values;
}

}  // namespace

TEST_CASE("image: write then read back, both layouts, many channel counts and batches") {
  const uint32_t channelCounts[] = {1, 3, 4, 5, 8, 9, 13, 64, 67};
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    for (uint32_t channels : channelCounts) {
      for (uint32_t images : {1u, 2u, 5u}) {
        if (channels > 13 && images > 2) continue;  // keeps the sweep quick
        CAPTURE(channels);
        CAPTURE(images);
        CAPTURE(toString(format));
        const uint32_t w = 5 + channels % 3, h = 3 + images;
        Image image(context(), {w, h, channels, images, format});
        CHECK(image.slicesPerImage() == (channels + 3) / 4);
        for (DataLayout layout :
             {DataLayout::HeightxWidthxFeatureChannels, DataLayout::FeatureChannelsxHeightxWidth}) {
          std::vector<std::vector<float>> written;
          for (uint32_t i = 0; i < images; ++i) {
            written.push_back(randomFloats(size_t(w) * h * channels, channels * 100 + i, -8, 8));
            image.writeFloats(written.back(), layout, i);
          }
          bool ok = true;
          for (uint32_t i = 0; i < images; ++i) {
            std::vector<float> back = image.readFloats(layout, i);
            for (size_t k = 0; k < back.size(); ++k) {
              const float expected = expectedStored(written[i][k], format);
              ok &= back[k] == expected;
            }
            for (float pad : paddingChannels(image, i)) ok &= pad == 0.0f;
          }
          CHECK(ok);
        }
      }
    }
  }
}

TEST_CASE("image: layouts place channels as MPS describes") {
  // 2x1 pixels, 3 channels: HxWxC interleaves, CxHxW plans.
  Image image(context(), {2, 1, 3, 1, ChannelFormat::float32});
  image.writeFloats(std::vector<float>{1, 2, 3, 4, 5, 6}, DataLayout::HeightxWidthxFeatureChannels);
  CHECK(image.readFloats(DataLayout::FeatureChannelsxHeightxWidth) ==
        std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("image: regions, channel ranges, strides and image index") {
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    const uint32_t w = 9, h = 7, c = 13, n = 3;
    Tensor base = roundedTo(randomTensor(n, c, h, w, 5, -2, 2), format);
    Image image = makeImage(base, format);
    // Channels 2..8 (crossing layer boundaries, unaligned) of image 1 in region (3,2) 4x3,
    // written with padded rows and planes.
    ImageReadWriteParams p;
    p.dataLayout = DataLayout::FeatureChannelsxHeightxWidth;
    p.region = {3, 2, 4, 3};
    p.featureChannelOffset = 2;
    p.numberOfFeatureChannels = 7;
    p.imageIndex = 1;
    p.bytesPerRow = 6 * sizeof(float);    // 4 floats used, 2 skipped
    p.bytesPerImage = 4 * p.bytesPerRow;  // 3 rows used, 1 skipped
    std::vector<float> patch(7 * 4 * 6, -100.f);
    for (uint32_t ch = 0; ch < 7; ++ch)
      for (uint32_t y = 0; y < 3; ++y)
        for (uint32_t x = 0; x < 4; ++x)
          patch[ch * 24 + y * 6 + x] = expectedStored(float(ch * 100 + y * 10 + x) / 64.f, format);
    image.writeBytes(patch.data(), p);
    Tensor expected = base;
    for (uint32_t ch = 0; ch < 7; ++ch)
      for (uint32_t y = 0; y < 3; ++y)
        for (uint32_t x = 0; x < 4; ++x)
          expected.at(1, 2 + ch, 2 + y, 3 + x) = patch[ch * 24 + y * 6 + x];
    CHECK(relativeL2(download(image), expected) == 0.0);

    // Read the same region back in the other layout with a row stride.
    ImageReadWriteParams q = p;
    q.dataLayout = DataLayout::HeightxWidthxFeatureChannels;
    q.bytesPerRow = (4 * 7 + 3) * sizeof(float);
    q.bytesPerImage = 0;
    std::vector<float> back(3 * (4 * 7 + 3), 0.f);
    image.readBytes(back.data(), q);
    bool ok = true;
    for (uint32_t y = 0; y < 3; ++y)
      for (uint32_t x = 0; x < 4; ++x)
        for (uint32_t ch = 0; ch < 7; ++ch)
          ok &= back[y * (4 * 7 + 3) + x * 7 + ch] == patch[ch * 24 + y * 6 + x];
    CHECK(ok);
  }
}

TEST_CASE("image: float16 rounding, saturation, infinities and NaN are as documented") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(stored(1.0f, ChannelFormat::float16) == 1.0f);
  CHECK(stored(1.0f + 1.0f / 4096, ChannelFormat::float16) == 1.0f);  // below half a step: down
  CHECK(stored(1.0f + 3.0f / 2048, ChannelFormat::float16) == 1.0f + 2.0f / 1024);  // tie: to even
  CHECK(stored(65504.f, ChannelFormat::float16) == 65504.f);
  CHECK(stored(65519.f, ChannelFormat::float16) == 65504.f);
  CHECK(stored(70000.f, ChannelFormat::float16) == 65504.f);  // saturates, never Inf
  CHECK(stored(-1e30f, ChannelFormat::float16) == -65504.f);
  CHECK(stored(inf, ChannelFormat::float16) == inf);  // explicit infinities are kept
  CHECK(stored(-inf, ChannelFormat::float16) == -inf);
  CHECK(std::isnan(stored(std::nanf(""), ChannelFormat::float16)));
  // The library's rounding agrees with the test's independent model on many random values.
  std::vector<float> values = randomFloats(4096, 9, -70000, 70000);
  for (size_t i = 0; i < values.size(); i += 3) values[i] *= 1e-4f;  // small ones too
  Image many(context(), {64, 64, 1, 1, ChannelFormat::float16});
  many.writeFloats(values, DataLayout::HeightxWidthxFeatureChannels);
  std::vector<float> back = many.readFloats(DataLayout::HeightxWidthxFeatureChannels);
  bool agree = true;
  for (size_t i = 0; i < values.size(); ++i)
    agree &= back[i] == expectedStored(values[i], ChannelFormat::float16);
  CHECK(agree);
  CHECK(stored(std::ldexp(1.0f, -24), ChannelFormat::float16) ==
        std::ldexp(1.0f, -24));                                          // subnormal
  CHECK(stored(std::ldexp(1.0f, -26), ChannelFormat::float16) == 0.0f);  // below the subnormals
  CHECK(stored(3.0f * std::ldexp(1.0f, -20), ChannelFormat::float16) ==
        3.0f * std::ldexp(1.0f, -20));
}

TEST_CASE("image: unorm8 images and uint8 host data") {
  Image picture(context(), {4, 2, 3, 1, ChannelFormat::unorm8});
  CHECK(picture.precision() == 8);
  std::vector<uint8_t> rgb(4 * 2 * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = uint8_t(i * 11);
  ImageReadWriteParams p;
  p.dataType = HostDataType::uint8;
  picture.writeBytes(rgb.data(), p);
  std::vector<uint8_t> back(rgb.size());
  picture.readBytes(back.data(), p);
  CHECK(back == rgb);
  std::vector<float> floats = picture.readFloats(DataLayout::HeightxWidthxFeatureChannels);
  for (size_t i = 0; i < rgb.size(); ++i) CHECK(floats[i] == doctest::Approx(rgb[i] / 255.0));
  Image halfImage(context(), {4, 2, 3});
  VKCNN_CHECK_ERROR(halfImage.writeBytes(rgb.data(), p), ErrorCode::invalidArgument, "unorm8");
}

TEST_CASE("image: properties as MPS reports them") {
  Image a(context(), {8, 8, 5, 2, ChannelFormat::float16, ImageUsage::all, "features"});
  CHECK(a.label() == "features");
  CHECK(a.precision() == 11);
  CHECK(a.slicesPerImage() == 2);
  CHECK(a.resourceSize() >= size_t(8) * 8 * 4 * 2 * 2 * 2);  // 4 layers of 8x8 rgba16f
  Image b(context(), {8, 8, 5, 2, ChannelFormat::float32});
  CHECK(b.precision() == 24);
  CHECK(b.resourceSize() >= size_t(8) * 8 * 4 * 4 * 2 * 2);
  CHECK_FALSE(a.parent().valid());
  CHECK(a.subImage({4, 1}).resourceSize() == 0);  // views own no memory
}

TEST_CASE("image: sub-images and batch representations share storage with their parent") {
  Tensor base = randomTensor(3, 13, 4, 5, 77);
  Image parent = makeImage(base, ChannelFormat::float32, "parent");

  Image channels = parent.subImage({4, 6});  // channels 4..9 of all three images
  CHECK(channels.featureChannels() == 6);
  CHECK(channels.numberOfImages() == 3);
  CHECK(channels.parent().label() == "parent");
  Tensor seen = download(channels);
  bool ok = true;
  for (uint32_t i = 0; i < 3; ++i)
    for (uint32_t c = 0; c < 6; ++c)
      for (uint32_t y = 0; y < 4; ++y)
        for (uint32_t x = 0; x < 5; ++x)
          ok &= seen.at(i, c, y, x) == float(base.at(i, c + 4, y, x));
  CHECK(ok);

  // Writing through the view changes the parent's channels 4..9 and nothing else (channels 10, 11
  // share the view's last layer and must survive).
  Tensor replacement = randomTensor(3, 6, 4, 5, 78);
  upload(channels, replacement);
  Tensor after = download(parent);
  Tensor expected = base;
  for (uint32_t i = 0; i < 3; ++i)
    for (uint32_t c = 0; c < 6; ++c)
      for (uint32_t y = 0; y < 4; ++y)
        for (uint32_t x = 0; x < 5; ++x) expected.at(i, c + 4, y, x) = replacement.at(i, c, y, x);
  CHECK(relativeL2(after, roundedTo(expected, ChannelFormat::float32)) == 0.0);

  Image second = parent.batchRepresentation({1, 2});
  CHECK(second.numberOfImages() == 2);
  std::vector<float> plane(5 * 4 * 13, 3.5f);
  second.writeFloats(plane, DataLayout::FeatureChannelsxHeightxWidth, 1);  // parent image 2
  CHECK(parent.readFloats(DataLayout::FeatureChannelsxHeightxWidth, 2) == plane);

  ImageBatch batch = parent.batchRepresentation();
  REQUIRE(batch.size() == 3);
  CHECK(batch[2].readFloats(DataLayout::FeatureChannelsxHeightxWidth) == plane);
  CHECK(batch[0].parent().label() == "parent");

  // A view of a view.
  Image nested = second.subImage({8, 5});
  CHECK(nested.readFloats(DataLayout::FeatureChannelsxHeightxWidth, 1) ==
        std::vector<float>(5 * 4 * 5, 3.5f));

  VKCNN_CHECK_ERROR(parent.subImage({2, 4}), ErrorCode::invalidArgument, "multiple of 4");
  VKCNN_CHECK_ERROR(parent.subImage({12, 2}), ErrorCode::invalidArgument, "exceed");
  VKCNN_CHECK_ERROR(parent.batchRepresentation({2, 2}), ErrorCode::invalidArgument, "exceed");
}

TEST_CASE("image: limits are clear errors naming the limit; ImageBatch splits large batches") {
  const auto& caps = context().capabilities();
  // 2048 channels are 512 layers per image: 5 images need 2560 layers.
  VKCNN_CHECK_ERROR(Image(context(), {4, 4, 2048, 5}), ErrorCode::limitExceeded,
                    "maxImageArrayLayers");
  VKCNN_CHECK_ERROR(Image(context(), {caps.maxImageDimension2D + 1, 4, 4}),
                    ErrorCode::limitExceeded, "maxImageDimension2D");
  VKCNN_CHECK_ERROR(Image(context(), {4, 0, 4}), ErrorCode::invalidArgument, "positive");
  CHECK(Image::maxNumberOfImages(context(), 2048) == caps.maxImageArrayLayers / 512);
  ImageBatch batch = Image::makeBatch(context(), {2, 2, 2048, 9, ChannelFormat::float16});
  uint32_t total = 0;
  for (const Image& image : batch) {
    CHECK(uint64_t(image.slicesPerImage()) * image.numberOfImages() <= caps.maxImageArrayLayers);
    total += image.numberOfImages();
  }
  CHECK(total == 9);
  CHECK(batch.size() == (9 + Image::maxNumberOfImages(context(), 2048) - 1) /
                            Image::maxNumberOfImages(context(), 2048));
}

TEST_CASE("image: bad transfers are clear errors") {
  Image image(context(), {4, 3, 5, 2, ChannelFormat::float32});
  std::vector<float> data(1000);
  ImageReadWriteParams p;
  p.imageIndex = 2;
  VKCNN_CHECK_ERROR(image.writeBytes(data.data(), p), ErrorCode::invalidArgument, "imageIndex");
  p = {};
  p.region = {2, 0, 3, 1};
  VKCNN_CHECK_ERROR(image.readBytes(data.data(), p), ErrorCode::invalidArgument, "region");
  p = {};
  p.featureChannelOffset = 3;
  p.numberOfFeatureChannels = 3;
  VKCNN_CHECK_ERROR(image.writeBytes(data.data(), p), ErrorCode::invalidArgument, "exceed");
  p = {};
  p.bytesPerRow = 4;
  VKCNN_CHECK_ERROR(image.writeBytes(data.data(), p), ErrorCode::invalidArgument, "bytesPerRow");
  p = {};
  VKCNN_CHECK_ERROR(image.writeBytes(nullptr, p), ErrorCode::invalidArgument, "null");
  VKCNN_CHECK_ERROR(
      image.writeFloats(std::vector<float>(7), DataLayout::HeightxWidthxFeatureChannels),
      ErrorCode::invalidArgument, "expected");
}
