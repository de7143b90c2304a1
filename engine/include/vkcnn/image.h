// Image: a CNN image of any number of feature channels (MPSImage). Storage is a 2D-array image with
// (featureChannels+3)/4 layers per image, 4 consecutive channels per layer, the images of a batch
// one after another. Padding channels of the last layer hold zeros.
//
// Image is a handle: copies, sub-images and batch representations share storage with the image
// they came from. TemporaryImage is an Image whose memory comes from a CommandBuffer's pool.
//
// Threads: several threads may read one Image at once (kernel sources, readBytes); writing it
// (writeBytes, a kernel destination, setLabel) needs it to itself (see context.h).
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/export.h"

namespace vkcnn {

namespace detail {
class ImageStorage;
}

// How an Image stores its channels (4 to a texel, a 2D array layer per 4 channels).
enum class ChannelFormat {
  float16,  // rgba16f: the default; 11 bits of precision
  float32,  // rgba32f: 24 bits
  unorm8,   // rgba8 unorm: input pictures; 8 bits
};

// "float16", "float32" or "unorm8"; and 2, 4 or 1.
VKCNN_API const char* toString(ChannelFormat format);
VKCNN_API uint32_t bytesPerChannel(ChannelFormat format);

// Bit flags: how the image will be used. Every image can be read and written by kernels and by
// the host; the flags exist for wrapped application images whose usage vkcnn must respect.
enum class ImageUsage : uint32_t {
  shaderRead = 1,    // kernels read it (sampled or storage)
  shaderWrite = 2,   // kernels write it (storage)
  hostTransfer = 4,  // readBytes/writeBytes copy through it (transfer source and destination)
  all = 7,           // every use: vkcnn's own images
};

// The shape and format of an Image (MPSImageDescriptor).
struct ImageDescriptor {
  uint32_t width = 1;                                    // pixels
  uint32_t height = 1;                                   // pixels
  uint32_t featureChannels = 1;                          // per image
  uint32_t numberOfImages = 1;                           // the batch it holds
  ChannelFormat channelFormat = ChannelFormat::float16;  // storage
  ImageUsage usage = ImageUsage::all;                    // for wrapped images
  std::string label;  // names it in messages and validation output
};

// Host-side layouts, as in MPS: pixels with their channels interleaved, or channel planes.
enum class DataLayout { HeightxWidthxFeatureChannels, FeatureChannelsxHeightxWidth };

// Element type of host data. float32 converts to any storage format; float16 and uint8 must
// match a float16 or unorm8 image.
enum class HostDataType { float32, float16, uint8 };

// The pixels a host transfer covers.
struct ImageRegion {
  uint32_t x = 0, y = 0;           // the first pixel
  uint32_t width = 0, height = 0;  // 0: to the image's edge
};

// What readBytes/writeBytes move. bytesPerRow: stride between rows of the host data (0: tight).
// bytesPerImage: stride between channel planes for FeatureChannelsxHeightxWidth (0: tight); unused
// for HeightxWidthxFeatureChannels.
struct ImageReadWriteParams {
  DataLayout dataLayout = DataLayout::HeightxWidthxFeatureChannels;  // of the host data
  HostDataType dataType = HostDataType::float32;                     // of the host data
  ImageRegion region;                    // the pixels moved (by default all)
  uint32_t featureChannelOffset = 0;     // the first channel moved
  uint32_t numberOfFeatureChannels = 0;  // 0: from the offset to the last channel
  uint32_t imageIndex = 0;               // which image of the batch
  size_t bytesPerRow = 0;                // the host rows' stride (0: tight)
  size_t bytesPerImage = 0;              // the host channel planes' stride (0: tight)
};

// Channels [location, +length) (Image::subImage).
struct ChannelRange {
  uint32_t location = 0;  // the first channel
  uint32_t length = 0;    // channels
};

// Images [location, +length) of a batch (Image::batchRepresentation).
struct BatchRange {
  uint32_t location = 0;  // the first image
  uint32_t length = 0;    // images
};

class Image;
// A batch held in several Images (MPSImageBatch): what one Image cannot hold.
using ImageBatch = std::vector<Image>;

// float32 data written into a float16 image is rounded to nearest even. Finite values beyond the
// float16 range (|x| > 65504) saturate to +-65504 rather than becoming infinities (an infinity in a
// CNN poisons every later layer); infinities and NaN are stored as such.
class VKCNN_API Image {
 public:
  Image() = default;  // an empty handle; valid() is false
  // A new image, zero-filled; a shape beyond the device's limits is an Error.
  Image(const Context& context, const ImageDescriptor& descriptor);

