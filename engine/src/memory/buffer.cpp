#include "vkcnn/buffer.h"

#include <cstring>

#include "memory/device_buffer.h"
#include "vulkan/context_impl.h"

namespace vkcnn {
namespace detail {

// The storage behind Buffers: own device-local memory, or a range of an application's VkBuffer.
class BufferStorage {
 public:
  explicit BufferStorage(std::shared_ptr<ContextImpl> ctx)
      : context(std::move(ctx)), contextHandle(context) {}
  ~BufferStorage() {
    context->settleAfterLoss();  // after a lost device the GPU may still be using the buffer
    if (!wrapped && buffer) context->vk().vkDestroyBuffer(context->device(), buffer, nullptr);
    context->allocator().free(allocation);
  }
  BufferStorage(const BufferStorage&) = delete;
  BufferStorage& operator=(const BufferStorage&) = delete;

  std::string describe() const {
    return (wrapped ? "wrapped buffer '" : "buffer '") + label + "' (" + std::to_string(size) +
           " bytes)";
  }

  std::shared_ptr<ContextImpl> context;
  Context contextHandle;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  VkBufferUsageFlags usage = 0;
  bool wrapped = false;
  BufferStorageMode mode = BufferStorageMode::device;
  Allocation allocation;
  std::string label;
};

namespace {

constexpr VkBufferUsageFlags kBufferUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// Whether the device maps much of its own memory to the host (resizable BAR, unified memory):
// then host-written inputs can live in device-local memory. Without resizable BAR that heap is a
// 256 MiB window the driver needs too, and inputs are better read across the bus from host memory.
bool largeHostVisibleDeviceHeap(const ContextImpl& context) {
  const VkPhysicalDeviceMemoryProperties& p = context.memoryProperties();
  const VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < p.memoryTypeCount; ++i)
    if ((p.memoryTypes[i].propertyFlags & wanted) == wanted &&
        p.memoryHeaps[p.memoryTypes[i].heapIndex].size > (VkDeviceSize(256) << 20))
      return true;
  return false;
}

void checkRange(const BufferStorage& s, size_t bytes, size_t offset, const char* what) {
  if (!bytes || offset > s.size || bytes > s.size - offset)
    throw Error(ErrorCode::invalidArgument, std::string(what) + " " + s.describe() + ": bytes [" +
                                                std::to_string(offset) + ", " +
                                                std::to_string(uint64_t(offset) + bytes) +
                                                ") are empty or outside the buffer");
}

}  // namespace
}  // namespace detail

using detail::BufferStorage;

const char* toString(BufferStorageMode mode) {
  switch (mode) {
    case BufferStorageMode::device:
      return "device";
    case BufferStorageMode::shared:
      return "shared";
  }
  return "unknown";
}

Buffer::Buffer(const Context& context, size_t size, const std::string& label)
    : Buffer(context, size,
             BufferOptions{BufferStorageMode::device, BufferCpuCacheMode::defaultCache, label}) {}

