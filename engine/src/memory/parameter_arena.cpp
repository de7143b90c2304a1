#include "memory/parameter_arena.h"

#include <algorithm>
#include <cstring>

#include "memory/allocator.h"
#include "vulkan/command_buffer_impl.h"
#include "vulkan/context_impl.h"

namespace vkcnn::detail {

struct ParameterArena::Chunk {
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
constexpr VkDeviceSize kChunkSize = VkDeviceSize(64) << 10;
}

ParameterArena::Range ParameterArena::upload(CommandBufferImpl& cb, const void* data,
                                             VkDeviceSize size) {
  ContextImpl& ctx = *cb.context;
  VkPhysicalDeviceProperties properties;
  ctx.vki().vkGetPhysicalDeviceProperties(ctx.physicalDevice(), &properties);
  const VkDeviceSize alignment =
      std::max<VkDeviceSize>(properties.limits.minUniformBufferOffsetAlignment, 16);
  VkDeviceSize offset = (used_ + alignment - 1) / alignment * alignment;
  if (!current_ || offset + size > current_->size) {
    auto chunk = std::make_shared<Chunk>(cb.context);
    chunk->size = std::max(kChunkSize, size);
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = chunk->size;
    info.usage = VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    ctx.check(ctx.vk().vkCreateBuffer(ctx.device(), &info, nullptr, &chunk->buffer),
              "vkCreateBuffer (kernel parameters)");
    ctx.setName(VK_OBJECT_TYPE_BUFFER, chunk->buffer, cb.label + " parameters");
    VkMemoryRequirements req;
    ctx.vk().vkGetBufferMemoryRequirements(ctx.device(), chunk->buffer, &req);
    // Coherent: the submission makes the host's writes visible to the device.
    chunk->allocation = ctx.allocator().allocate(
        req, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "kernel parameters");
    ctx.check(ctx.vk().vkBindBufferMemory(ctx.device(), chunk->buffer, chunk->allocation.memory,
                                          chunk->allocation.offset),
              "vkBindBufferMemory (kernel parameters)");
    cb.keepAlive(chunk);
    current_ = std::move(chunk);
    offset = 0;
  }
  std::memcpy(static_cast<char*>(current_->allocation.mapped) + offset, data, size);
  used_ = offset + size;
  return {current_->buffer, offset, size};
}

}  // namespace vkcnn::detail