  // Wraps an application's VkImage (initWithTexture:featureChannels:). A 2D image with one layer
  // holds one image of up to 4 channels (an RGBA8 render target read as 3 channels, say); a 2D
  // array holds layerCount/((featureChannels+3)/4) images. `layout` is the layout the image is in
  // whenever vkcnn uses it and must be VK_IMAGE_LAYOUT_GENERAL for images kernels write.
  static Image wrap(const Context& context, VkImage image, VkFormat format, uint32_t width,
                    uint32_t height, uint32_t arrayLayers, uint32_t featureChannels,
                    VkImageUsageFlags usage, VkImageLayout layout = VK_IMAGE_LAYOUT_GENERAL,
                    const std::string& label = {});

  // Whether it refers to an image; its shape and format (a view's own channels and images).
  bool valid() const { return storage_ != nullptr; }
  uint32_t width() const;
  uint32_t height() const;
  uint32_t featureChannels() const { return featureChannels_; }
  uint32_t numberOfImages() const { return numberOfImages_; }
  ChannelFormat channelFormat() const;
  VkFormat vkFormat() const;  // of the VkImage: R16G16B16A16_SFLOAT, R32G32B32A32_SFLOAT, ...
  // Bits of precision per channel, as MPS reports it: 11 for float16, 24 for float32, 8 for unorm8.
  uint32_t precision() const;
  // Bytes of device memory behind the storage; 0 for views and wrapped images (as in MPS).
  size_t resourceSize() const;
  // Layers of the 2D array per image: (featureChannels+3)/4.
  uint32_t slicesPerImage() const { return (featureChannels_ + 3) / 4; }
  const std::string& label() const;
  void setLabel(const std::string& label);
  bool isTemporary() const;
  // The image this one is a view of; an empty handle if none.
  Image parent() const;

  // A view over channels [range.location, +range.length): location a multiple of 4.
  Image subImage(ChannelRange range) const;
  // A view over images [range.location, +range.length) of this batch.
  Image batchRepresentation(BatchRange range) const;
  // One view per image of the batch.
  ImageBatch batchRepresentation() const;

  // Host transfers of what `params` describes; they wait for the device, and a region or channel
  // range outside the image is an Error.
  void writeBytes(const void* data, const ImageReadWriteParams& params);
  void readBytes(void* data, const ImageReadWriteParams& params) const;
  // Whole image `imageIndex` as float32, in the given layout.
  void writeFloats(std::span<const float> data, DataLayout layout, uint32_t imageIndex = 0);
  std::vector<float> readFloats(DataLayout layout, uint32_t imageIndex = 0) const;

  // The VkImage behind the storage (MPSImage.texture): allocates it if needed. Layers
  // [storageFirstImage()*slices, ...) of it belong to this view; it rests in
  // VK_IMAGE_LAYOUT_GENERAL. vkcnn's float16 images are created with
  // VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT where DeviceCapabilities::float16BitStores holds (kernels
  // write them through a VK_FORMAT_R32G32_UINT view).
  VkImage vkImage() const;

  // Where this view sits in its storage (for kernels and importers).
  uint32_t storageFirstImage() const { return firstImage_; }
  uint32_t storageChannelOffset() const { return channelOffset_; }
  const std::shared_ptr<detail::ImageStorage>& storage() const { return storage_; }

  // Largest numberOfImages one Image can hold for this many channels on this device.
  static uint32_t maxNumberOfImages(const Context& context, uint32_t featureChannels);
  // An ImageBatch holding descriptor.numberOfImages images in as few Images as the device allows.
  static ImageBatch makeBatch(const Context& context, const ImageDescriptor& descriptor);

 protected:
  Image(std::shared_ptr<detail::ImageStorage> storage, uint32_t featureChannels,
        uint32_t numberOfImages, uint32_t firstImage, uint32_t channelOffset,
        std::shared_ptr<const Image> parent);

  std::shared_ptr<detail::ImageStorage> storage_;
  uint32_t featureChannels_ = 0;
  uint32_t numberOfImages_ = 0;
  uint32_t firstImage_ = 0;     // first image of the view inside the storage
  uint32_t channelOffset_ = 0;  // first channel of the view inside each storage image
  std::shared_ptr<const Image> parent_;
};

// Short-lived image (MPSTemporaryImage), valid only while its CommandBuffer is being encoded.
// Every kernel that reads it, or decrementReadCount(), lowers readCount; at zero its memory goes
// back to the CommandBuffer's pool for later temporaries. The host cannot read or write it.
// Views of a temporary share its readCount.
class VKCNN_API TemporaryImage : public Image {
 public:
  TemporaryImage() = default;  // an empty handle
  // A temporary of `commandBuffer`, its memory taken from the pool when first written; readCount 1.
  TemporaryImage(const CommandBuffer& commandBuffer, const ImageDescriptor& descriptor);
  // Treats an Image known to be temporary as one (throws if it is not).
  explicit TemporaryImage(const Image& image);

  // The reads left before its memory goes back to the pool: set it to the number of kernels that
  // will read it; decrementReadCount() gives up one read without a kernel.
  uint32_t readCount() const;
  void setReadCount(uint32_t readCount);
  void decrementReadCount();
};

}  // namespace vkcnn
