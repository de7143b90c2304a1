// Device-local scratch memory for dispatches that need it only while they run (a convolution's
// reduction split over workgroups keeps its partial sums and per-tile counters there): per
// CommandBuffer, handed out in disjoint ranges until a barrier orders every earlier dispatch,
// after which the ranges are handed out again from the start. Dispatches bind them as written
// storage buffers, so the hazard tracker still sees any overlap; disjoint ranges let dispatches
// of one barrier level (a batch's pieces side by side) run together. Device-local, and not from
// the temporary pool: pool memory reused at once needed an aliasing barrier per dispatch, and
// host-visible counters bound to every tiled dispatch made batch-32 networks 5-20% slower
// (bench/NOTES.md, 2026-11-28, session 18). Chunks live until the CommandBuffer completes.
#pragma once

#include <vulkan/vulkan_core.h>

#include <memory>
#include <vector>

namespace vkcnn::detail {

class CommandBufferImpl;
class DeviceBuffer;

class Workspace {
 public:
  struct Range {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize offset = 0, size = 0;
    std::shared_ptr<const void> owner;  // keeps the chunk alive
  };
  // `size` bytes that no dispatch recorded since the last barrier uses; any contents.
  Range take(CommandBufferImpl& commandBuffer, VkDeviceSize size) {
    return scratch_.take(commandBuffer, size, false);
  }
  // The same from memory that is zero, and that every dispatch using it leaves zero (counters):
  // a new chunk is filled with zeros in the command buffer, before a barrier.
  Range takeZeroed(CommandBufferImpl& commandBuffer, VkDeviceSize size) {
    return zeroed_.take(commandBuffer, size, true);
  }

 private:
  struct Chunks {
    Range take(CommandBufferImpl& commandBuffer, VkDeviceSize size, bool zero);
    std::vector<std::shared_ptr<DeviceBuffer>> chunks;
    size_t current = 0;     // the chunk ranges are taken from
    VkDeviceSize used = 0;  // bytes of it taken
    uint64_t barriers = 0;  // the CommandBuffer's barrier count at the last take
  };
  Chunks scratch_, zeroed_;
};

}  // namespace vkcnn::detail