Buffer::Buffer(const Context& context, size_t size, const BufferOptions& options) {
  auto s = std::make_shared<BufferStorage>(context.impl());
  detail::ContextImpl& ctx = *s->context;
  s->label = options.label.empty() ? ctx.uniqueName("buffer") : options.label;
  s->size = size;
  s->usage = detail::kBufferUsage;
  s->mode = options.storageMode;
  if (!size || size % 4)
    throw Error(ErrorCode::invalidArgument,
                s->describe() + ": the size must be a positive multiple of 4 bytes (float32)");
  if (options.storageMode != BufferStorageMode::device &&
      options.storageMode != BufferStorageMode::shared)
    throw Error(ErrorCode::invalidArgument, s->describe() + ": storage mode " +
                                                std::to_string(int(options.storageMode)) +
                                                " does not exist");
  if (options.cpuCacheMode != BufferCpuCacheMode::defaultCache &&
      options.cpuCacheMode != BufferCpuCacheMode::writeCombined)
    throw Error(ErrorCode::invalidArgument, s->describe() + ": CPU cache mode " +
                                                std::to_string(int(options.cpuCacheMode)) +
                                                " does not exist");
  ctx.throwIfLost();  // before any allocation
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = s->usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ctx.check(ctx.vk().vkCreateBuffer(ctx.device(), &info, nullptr, &s->buffer), "vkCreateBuffer");
  ctx.setName(VK_OBJECT_TYPE_BUFFER, s->buffer, s->label);
  VkMemoryRequirements req;
  ctx.vk().vkGetBufferMemoryRequirements(ctx.device(), s->buffer, &req);
  if (s->mode == BufferStorageMode::shared) {
    // Coherent memory needs no flush or invalidate (every device has a HOST_VISIBLE |
    // HOST_COHERENT type); the submission makes host writes visible to the device, and the
    // barrier ImageToBuffer asks for makes device writes visible to the host.
    const VkMemoryPropertyFlags required =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const VkMemoryPropertyFlags preferred =
        options.cpuCacheMode == BufferCpuCacheMode::writeCombined
            ? (detail::largeHostVisibleDeviceHeap(ctx) ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT : 0)
            : VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    s->allocation = ctx.allocator().allocate(req, required, preferred, s->label.c_str());
  } else {
    s->allocation =
        ctx.allocator().allocate(req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, s->label.c_str());
  }
  ctx.check(ctx.vk().vkBindBufferMemory(ctx.device(), s->buffer, s->allocation.memory,
                                        s->allocation.offset),
            "vkBindBufferMemory");
  // Zero-filled, as images are, so a kernel never reads undefined memory.
  if (s->mode == BufferStorageMode::shared) {
    std::memset(s->allocation.mapped, 0, size);  // no submission has used the memory yet
  } else {
    ctx.submitAndWait(
        [&](VkCommandBuffer cb) {
          detail::transferPrologue(ctx, cb);
          ctx.vk().vkCmdFillBuffer(cb, s->buffer, 0, VK_WHOLE_SIZE, 0);
          detail::transferEpilogue(ctx, cb);
        },
        "buffer initialisation");
  }
  storage_ = std::move(s);
}

Buffer Buffer::wrap(const Context& context, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                    VkBufferUsageFlags usage, const std::string& label) {
  if (!buffer) throw Error(ErrorCode::invalidArgument, "Buffer::wrap: the VkBuffer is null");
  if (!size || size % 4 || offset % 4)
    throw Error(ErrorCode::invalidArgument,
                "Buffer::wrap: offset " + std::to_string(offset) + " and size " +
                    std::to_string(size) + " must be multiples of 4 bytes and the size positive");
  if (!(usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT))
    throw Error(ErrorCode::invalidArgument,
                "Buffer::wrap: the buffer needs VK_BUFFER_USAGE_STORAGE_BUFFER_BIT");
  auto s = std::make_shared<BufferStorage>(context.impl());
  s->label = label.empty() ? s->context->uniqueName("wrapped buffer") : label;
  s->buffer = buffer;
  s->offset = offset;
  s->size = size;
  s->usage = usage;
  s->wrapped = true;
  Buffer b;
  b.storage_ = std::move(s);
  return b;
}

namespace {
const BufferStorage& checked(const std::shared_ptr<BufferStorage>& s, const char* what) {
  if (!s) throw Error(ErrorCode::invalidArgument, std::string(what) + " on an empty Buffer handle");
  return *s;
}
}  // namespace

size_t Buffer::size() const {
  return size_t(checked(storage_, "size").size);
}
const std::string& Buffer::label() const {
  return checked(storage_, "label").label;
}
bool Buffer::isWrapped() const {
  return checked(storage_, "isWrapped").wrapped;
}
VkBuffer Buffer::vkBuffer() const {
  return checked(storage_, "vkBuffer").buffer;
}
VkDeviceSize Buffer::vkOffset() const {
  return checked(storage_, "vkOffset").offset;
}
const Context& Buffer::context() const {
  return checked(storage_, "context").contextHandle;
}
BufferStorageMode Buffer::storageMode() const {
  return checked(storage_, "storageMode").mode;
}

