// vkcnn's own device-memory allocator (Debian has no VMA): images and buffers are placed in shared
// blocks, first fit, so a network of hundreds of tensors needs a handful of VkDeviceMemory objects.
// Blocks grow per memory type (the first is small, each new one doubles what the type holds, up to
// the block size), so one small image costs a small block. The budget, the application's
// allocation callbacks and the memory statistics all sit here, since every VkDeviceMemory of a
// Context comes through this class.
#pragma once

#include <vulkan/vulkan_core.h>

#include "memory/free_list.h"
#include "vkcnn/context.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace vkcnn::detail {

class ContextImpl;

struct Allocation {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  void* mapped = nullptr;  // host address of `offset` when the memory is host visible
  uint32_t memoryType = 0;
  uint32_t block = UINT32_MAX;  // UINT32_MAX: a memory object of its own
  explicit operator bool() const { return memory != VK_NULL_HANDLE; }
};

class DeviceMemoryAllocator {
 public:
  static constexpr VkDeviceSize kMinimumBlockSize = VkDeviceSize(64) << 10;

  struct Options {
    VkDeviceSize blockSize = 0;  // the largest shared block
    VkDeviceSize budget = 0;     // 0: none
    VkDeviceSize bufferImageGranularity = 1;
    DeviceMemoryCallbacks callbacks;
  };
  // The default block size for a device: 1/64 of its largest device-local heap, a power of two
  // between 4 MiB and 256 MiB.
  static VkDeviceSize defaultBlockSize(const VkPhysicalDeviceMemoryProperties& properties);

  DeviceMemoryAllocator(ContextImpl& context, Options options);
  ~DeviceMemoryAllocator();

  // Memory for an image or buffer: `required` property flags must be present, `preferred` ones
  // are taken when some type has them. Throws Error(outOfMemory) naming `what`.
  Allocation allocate(const VkMemoryRequirements& requirements, VkMemoryPropertyFlags required,
                      VkMemoryPropertyFlags preferred, const char* what);
  // A memory object of exactly `size` bytes (temporary pool blocks sub-allocate it themselves).
  Allocation allocateDedicated(VkDeviceSize size, uint32_t memoryTypeBits,
                               VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
                               const char* what);
  void free(Allocation& allocation);

  // Frees every shared block that holds nothing.
  void releaseEmptyBlocks();
  // Whether `size` more bytes of VkDeviceMemory stay within the budget.
  bool fitsBudget(VkDeviceSize size) const {
    return options_.budget == 0 || bytesAllocated_.load() + size <= options_.budget;
  }
  VkDeviceSize blockSize() const { return options_.blockSize; }
  VkDeviceSize budget() const { return options_.budget; }
  // Bytes of shared blocks that hold nothing.
  uint64_t emptyBlockBytes();
  uint64_t peakBytesAllocated() const { return peakBytesAllocated_.load(); }

  uint64_t bytesAllocated() const { return bytesAllocated_.load(); }
  uint32_t memoryObjectCount() const { return memoryObjects_.load(); }
  // Allocations handed out and not freed yet, and their bytes (sub-allocations included).
  uint32_t liveAllocations() const { return liveAllocations_.load(); }
  uint64_t bytesInUse() const { return bytesInUse_.load(); }
  // Calls of allocate() and allocateDedicated() so far, failed ones included.
  uint64_t requestCount() const { return requests_.load(); }
  // Test hook (Context::injectAllocationFailure): the `n`th allocate()/allocateDedicated() call
  // from now on throws Error(outOfMemory) before touching anything, whether or not it would have
  // needed a new VkDeviceMemory; 0 disarms. Every user of device memory (images, weight buffers,
  // staging buffers, temporary-pool blocks) comes through here, so this reaches each of them.
  void failAllocationAfter(uint64_t n) { failAfter_ = n; }

 private:
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    uint32_t memoryType = 0;
    void* mapped = nullptr;
    FreeList free;
    VkDeviceSize used = 0;
  };

  uint32_t chooseType(uint32_t typeBits, VkMemoryPropertyFlags required,
                      VkMemoryPropertyFlags preferred, const char* what) const;
  // `locked`: mutex_ is held by the caller (empty blocks may then be freed to stay in budget).
  VkDeviceMemory allocateMemory(VkDeviceSize size, uint32_t type, void** mapped, const char* what,
                                bool locked);
  void releaseMemory(VkDeviceMemory memory, VkDeviceSize size, uint32_t type, bool mapped);
  void releaseEmptyBlocksLocked();
  // The size of a new shared block of `type` that must hold `size` bytes.
  VkDeviceSize newBlockSize(uint32_t type, VkDeviceSize size) const;

  ContextImpl& context_;
  const Options options_;
  std::mutex mutex_;
  std::mutex callbackMutex_;  // the application's callbacks are never called concurrently
  std::vector<Block> blocks_;
  std::atomic<uint64_t> bytesAllocated_{0};
  std::atomic<uint64_t> peakBytesAllocated_{0};
  std::atomic<uint32_t> memoryObjects_{0};
  void countRequest(VkDeviceSize size, const char* what);
  Allocation allocateDedicatedMemory(VkDeviceSize size, uint32_t memoryTypeBits,
                                     VkMemoryPropertyFlags required,
                                     VkMemoryPropertyFlags preferred, const char* what);

  std::atomic<uint64_t> failAfter_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint32_t> liveAllocations_{0};
  std::atomic<uint64_t> bytesInUse_{0};
};

}  // namespace vkcnn::detail
