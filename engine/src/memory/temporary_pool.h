// The memory pool of one CommandBuffer's TemporaryImages. Temporaries are placed first-fit in
// blocks; a temporary whose readCount reaches zero gives its range back at once, so the next one
// can alias it (with the barrier and UNDEFINED transition that makes that correct). Blocks go back
// to the Context when the CommandBuffer completes and are reused by later CommandBuffers.
#pragma once

#include <vulkan/vulkan_core.h>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "memory/allocator.h"
#include "memory/free_list.h"
#include "vkcnn/command_buffer.h"

namespace vkcnn::detail {

class ContextImpl;

// Blocks returned by completed CommandBuffers, kept by the Context for the next ones. Bounded: the
// blocks held by command buffers plus the cached ones never exceed the most that command buffers
// have held at once (since the last trim). Without that bound, temporaries that grow over time
// (larger inputs, other networks) would leave every smaller block behind in the cache: a fuzz run
// of varied shapes kept 10 GB of blocks for at most 3.7 GB in use at once.
class TemporaryBlockCache {
 public:
  explicit TemporaryBlockCache(ContextImpl& context) : context_(context) {}
  ~TemporaryBlockCache();
  // The smallest cached block of at least `size` bytes with a type in `typeBits`, else a new
  // block of exactly `size` bytes, after freeing the cached blocks least recently given back that
  // the bound no longer allows. Throws Error(outOfMemory) as the allocator does.
  Allocation take(VkDeviceSize size, uint32_t typeBits);
  // A block from take() is back (its command buffer completed).
  void give(Allocation block);
  // Frees every cached block; the bound starts again from the blocks held now.
  void trim();
  uint64_t cachedBytes() {
    std::lock_guard lock(mutex_);
    return cachedBytes_;
  }

 private:
  ContextImpl& context_;
  std::mutex mutex_;
  std::vector<Allocation> blocks_;  // least recently given back first
  VkDeviceSize cachedBytes_ = 0;
  VkDeviceSize heldBytes_ = 0;      // in blocks taken and not given back
  VkDeviceSize peakHeldBytes_ = 0;  // the most heldBytes_ has been since the last trim
};

class TemporaryPool {
 public:
  struct Slot {
    uint32_t block = UINT32_MAX;
    VkDeviceSize offset = 0, size = 0;
    bool reused = false;  // overlaps memory an earlier temporary of this pool used
    explicit operator bool() const { return block != UINT32_MAX; }
  };

  explicit TemporaryPool(ContextImpl& context) : context_(context) {}
  ~TemporaryPool();

  Slot allocate(const VkMemoryRequirements& requirements);
  void release(Slot& slot);
  VkDeviceMemory memory(const Slot& slot) const { return blocks_[slot.block].memory.memory; }
  // Gives every block back to the Context (the CommandBuffer completed); later releases no-op.
  void recycle();
  const TemporaryPoolStatistics& statistics() const { return statistics_; }

 private:
  struct Block {
    Allocation memory;
    FreeList free;
    std::map<VkDeviceSize, VkDeviceSize> used;  // ranges ever handed out (coalesced)
  };
  bool overlapsUsed(const Block& block, VkDeviceSize offset, VkDeviceSize size) const;
  void markUsed(Block& block, VkDeviceSize offset, VkDeviceSize size);

  ContextImpl& context_;
  std::vector<Block> blocks_;
  bool recycled_ = false;
  TemporaryPoolStatistics statistics_;
};

}  // namespace vkcnn::detail
