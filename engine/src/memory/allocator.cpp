#include "memory/allocator.h"

#include <string>

#include "vulkan/context_impl.h"

namespace vkcnn::detail {

namespace {
VkDeviceSize alignUp(VkDeviceSize value, VkDeviceSize alignment) {
  return (value + alignment - 1) / alignment * alignment;
}
}  // namespace

DeviceMemoryAllocator::DeviceMemoryAllocator(ContextImpl& context) : context_(context) {}

DeviceMemoryAllocator::~DeviceMemoryAllocator() {
  for (Block& b : blocks_)
    if (b.memory) context_.vk().vkFreeMemory(context_.device(), b.memory, nullptr);
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
                                                     void** mapped, const char* what) {
  VkMemoryAllocateInfo info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  info.allocationSize = size;
  info.memoryTypeIndex = type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkResult result = context_.vk().vkAllocateMemory(context_.device(), &info, nullptr, &memory);
  if (result != VK_SUCCESS)
    throw Error(ErrorCode::outOfMemory, std::string(what) + ": vkAllocateMemory of " +
                                            std::to_string(size) + " bytes failed (" +
                                            vkResultName(result) + ")");
  *mapped = nullptr;
  if (context_.memoryProperties().memoryTypes[type].propertyFlags &
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
    result = context_.vk().vkMapMemory(context_.device(), memory, 0, VK_WHOLE_SIZE, 0, mapped);
    if (result != VK_SUCCESS) {
      context_.vk().vkFreeMemory(context_.device(), memory, nullptr);
      context_.check(result, "vkMapMemory");
    }
  }
  context_.setName(VK_OBJECT_TYPE_DEVICE_MEMORY, memory, std::string("vkcnn memory: ") + what);
  bytesAllocated_ += size;
  memoryObjects_++;
  return memory;
}

void DeviceMemoryAllocator::releaseMemory(VkDeviceMemory memory, VkDeviceSize size) {
  context_.vk().vkFreeMemory(context_.device(), memory, nullptr);
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
  a.memory = allocateMemory(size, a.memoryType, &a.mapped, what);
  a.size = size;
  liveAllocations_++;
  bytesInUse_ += size;
  return a;
}

Allocation DeviceMemoryAllocator::allocate(const VkMemoryRequirements& req,
                                           VkMemoryPropertyFlags required,
                                           VkMemoryPropertyFlags preferred, const char* what) {
  countRequest(req.size, what);
  if (req.size >= kDedicatedThreshold)
    return allocateDedicatedMemory(req.size, req.memoryTypeBits, required, preferred, what);
  const uint32_t type = chooseType(req.memoryTypeBits, required, preferred, what);
  std::lock_guard lock(mutex_);
  auto tryBlock = [&](uint32_t index) -> Allocation {
    Block& b = blocks_[index];
    for (auto it = b.free.begin(); it != b.free.end(); ++it) {
      VkDeviceSize start = alignUp(it->first, req.alignment);
      VkDeviceSize end = it->first + it->second;
      if (start + req.size > end) continue;
      VkDeviceSize holeStart = it->first;
      b.free.erase(it);
      if (start > holeStart) b.free[holeStart] = start - holeStart;
      if (start + req.size < end) b.free[start + req.size] = end - (start + req.size);
      b.used += req.size;
      Allocation a;
      a.memory = b.memory;
      a.offset = start;
      a.size = req.size;
      a.memoryType = b.memoryType;
      a.block = index;
      a.mapped = b.mapped ? static_cast<char*>(b.mapped) + start : nullptr;
      liveAllocations_++;
      bytesInUse_ += req.size;
      return a;
    }
    return {};
  };
  for (uint32_t i = 0; i < blocks_.size(); ++i) {
    if (!blocks_[i].memory || blocks_[i].memoryType != type) continue;
    if (Allocation a = tryBlock(i)) return a;
  }
  Block block;
  block.size = kBlockSize;
  block.memoryType = type;
  block.memory = allocateMemory(kBlockSize, type, &block.mapped, what);
  block.free[0] = kBlockSize;
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
    releaseMemory(a.memory, a.size);
  } else {
    std::lock_guard lock(mutex_);
    Block& b = blocks_[a.block];
    auto [it, inserted] = b.free.emplace(a.offset, a.size);
    // Coalesce with the neighbours so large holes reappear.
    auto next = std::next(it);
    if (next != b.free.end() && it->first + it->second == next->first) {
      it->second += next->second;
      b.free.erase(next);
    }
    if (it != b.free.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        b.free.erase(it);
      }
    }
    b.used -= a.size;
    if (b.used == 0) {
      // Keep one empty block per memory type: an application that creates and drops small
      // images in a loop must not allocate (and the driver zero) 64 MiB every time.
      bool anotherEmpty = false;
      for (const Block& other : blocks_)
        anotherEmpty |=
            &other != &b && other.memory && other.used == 0 && other.memoryType == b.memoryType;
      if (anotherEmpty) {
        releaseMemory(b.memory, b.size);
        b = Block{};
      }
    }
  }
  a = Allocation{};
}

}  // namespace vkcnn::detail
