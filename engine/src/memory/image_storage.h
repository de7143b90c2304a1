// The storage behind Images: one VkImage 2D array, persistent (own memory) or temporary (memory
// from a CommandBuffer's pool), or wrapped (owned by the application).
#pragma once

#include <atomic>
#include <map>
#include <tuple>
#include <memory>
#include <mutex>
#include <string>

#include "memory/allocator.h"
#include "memory/temporary_pool.h"
#include "vkcnn/image.h"

namespace vkcnn::detail {

class ContextImpl;
class CommandBufferImpl;

VkFormat vkFormatOf(ChannelFormat format);

class ImageStorage {
 public:
  ImageStorage(std::shared_ptr<ContextImpl> context, const ImageDescriptor& descriptor,
               bool temporary);
  ~ImageStorage();
  ImageStorage(const ImageStorage&) = delete;
  ImageStorage& operator=(const ImageStorage&) = delete;

  uint32_t slicesPerImage() const { return (featureChannels + 3) / 4; }
  uint32_t layers() const { return slicesPerImage() * numberOfImages; }
  // Creates the VkImage if needed (no memory yet) and returns its memory requirements.
  const VkMemoryRequirements& memoryRequirements();
  // Persistent images: allocates, binds and zero-fills the image (once), leaving it in GENERAL.
  void materialize();
  // A 2D-array view of layers [baseLayer, +layerCount) in `viewFormat` (the image's own format if
  // VK_FORMAT_UNDEFINED), cached for the storage's lifetime.
  VkImageView view(uint32_t baseLayer, uint32_t layerCount,
                   VkFormat viewFormat = VK_FORMAT_UNDEFINED);
  // Whether kernels may write this image's float16 values as bits through a rg32ui view
  // (DeviceCapabilities::float16BitStores; vkcnn's own images, created mutable-format).
  bool float16Bits() const { return bitsViewable_; }
  // Layout the image is in whenever vkcnn uses it.
  VkImageLayout layout() const { return wrapped ? wrappedLayout : VK_IMAGE_LAYOUT_GENERAL; }
  std::string describe() const;  // "image 'label' (WxHxC, N images)" for messages

  std::shared_ptr<ContextImpl> context;
  VkImage image = VK_NULL_HANDLE;
  VkFormat format = VK_FORMAT_UNDEFINED;
  ChannelFormat channelFormat = ChannelFormat::float16;
  uint32_t width = 0, height = 0, featureChannels = 0, numberOfImages = 0;
  std::string label;
  uint64_t id = 0;

  bool wrapped = false;
  VkImageLayout wrappedLayout = VK_IMAGE_LAYOUT_GENERAL;
  VkImageUsageFlags usage = 0;

  // Persistent storage.
  Allocation allocation;
  // Atomic: threads that share an image for reading may both ask for it to be materialized.
  std::atomic<bool> materialized{false};

  // Temporary storage: valid only while `owner` encodes.
  bool temporary = false;
  std::weak_ptr<CommandBufferImpl> owner;
  uint32_t readCount = 1;
  bool released = false;  // readCount reached 0: the memory went back to the pool
  bool bound = false;     // pool memory bound
  bool written = false;   // some kernel wrote it
  bool laidOut = false;   // its UNDEFINED -> GENERAL transition is recorded
  TemporaryPool::Slot slot;

 private:
  void createImage();
  std::mutex mutex_;
  bool requirementsKnown_ = false;
  bool bitsViewable_ = false;
  VkMemoryRequirements requirements_{};
  std::map<std::tuple<uint32_t, uint32_t, VkFormat>, VkImageView> views_;
};

}  // namespace vkcnn::detail
