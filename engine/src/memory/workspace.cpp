#include "memory/workspace.h"

#include <algorithm>

#include "memory/allocator.h"
#include "vulkan/command_buffer_impl.h"
#include "vulkan/context_impl.h"

namespace vkcnn::detail {

struct Workspace::Chunk {
  explicit Chunk(std::shared_ptr<ContextImpl> ctx) : context(std::move(ctx)) {}
  ~Chunk() {
    context->settleAfterLoss();
    if (buffer) context->vk().vkDestroyBuffer(context->device(), buffer, nullptr);
    context->allocator().free(allocation);
  }
  std::shared_ptr<ContextImpl> context;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  Allocation allocation;
};

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
  while (current < chunks.size() && used + size > chunks[current]->size) ++current, used = 0;
  if (current == chunks.size()) {
    ContextImpl& ctx = *cb.context;
    auto chunk = std::make_shared<Chunk>(cb.context);
    chunk->size = std::max(zero ? kZeroedChunkSize : kChunkSize, size);
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = chunk->size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    ctx.check(ctx.vk().vkCreateBuffer(ctx.device(), &info, nullptr, &chunk->buffer),
              "vkCreateBuffer (workspace)");
    ctx.setName(VK_OBJECT_TYPE_BUFFER, chunk->buffer, cb.label + " workspace");
    VkMemoryRequirements req;
    ctx.vk().vkGetBufferMemoryRequirements(ctx.device(), chunk->buffer, &req);
    chunk->allocation =
        ctx.allocator().allocate(req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, "workspace");
    ctx.check(ctx.vk().vkBindBufferMemory(ctx.device(), chunk->buffer, chunk->allocation.memory,
                                          chunk->allocation.offset),
              "vkBindBufferMemory (workspace)");
    if (zero) {
      // Zeros before any dispatch of this command buffer reads them (nothing earlier touched the
      // new buffer, so only the fill needs ordering).
      ctx.vk().vkCmdFillBuffer(cb.commandBuffer, chunk->buffer, 0, VK_WHOLE_SIZE, 0);
      VkMemoryBarrier filled{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      filled.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      filled.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      ctx.vk().vkCmdPipelineBarrier(cb.commandBuffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &filled, 0, nullptr,
                                    0, nullptr);
    }
    chunks.push_back(std::move(chunk));
    used = 0;
  }
  const std::shared_ptr<Chunk>& chunk = chunks[current];
  Range range{chunk->buffer, used, size, chunk};
  used += size;
  return range;
}

}  // namespace vkcnn::detail
