// Per-dispatch parameter blocks too large for push constants (a tensor kernel's shapes and
// strides for up to 8 axes and 4 operands), written by the host while a CommandBuffer records
// and read by its dispatches as uniform buffers. Chunks of host-visible coherent memory are kept
// alive like the other objects a recording refers to (until it completes, or for good in a
// reusable one), so no submission waits on them.
#pragma once

#include <vulkan/vulkan_core.h>

#include <memory>

namespace vkcnn::detail {

class CommandBufferImpl;

class ParameterArena {
 public:
  struct Range {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize offset = 0, size = 0;
  };
  // Copies `size` bytes into the arena of `commandBuffer` and returns where they are.
  Range upload(CommandBufferImpl& commandBuffer, const void* data, VkDeviceSize size);

 private:
  struct Chunk;
  std::shared_ptr<Chunk> current_;
  VkDeviceSize used_ = 0;
};

}  // namespace vkcnn::detail
