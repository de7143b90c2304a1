#include "memory/temporary_pool.h"

#include <algorithm>

#include "vulkan/context_impl.h"

namespace vkcnn::detail {

namespace {
VkDeviceSize alignUp(VkDeviceSize value, VkDeviceSize alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
constexpr VkDeviceSize kBlockGranularity = VkDeviceSize(64) << 10;
}  // namespace

TemporaryBlockCache::~TemporaryBlockCache() {
  trim();
}

Allocation TemporaryBlockCache::take(VkDeviceSize size, uint32_t typeBits) {
  std::lock_guard lock(mutex_);
  // The smallest cached block that fits, so large blocks stay for large temporaries.
  auto best = blocks_.end();
  for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
    if (it->size >= size && (typeBits & (1u << it->memoryType)) &&
        (best == blocks_.end() || it->size < best->size))
      best = it;
  if (best != blocks_.end()) {
    Allocation a = *best;
    blocks_.erase(best);
    cachedBytes_ -= a.size;
    heldBytes_ += a.size;
    return a;
  }
  // A new block. Taking and giving back leave held + cached bytes as they are; only this raises
  // them, so this is where the bound is kept, before the new block is allocated.
  const VkDeviceSize peak = std::max(peakHeldBytes_, heldBytes_ + size);
  // Within a memory budget, cached blocks also go before the new one would break it.
  auto evicted = blocks_.begin();
  while (evicted != blocks_.end() &&
         (heldBytes_ + size + cachedBytes_ > peak || !context_.allocator().fitsBudget(size))) {
    cachedBytes_ -= evicted->size;
    context_.allocator().free(*evicted++);
  }
  blocks_.erase(blocks_.begin(), evicted);
  Allocation a = context_.allocator().allocateDedicated(
      size, typeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, "temporary image pool");
  heldBytes_ += a.size;
  peakHeldBytes_ = std::max(peakHeldBytes_, heldBytes_);
  return a;
}

void TemporaryBlockCache::give(Allocation block) {
  std::lock_guard lock(mutex_);
  heldBytes_ -= block.size;
  cachedBytes_ += block.size;
  blocks_.push_back(block);
}

void TemporaryBlockCache::trim() {
  std::lock_guard lock(mutex_);
  for (Allocation& a : blocks_) context_.allocator().free(a);
  blocks_.clear();
  cachedBytes_ = 0;
  peakHeldBytes_ = heldBytes_;
}

TemporaryPool::~TemporaryPool() {
  recycle();
}

bool TemporaryPool::overlapsUsed(const Block& block, VkDeviceSize offset, VkDeviceSize size) const {
  auto it = block.used.upper_bound(offset);
  if (it != block.used.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second > offset) return true;
  }
  return it != block.used.end() && it->first < offset + size;
}

void TemporaryPool::markUsed(Block& block, VkDeviceSize offset, VkDeviceSize size) {
  VkDeviceSize start = offset, end = offset + size;
  auto it = block.used.lower_bound(start);
  if (it != block.used.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second >= start) it = prev;
  }
  while (it != block.used.end() && it->first <= end) {
    start = std::min(start, it->first);
    end = std::max(end, it->first + it->second);
    it = block.used.erase(it);
  }
  block.used[start] = end - start;
}

TemporaryPool::Slot TemporaryPool::allocate(const VkMemoryRequirements& req) {
  if (recycled_)
    throw Error(ErrorCode::misuse, "temporary pool used after its command buffer completed");
  auto place = [&](uint32_t index) -> Slot {
    Block& b = blocks_[index];
    if (!(req.memoryTypeBits & (1u << b.memory.memoryType))) return {};
    const std::optional<VkDeviceSize> start = b.free.take(req.size, req.alignment);
    if (!start) return {};
    Slot slot{index, *start, req.size, overlapsUsed(b, *start, req.size)};
    markUsed(b, *start, req.size);
    return slot;
  };
  Slot slot;
  for (uint32_t i = 0; i < blocks_.size() && !slot; ++i) slot = place(i);
  if (!slot) {
    const VkDeviceSize size = alignUp(req.size, kBlockGranularity);
    Block block;
    block.memory = context_.temporaryBlocks().take(size, req.memoryTypeBits);
    block.free = FreeList(block.memory.size);
    statistics_.bytesAllocated += block.memory.size;
    blocks_.push_back(std::move(block));
    slot = place(uint32_t(blocks_.size() - 1));
  }
  statistics_.temporariesCreated++;
  if (slot.reused) statistics_.reuses++;
  statistics_.bytesInUse += slot.size;
  statistics_.peakBytesInUse = std::max(statistics_.peakBytesInUse, statistics_.bytesInUse);
  return slot;
}

void TemporaryPool::release(Slot& slot) {
  if (!slot || recycled_) {
    slot = Slot{};
    return;
  }
  blocks_[slot.block].free.give(slot.offset, slot.size);
  statistics_.bytesInUse -= slot.size;
  slot = Slot{};
}

void TemporaryPool::recycle() {
  if (recycled_) return;
  recycled_ = true;
  for (Block& b : blocks_) context_.temporaryBlocks().give(b.memory);
  blocks_.clear();
  statistics_.bytesInUse = 0;
}

}  // namespace vkcnn::detail
