#include "memory/allocator.h"

#include <algorithm>
#include <string>

#include "vulkan/context_impl.h"

namespace vkcnn::detail {

namespace {
VkDeviceSize alignUp(VkDeviceSize value, VkDeviceSize alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
}  // namespace

VkDeviceSize DeviceMemoryAllocator::defaultBlockSize(
    const VkPhysicalDeviceMemoryProperties& properties) {
  VkDeviceSize largest = 0;
  for (uint32_t i = 0; i < properties.memoryHeapCount; ++i)
    if (properties.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      largest = std::max(largest, properties.memoryHeaps[i].size);
  const VkDeviceSize lo = VkDeviceSize(4) << 20, hi = VkDeviceSize(256) << 20;
  VkDeviceSize size = lo;
  while (size * 2 <= std::min(hi, largest / 64)) size *= 2;
  return size;
}

DeviceMemoryAllocator::DeviceMemoryAllocator(ContextImpl& context, Options options)
    : context_(context), options_(std::move(options)) {}

DeviceMemoryAllocator::~DeviceMemoryAllocator() {
  for (Block& b : blocks_)
    if (b.memory) releaseMemory(b.memory, b.size, b.memoryType, b.mapped != nullptr);
}

VkDeviceSize DeviceMemoryAllocator::newBlockSize(uint32_t type, VkDeviceSize size) const {
  VkDeviceSize held = 0;
  for (const Block& b : blocks_)
    if (b.memory && b.memoryType == type) held += b.size;
  const VkDeviceSize first =
      std::min(options_.blockSize, std::max(options_.blockSize / 64, VkDeviceSize(256) << 10));
  const VkDeviceSize grown = std::clamp(held, first, options_.blockSize);
  return std::max(grown, alignUp(size, kMinimumBlockSize));
}

void DeviceMemoryAllocator::releaseEmptyBlocks() {
  std::lock_guard lock(mutex_);
  releaseEmptyBlocksLocked();
}

void DeviceMemoryAllocator::releaseEmptyBlocksLocked() {
  for (Block& b : blocks_)
    if (b.memory && b.used == 0) {
      releaseMemory(b.memory, b.size, b.memoryType, b.mapped != nullptr);
      b = Block{};
    }
}

uint64_t DeviceMemoryAllocator::emptyBlockBytes() {
  std::lock_guard lock(mutex_);
  uint64_t bytes = 0;
  for (const Block& b : blocks_)
    if (b.memory && b.used == 0) bytes += b.size;
  return bytes;
}

uint32_t DeviceMemoryAllocator::chooseType(uint32_t typeBits, VkMemoryPropertyFlags required,
                                           VkMemoryPropertyFlags preferred,
                                           const char* what) const {
  const auto& props = context_.memoryProperties();
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    if (!(typeBits & (1u << i))) continue;
    VkMemoryPropertyFlags flags = props.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback == UINT32_MAX) fallback = i;
  }
  if (fallback == UINT32_MAX)
    throw Error(ErrorCode::unsupported,
                std::string(what) + ": no memory type with the required properties");
  return fallback;
}

void DeviceMemoryAllocator::countRequest(VkDeviceSize size, const char* what) {
  requests_++;
  // Exactly one caller sees the count reach zero, even when threads race.
  uint64_t n = failAfter_.load();
  while (n > 0 && !failAfter_.compare_exchange_weak(n, n - 1)) {
  }
  if (n == 1)
    throw Error(
        ErrorCode::outOfMemory,
        std::string(what) + ": allocation of " + std::to_string(size) +
            " bytes of device memory failed (injected by Context::injectAllocationFailure)");
}

VkDeviceMemory DeviceMemoryAllocator::allocateMemory(VkDeviceSize size, uint32_t type,
                                                     void** mapped, const char* what, bool locked) {
  // The bytes are reserved before the allocation, so threads racing for the last bytes of the
  // budget cannot both pass.
  auto reserve = [&] {
    uint64_t now = bytesAllocated_.load();
    do {
      if (options_.budget && now + size > options_.budget) return false;
    } while (!bytesAllocated_.compare_exchange_weak(now, now + size));
    return true;
  };
  if (!reserve()) {
    // Empty blocks are only kept for reuse: they go first.
    if (locked) {
      releaseEmptyBlocksLocked();
    } else {
      std::lock_guard lock(mutex_);
      releaseEmptyBlocksLocked();
    }
    if (!reserve())
      throw Error(ErrorCode::outOfMemory,
                  std::string(what) + ": " + std::to_string(size) +
                      " more bytes of device memory would exceed the Context's budget of " +
                      std::to_string(options_.budget) + " bytes (ContextOptions::memoryBudget; " +
                      std::to_string(bytesAllocated_.load()) + " bytes allocated)");
  }
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = size;
  info.memoryTypeIndex = type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkResult result;
  if (options_.callbacks.allocate) {
    std::lock_guard lock(callbackMutex_);
    result = options_.callbacks.allocate(context_.device(), info, &memory);
    if (result == VK_SUCCESS && memory == VK_NULL_HANDLE) result = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  } else {
    result = context_.vk().vkAllocateMemory(context_.device(), &info, nullptr, &memory);
  }
  if (result != VK_SUCCESS) {
    bytesAllocated_ -= size;
    throw Error(ErrorCode::outOfMemory,
                std::string(what) + ": " +
                    (options_.callbacks.allocate ? "the application's allocate callback"
                                                 : "vkAllocateMemory") +
                    " of " + std::to_string(size) + " bytes failed (" + vkResultName(result) + ")");
  }
  *mapped = nullptr;
  if (context_.memoryProperties().memoryTypes[type].propertyFlags &
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    result = context_.vk().vkMapMemory(context_.device(), memory, 0, VK_WHOLE_SIZE, 0, mapped);
    if (result != VK_SUCCESS) {
      memoryObjects_++;
      releaseMemory(memory, size, type, false);
      context_.check(result, "vkMapMemory");
    }
  }
  context_.setName(VK_OBJECT_TYPE_DEVICE_MEMORY, memory, std::string("vkcnn memory: ") + what);
  memoryObjects_++;
  uint64_t peak = peakBytesAllocated_.load(), now = bytesAllocated_.load();
  while (now > peak && !peakBytesAllocated_.compare_exchange_weak(peak, now)) {
  }
  return memory;
}

void DeviceMemoryAllocator::releaseMemory(VkDeviceMemory memory, VkDeviceSize size, uint32_t type,
                                          bool mapped) {
  if (options_.callbacks.free) {
    // The application may hand the memory out again: it must come back unmapped.
    if (mapped) context_.vk().vkUnmapMemory(context_.device(), memory);
    std::lock_guard lock(callbackMutex_);
    options_.callbacks.free(context_.device(), memory, size, type);
  } else {
    context_.vk().vkFreeMemory(context_.device(), memory, nullptr);
  }
  bytesAllocated_ -= size;
  memoryObjects_--;
}

Allocation DeviceMemoryAllocator::allocateDedicated(VkDeviceSize size, uint32_t typeBits,
                                                    VkMemoryPropertyFlags required,
                                                    VkMemoryPropertyFlags preferred,
                                                    const char* what) {
  countRequest(size, what);
  return allocateDedicatedMemory(size, typeBits, required, preferred, what);
}

Allocation DeviceMemoryAllocator::allocateDedicatedMemory(VkDeviceSize size, uint32_t typeBits,
                                                          VkMemoryPropertyFlags required,
                                                          VkMemoryPropertyFlags preferred,
                                                          const char* what) {
  Allocation a;
  a.memoryType = chooseType(typeBits, required, preferred, what);
  a.memory = allocateMemory(size, a.memoryType, &a.mapped, what, false);
  a.size = size;
  liveAllocations_++;
  bytesInUse_ += size;
  return a;
}

Allocation DeviceMemoryAllocator::allocate(const VkMemoryRequirements& req,
                                           VkMemoryPropertyFlags required,
                                           VkMemoryPropertyFlags preferred, const char* what) {
  countRequest(req.size, what);
  if (req.size >= options_.blockSize / 2)
    return allocateDedicatedMemory(req.size, req.memoryTypeBits, required, preferred, what);
  const uint32_t type = chooseType(req.memoryTypeBits, required, preferred, what);
  // Buffers and optimally tiled images share blocks: keeping every range on
  // bufferImageGranularity boundaries keeps neighbours of the other kind on separate pages.
  const VkDeviceSize granularity = std::max<VkDeviceSize>(options_.bufferImageGranularity, 1);
  const VkDeviceSize alignment = std::max(req.alignment, granularity);
  const VkDeviceSize size = alignUp(req.size, granularity);
  std::lock_guard lock(mutex_);
  auto tryBlock = [&](uint32_t index) -> Allocation {
    Block& b = blocks_[index];
    const std::optional<VkDeviceSize> start = b.free.take(size, alignment);
    if (!start) return {};
    b.used += size;
    Allocation a;
    a.memory = b.memory;
    a.offset = *start;
    a.size = size;
    a.memoryType = b.memoryType;
    a.block = index;
    a.mapped = b.mapped ? static_cast<char*>(b.mapped) + *start : nullptr;
    liveAllocations_++;
    bytesInUse_ += size;
    return a;
  };
  for (uint32_t i = 0; i < blocks_.size(); ++i) {
    if (!blocks_[i].memory || blocks_[i].memoryType != type) continue;
    if (Allocation a = tryBlock(i)) return a;
  }
  Block block;
  block.size = newBlockSize(type, size + alignment);
  block.memoryType = type;
  block.memory = allocateMemory(block.size, type, &block.mapped, what, true);
  block.free = FreeList(block.size);
  uint32_t index = 0;
  while (index < blocks_.size() && blocks_[index].memory) ++index;
  if (index == blocks_.size()) blocks_.push_back({});
  blocks_[index] = std::move(block);
  return tryBlock(index);
}

void DeviceMemoryAllocator::free(Allocation& a) {
  if (!a) return;
  liveAllocations_--;
  bytesInUse_ -= a.size;
  if (a.block == UINT32_MAX) {
    releaseMemory(a.memory, a.size, a.memoryType, a.mapped != nullptr);
  } else {
    std::lock_guard lock(mutex_);
    Block& b = blocks_[a.block];
    b.free.give(a.offset, a.size);
    b.used -= a.size;
    if (b.used == 0) {
      // Keep one empty block per memory type, the larger: an application that creates and drops
      // images in a loop must not allocate (and the driver zero) a block every time.
      // trimTemporaryMemory() frees it.
      for (Block& other : blocks_)
        if (&other != &b && other.memory && other.used == 0 && other.memoryType == b.memoryType) {
          Block& smaller = other.size < b.size ? other : b;
          releaseMemory(smaller.memory, smaller.size, smaller.memoryType,
                        smaller.mapped != nullptr);
          smaller = Block{};
          break;
        }
    }
  }
  a = Allocation{};
}

}  // namespace vkcnn::detail
