// A device-local storage buffer filled once from the host (weights, biases, parameters).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory/allocator.h"

namespace vkcnn::detail {

class ContextImpl;

class DeviceBuffer {
 public:
  // `ownedByContext`: the Context itself keeps the buffer, so it must not keep the Context alive
  // (that cycle would leak both).
  static std::shared_ptr<DeviceBuffer> create(ContextImpl& context, VkDeviceSize size,
                                              const void* data, const std::string& label,
                                              bool ownedByContext = false);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  VkBuffer buffer() const { return buffer_; }
  VkDeviceSize size() const { return size_; }

 private:
  explicit DeviceBuffer(ContextImpl& context) : context_(&context) {}
  ContextImpl* context_;
  std::shared_ptr<ContextImpl> keepAlive_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  Allocation allocation_;
};

// A host-visible buffer for host transfers.
class StagingBuffer {
 public:
  // `what`: the transfer it is made for (named in an allocation failure).
  StagingBuffer(ContextImpl& context, VkDeviceSize size, const char* what);
  ~StagingBuffer();
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;
  VkBuffer buffer() const { return buffer_; }
  void* data() const { return allocation_.mapped; }
  VkDeviceSize size() const { return size_; }
  // Makes host writes visible to the device / device writes visible to the host.
  void flush();
  void invalidate();

 private:
  ContextImpl& context_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  Allocation allocation_;
};

// The Context's staging buffers (Filament's stage pool): a host transfer takes the smallest free
// one that is large enough, or makes one, and gives it back when done, so a steady stream of
// transfers allocates nothing. Threads transferring at once each get a buffer of their own.
// Free buffers are kept (a few, up to kMaxKeptBytes) until trim().
class StagingPool {
 public:
  static constexpr VkDeviceSize kMinimumSize = VkDeviceSize(64) << 10;
  static constexpr VkDeviceSize kMaxKeptBytes = VkDeviceSize(64) << 20;
  static constexpr size_t kMaxKeptBuffers = 4;

  // A staging buffer held by one transfer; back to the pool when the lease ends.
  class Lease {
   public:
    Lease(StagingPool& pool, std::unique_ptr<StagingBuffer> buffer)
        : pool_(pool), buffer_(std::move(buffer)) {}
    ~Lease() { pool_.giveBack(std::move(buffer_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    StagingBuffer* operator->() const { return buffer_.get(); }
    StagingBuffer& operator*() const { return *buffer_; }

   private:
    StagingPool& pool_;
    std::unique_ptr<StagingBuffer> buffer_;
  };

  explicit StagingPool(ContextImpl& context) : context_(context) {}
  // A buffer of at least `size` bytes; `what` names the transfer in an allocation failure.
  Lease acquire(VkDeviceSize size, const char* what);
  // Frees the buffers no transfer holds.
  void trim();
  // Bytes of the buffers no transfer holds.
  uint64_t cachedBytes();

 private:
  void giveBack(std::unique_ptr<StagingBuffer> buffer);

  ContextImpl& context_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<StagingBuffer>> free_;  // by size, smallest first
};

// Barriers for one-time transfer submissions: wait for everything before, publish to everything
// after (including the host).
void transferPrologue(ContextImpl& context, VkCommandBuffer commandBuffer);
void transferEpilogue(ContextImpl& context, VkCommandBuffer commandBuffer);

}  // namespace vkcnn::detail
