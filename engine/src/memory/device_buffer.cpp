#include "memory/device_buffer.h"

#include <cstring>

#include "vulkan/context_impl.h"

namespace vkcnn::detail {

namespace {
void memoryBarrier(ContextImpl& context, VkCommandBuffer cb, VkPipelineStageFlags src,
                   VkAccessFlags srcAccess, VkPipelineStageFlags dst, VkAccessFlags dstAccess) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = srcAccess;
  barrier.dstAccessMask = dstAccess;
  context.vk().vkCmdPipelineBarrier(cb, src, dst, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}
}  // namespace

void transferPrologue(ContextImpl& context, VkCommandBuffer cb) {
  memoryBarrier(context, cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_MEMORY_READ_BIT,
                VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
}

void transferEpilogue(ContextImpl& context, VkCommandBuffer cb) {
  memoryBarrier(context, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT);
}

std::shared_ptr<DeviceBuffer> DeviceBuffer::create(ContextImpl& context, VkDeviceSize size,
                                                   const void* data, const std::string& label,
                                                   bool ownedByContext) {
  context.throwIfLost();  // before any allocation
  // A Context still starting: wait here, and throw its start's error here, before a DeviceBuffer
  // exists (its destructor would otherwise meet that error, and a destructor must not throw).
  context.awaitStart();
  std::shared_ptr<DeviceBuffer> b(new DeviceBuffer(context));
  if (!ownedByContext) b->keepAlive_ = context.shared_from_this();
  b->size_ = size;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  context.check(context.vk().vkCreateBuffer(context.device(), &info, nullptr, &b->buffer_),
                "vkCreateBuffer");
  context.setName(VK_OBJECT_TYPE_BUFFER, b->buffer_, label);
  VkMemoryRequirements req;
  context.vk().vkGetBufferMemoryRequirements(context.device(), b->buffer_, &req);
  b->allocation_ =
      context.allocator().allocate(req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, label.c_str());
  context.check(context.vk().vkBindBufferMemory(context.device(), b->buffer_, b->allocation_.memory,
                                                b->allocation_.offset),
                "vkBindBufferMemory");
  if (data && size) {
    if (UploadBatch* batch = context.uploadBatches().current()) {
      batch->add(b->buffer_, data, size);
      return b;
    }
    PhaseTimer timer(context.loadClock(), LoadPhase::upload);
    context.loadClock().countUpload(size, 1);
    StagingPool::Lease staging = context.staging().acquire(size, label.c_str());
    std::memcpy(staging->data(), data, size);
    staging->flush();
    context.submitAndWait(
        [&](VkCommandBuffer cb) {
          transferPrologue(context, cb);
          VkBufferCopy region{0, 0, size};
          context.vk().vkCmdCopyBuffer(cb, staging->buffer(), b->buffer_, 1, &region);
          transferEpilogue(context, cb);
        },
        "buffer upload");
  }
  return b;
}

DeviceBuffer::~DeviceBuffer() {
  context_->settleAfterLoss();
  if (buffer_) context_->uploadBatches().cancel(buffer_);
  if (buffer_) context_->vk().vkDestroyBuffer(context_->device(), buffer_, nullptr);
  if (allocation_.memory) context_->allocator().free(allocation_);
}

StagingBuffer::StagingBuffer(ContextImpl& context, VkDeviceSize size, const char* what)
    : context_(context), size_(size) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  context.check(context.vk().vkCreateBuffer(context.device(), &info, nullptr, &buffer_),
                "vkCreateBuffer (staging)");
  const std::string name = std::string("staging buffer for ") + what;
  context.setName(VK_OBJECT_TYPE_BUFFER, buffer_, "vkcnn staging buffer");
  VkMemoryRequirements req;
  context.vk().vkGetBufferMemoryRequirements(context.device(), buffer_, &req);
  try {
    allocation_ = context.allocator().allocate(
        req, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, name.c_str());
    context.check(context.vk().vkBindBufferMemory(context.device(), buffer_, allocation_.memory,
                                                  allocation_.offset),
                  "vkBindBufferMemory (staging)");
  } catch (...) {
    context.vk().vkDestroyBuffer(context.device(), buffer_, nullptr);
    context.allocator().free(allocation_);
    throw;
  }
}

StagingBuffer::~StagingBuffer() {
  context_.settleAfterLoss();
  context_.vk().vkDestroyBuffer(context_.device(), buffer_, nullptr);
  context_.allocator().free(allocation_);
}

namespace {

// Applies `sync` (flush or invalidate) to the whole mapping when its memory is not host-coherent.
void syncMapped(ContextImpl& context, const Allocation& allocation,
                PFN_vkFlushMappedMemoryRanges VolkDeviceTable::*sync, const char* call) {
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = allocation.memory;
  range.offset = 0;
  range.size = VK_WHOLE_SIZE;
  if (!(context.memoryProperties().memoryTypes[allocation.memoryType].propertyFlags &
        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
    context.check((context.vk().*sync)(context.device(), 1, &range), call);
}

}  // namespace

void StagingBuffer::flush() {
  syncMapped(context_, allocation_, &VolkDeviceTable::vkFlushMappedMemoryRanges,
             "vkFlushMappedMemoryRanges");
}

void StagingBuffer::invalidate() {
  syncMapped(context_, allocation_, &VolkDeviceTable::vkInvalidateMappedMemoryRanges,
             "vkInvalidateMappedMemoryRanges");
}

StagingPool::Lease StagingPool::acquire(VkDeviceSize size, const char* what) {
  {
    std::lock_guard lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if ((*it)->size() < size) continue;
      std::unique_ptr<StagingBuffer> buffer = std::move(*it);
      free_.erase(it);
      return Lease(*this, std::move(buffer));
    }
  }
  // Powers of two: transfers of similar sizes share buffers instead of each keeping its own.
  VkDeviceSize capacity = kMinimumSize;
  while (capacity < size) capacity *= 2;
  return Lease(*this, std::make_unique<StagingBuffer>(context_, capacity, what));
}

void StagingPool::giveBack(std::unique_ptr<StagingBuffer> buffer) {
  if (!buffer) return;
  std::vector<std::unique_ptr<StagingBuffer>> dropped;  // destroyed outside the lock
  {
    std::lock_guard lock(mutex_);
    auto at = free_.begin();
    while (at != free_.end() && (*at)->size() < buffer->size()) ++at;
    free_.insert(at, std::move(buffer));
    VkDeviceSize kept = 0;
    for (const auto& b : free_) kept += b->size();
    // Keep the largest: a small transfer fits in a large buffer, not the other way round.
    while (!free_.empty() && (free_.size() > kMaxKeptBuffers || kept > kMaxKeptBytes)) {
      kept -= free_.front()->size();
      dropped.push_back(std::move(free_.front()));
      free_.erase(free_.begin());
    }
  }
}

uint64_t StagingPool::cachedBytes() {
  std::lock_guard lock(mutex_);
  uint64_t bytes = 0;
  for (const auto& b : free_) bytes += b->size();
  return bytes;
}

void StagingPool::trim() {
  std::vector<std::unique_ptr<StagingBuffer>> dropped;
  std::lock_guard lock(mutex_);
  dropped.swap(free_);
}

}  // namespace vkcnn::detail
