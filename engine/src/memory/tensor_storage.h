// The storage behind Tensors: one VkBuffer of float16 or float32 elements, with memory of its own
// (persistent) or from a CommandBuffer's temporary pool (temporary: bound when a kernel first
// writes it, given back when its readCount reaches zero).
#pragma once

#include <memory>
#include <string>

#include "memory/allocator.h"
#include "memory/temporary_pool.h"
#include "vkcnn/tensor.h"

namespace vkcnn::detail {

class ContextImpl;
class CommandBufferImpl;

class TensorStorage {
 public:
  // `elements`: checked by the caller (Tensor) to be positive and addressable.
  TensorStorage(std::shared_ptr<ContextImpl> context, uint64_t elements, TensorDataType dataType,
                std::string label, bool temporary);
  ~TensorStorage();
  TensorStorage(const TensorStorage&) = delete;
  TensorStorage& operator=(const TensorStorage&) = delete;

  VkDeviceSize bytes() const { return elements * bytesPerElement(dataType); }
  std::string describe() const;  // "tensor 'label' (float32, 24 elements)" for messages
  // Temporaries: binds pool memory (once); true if that memory aliases an earlier temporary's.
  bool bindTemporary(CommandBufferImpl& commandBuffer);

  std::shared_ptr<ContextImpl> context;
  Context contextHandle;
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t elements = 0;
  TensorDataType dataType = TensorDataType::float32;
  std::string label;
  Allocation allocation;  // persistent storage

  bool temporary = false;
  std::weak_ptr<CommandBufferImpl> owner;
  uint32_t readCount = 1;
  bool released = false;
  bool bound = false;
  bool written = false;
  TemporaryPool::Slot slot;
};

}  // namespace vkcnn::detail
