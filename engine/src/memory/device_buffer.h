// A device-local storage buffer filled once from the host (weights, biases, parameters).
#pragma once

#include <memory>
#include <string>

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

// A host-visible buffer for one transfer.
class StagingBuffer {
 public:
  StagingBuffer(ContextImpl& context, VkDeviceSize size, const char* what);
  ~StagingBuffer();
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;
  VkBuffer buffer() const { return buffer_; }
  void* data() const { return allocation_.mapped; }
  // Makes host writes visible to the device / device writes visible to the host.
  void flush();
  void invalidate();

 private:
  ContextImpl& context_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  Allocation allocation_;
};

// Barriers for one-time transfer submissions: wait for everything before, publish to everything
// after (including the host).
void transferPrologue(ContextImpl& context, VkCommandBuffer commandBuffer);
void transferEpilogue(ContextImpl& context, VkCommandBuffer commandBuffer);

}  // namespace vkcnn::detail