namespace {
void* mappedContents(const std::shared_ptr<BufferStorage>& storage) {
  const BufferStorage& s = checked(storage, "contents");
  if (s.mode != BufferStorageMode::shared)
    throw Error(ErrorCode::invalidArgument,
                "contents of " + s.describe() + ": the host cannot address a " +
                    (s.wrapped ? "wrapped" : "device-local") +
                    " buffer; make it with BufferStorageMode::shared, or use read() and write()");
  return s.allocation.mapped;
}
}  // namespace

void* Buffer::contents() {
  return mappedContents(storage_);
}
const void* Buffer::contents() const {
  return mappedContents(storage_);
}

void Buffer::write(const void* data, size_t bytes, size_t offset) {
  const BufferStorage& s = checked(storage_, "write");
  detail::checkRange(s, bytes, offset, "write to");
  if (!data) throw Error(ErrorCode::invalidArgument, "write to " + s.describe() + ": data is null");
  if (!(s.usage & VK_BUFFER_USAGE_TRANSFER_DST_BIT))
    throw Error(ErrorCode::unsupported,
                "write to " + s.describe() + ": the buffer lacks VK_BUFFER_USAGE_TRANSFER_DST_BIT");
  detail::ContextImpl& ctx = *s.context;
  if (s.mode == BufferStorageMode::shared) {
    // The fence of an empty submission signals once all earlier submissions have completed, so
    // no kernel still reads the bytes; the next submission makes the host's writes visible.
    ctx.submitAndWait([](VkCommandBuffer) {}, "buffer write");
    std::memcpy(static_cast<char*>(s.allocation.mapped) + offset, data, bytes);
    return;
  }
  detail::StagingPool::Lease staging = ctx.staging().acquire(bytes, s.label.c_str());
  std::memcpy(staging->data(), data, bytes);
  staging->flush();
  ctx.submitAndWait(
      [&](VkCommandBuffer cb) {
        detail::transferPrologue(ctx, cb);
        VkBufferCopy region{0, s.offset + offset, bytes};
        ctx.vk().vkCmdCopyBuffer(cb, staging->buffer(), s.buffer, 1, &region);
        detail::transferEpilogue(ctx, cb);
      },
      "buffer upload");
}

void Buffer::read(void* data, size_t bytes, size_t offset) const {
  const BufferStorage& s = checked(storage_, "read");
  detail::checkRange(s, bytes, offset, "read from");
  if (!data)
    throw Error(ErrorCode::invalidArgument, "read from " + s.describe() + ": data is null");
  if (!(s.usage & VK_BUFFER_USAGE_TRANSFER_SRC_BIT))
    throw Error(ErrorCode::unsupported, "read from " + s.describe() +
                                            ": the buffer lacks VK_BUFFER_USAGE_TRANSFER_SRC_BIT");
  detail::ContextImpl& ctx = *s.context;
  if (s.mode == BufferStorageMode::shared) {
    // Waits for all earlier submissions and makes their writes visible to the host.
    ctx.submitAndWait(
        [&](VkCommandBuffer cb) {
          VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
          barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
          barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
          ctx.vk().vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                        VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0,
                                        nullptr);
        },
        "buffer read");
    std::memcpy(data, static_cast<const char*>(s.allocation.mapped) + offset, bytes);
    return;
  }
  detail::StagingPool::Lease staging = ctx.staging().acquire(bytes, s.label.c_str());
  ctx.submitAndWait(
      [&](VkCommandBuffer cb) {
        detail::transferPrologue(ctx, cb);
        VkBufferCopy region{s.offset + offset, 0, bytes};
        ctx.vk().vkCmdCopyBuffer(cb, s.buffer, staging->buffer(), 1, &region);
        detail::transferEpilogue(ctx, cb);
      },
      "buffer download");
  staging->invalidate();
  std::memcpy(data, staging->data(), bytes);
}

void Buffer::writeFloats(std::span<const float> data, size_t firstFloat) {
  write(data.data(), data.size_bytes(), firstFloat * sizeof(float));
}

std::vector<float> Buffer::readFloats(size_t firstFloat, size_t count) const {
  const size_t total = floatCount();
  if (count == SIZE_MAX) count = firstFloat < total ? total - firstFloat : 0;
  std::vector<float> out(count);
  read(out.data(), count * sizeof(float), firstFloat * sizeof(float));
  return out;
}

}  // namespace vkcnn
