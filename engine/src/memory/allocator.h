// vkcnn's own device-memory allocator (Debian has no VMA): images and buffers are placed in large
// blocks, first fit, so a network of hundreds of tensors needs a handful of VkDeviceMemory objects.
#pragma once

#include <vulkan/vulkan_core.h>

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
  static constexpr VkDeviceSize kBlockSize = VkDeviceSize(64) << 20;
  static constexpr VkDeviceSize kDedicatedThreshold = VkDeviceSize(16) << 20;

  explicit DeviceMemoryAllocator(ContextImpl& context);
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
    std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size, coalesced
    VkDeviceSize used = 0;
  };

  uint32_t chooseType(uint32_t typeBits, VkMemoryPropertyFlags required,
                      VkMemoryPropertyFlags preferred, const char* what) const;
  VkDeviceMemory allocateMemory(VkDeviceSize size, uint32_t type, void** mapped, const char* what);
  void releaseMemory(VkDeviceMemory memory, VkDeviceSize size);

  ContextImpl& context_;
  std::mutex mutex_;
  std::vector<Block> blocks_;
  std::atomic<uint64_t> bytesAllocated_{0};
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
