#include "memory/workspace.h"

#include <algorithm>

#include "memory/device_buffer.h"
#include "vulkan/command_buffer_impl.h"
#include "vulkan/context_impl.h"

namespace vkcnn::detail {

namespace {
constexpr VkDeviceSize kChunkSize = VkDeviceSize(8) << 20;
constexpr VkDeviceSize kZeroedChunkSize = VkDeviceSize(64) << 10;
constexpr VkDeviceSize kAlignment = 256;  // at least any device's minStorageBufferOffsetAlignment
}  // namespace

Workspace::Range Workspace::Chunks::take(CommandBufferImpl& cb, VkDeviceSize size, bool zero) {
  // A barrier since the last take ordered every dispatch that used a range before it (a range is
  // taken and dispatched within one encode): start again from the first chunk. The hazard tracker
  // sees the bound ranges anyway, so this decides only the memory and the barriers, never whether
  // results are right.
  if (cb.statistics.barriers != barriers) current = 0, used = 0;
  barriers = cb.statistics.barriers;
  size = (size + kAlignment - 1) / kAlignment * kAlignment;
  while (current < chunks.size() && used + size > chunks[current]->size()) ++current, used = 0;
  if (current == chunks.size()) {
    auto chunk =
        DeviceBuffer::create(*cb.context, std::max(zero ? kZeroedChunkSize : kChunkSize, size),
                             nullptr, cb.label + " workspace");
    if (zero) {
      // Zeros before any dispatch of this command buffer reads them (nothing earlier touched the
      // new buffer, so only the fill needs ordering).
      const VolkDeviceTable& vk = cb.context->vk();
      vk.vkCmdFillBuffer(cb.commandBuffer, chunk->buffer(), 0, VK_WHOLE_SIZE, 0);
      VkMemoryBarrier filled{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      filled.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      filled.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vk.vkCmdPipelineBarrier(cb.commandBuffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &filled, 0, nullptr, 0,
                              nullptr);
    }
    chunks.push_back(std::move(chunk));
    used = 0;
  }
  const std::shared_ptr<DeviceBuffer>& chunk = chunks[current];
  Range range{chunk->buffer(), used, size, chunk};
  used += size;
  return range;
}

}  // namespace vkcnn::detail
