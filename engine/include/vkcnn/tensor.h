// Tensor: an N-dimensional array of float16 or float32 elements in a device storage buffer
// (MPSNDArray), for the values of a network that do not fit the image layout (channels in
// 4-channel layers): NHWC tensors, [N, anchors, 4] detection outputs, [N, T, C] sequences.
//
// A Tensor has rank 1 to kMaxTensorRank, an extent per axis (outermost first) and a stride per
// axis in elements. A tensor made from a descriptor is contiguous and row-major; reshape, slice
// and permute make views that share its storage without copying (a view's strides may be
// anything, even negative after a slice with a negative step). Kernels read any view and write
// any view whose elements do not overlap.
//
// Tensor is a handle like Image: copies and views share storage. TemporaryTensor takes its memory
// from a CommandBuffer's temporary pool, the same memory TemporaryImages draw from, with the same
// readCount rules.
//
// Threads: as Image (several readers at once; a writer needs the tensor to itself).
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/export.h"

namespace vkcnn {

namespace detail {
class TensorStorage;
}

// The most axes a Tensor has (the shaders' index arithmetic is unrolled to it).
inline constexpr uint32_t kMaxTensorRank = 8;

// Element type of a Tensor. Kernels compute in float32 whatever the storage; float16 storage
// needs the device's storageBuffer16BitAccess.
enum class TensorDataType {
  float16,  // 2 bytes, IEEE half
  float32,  // 4 bytes
};

// "float16" or "float32", and 2 or 4.
VKCNN_API const char* toString(TensorDataType type);
VKCNN_API uint32_t bytesPerElement(TensorDataType type);

// What a Tensor is made with.
struct TensorDescriptor {
  std::vector<uint32_t> shape;  // extents, outermost axis first; 1 to kMaxTensorRank axes
  TensorDataType dataType = TensorDataType::float32;  // element type
  std::string label;                                  // names it in messages and validation output
};

// An N-dimensional array in a device buffer (MPSNDArray): a handle that shares its storage, or
// a strided view of another's.
class VKCNN_API Tensor {
 public:
  Tensor() = default;  // an empty handle; valid() is false
  // A contiguous row-major tensor, allocated at once and zero-filled. A rank outside 1..8, a zero
  // extent or more elements than the shaders address (2^31 - 1) or the device binds
  // (maxStorageBufferRange) are errors.
  Tensor(const Context& context, const TensorDescriptor& descriptor);

  // Whether it refers to a tensor; its axes and their extents, outermost first.
  bool valid() const { return storage_ != nullptr; }
  uint32_t rank() const { return uint32_t(shape_.size()); }
  const std::vector<uint32_t>& shape() const { return shape_; }
  // Strides in elements, one per axis.
  const std::vector<int64_t>& strides() const { return strides_; }
  // Extent of `axis`; a negative axis counts from the end (-1 is the innermost).
  uint32_t dimension(int32_t axis) const;
  uint64_t elementCount() const;
  // Where the view's element [0, ..., 0] lies in the storage, in elements.
  uint64_t storageOffset() const { return offset_; }
  TensorDataType dataType() const;
  bool isContiguous() const;  // row-major without gaps
  const std::string& label() const;
  void setLabel(const std::string& label);
  bool isTemporary() const;
  // Bytes of device memory behind the storage; 0 for temporaries until they are first written.
  size_t resourceSize() const;
  const Context& context() const;

  // Views sharing this tensor's storage. reshape: the same elements in row-major order under
  // another shape (one extent may be -1: inferred); needs a contiguous view. permute: axis i of
  // the view is axis perm[i] of this one. slice: elements start, start+step, ... before end along
  // `axis` (ONNX Slice: negative start and end count from the end and are clamped; a negative step
  // walks backwards); an empty result is an error.
  Tensor reshape(const std::vector<int64_t>& shape) const;
  Tensor permute(const std::vector<uint32_t>& perm) const;
  Tensor slice(int32_t axis, int64_t start, int64_t end, int64_t step = 1) const;
  // numpy broadcast to `shape` (ONNX Expand): extent-1 axes stretch with stride 0, new axes are
  // added in front. Such a view is read-only: kernels and writeFloats refuse to write it.
  Tensor broadcast(const std::vector<uint32_t>& shape) const;
  // Whether two elements of the view share storage (a broadcast view).
  bool hasOverlap() const;

  // Host transfers of the whole view in row-major order, converted from/to float32 (float16
  // storage rounds to nearest even; finite values beyond +-65504 saturate). They wait for the
  // device as Image's do.
  void writeFloats(std::span<const float> data);
  std::vector<float> readFloats() const;

  // The VkBuffer behind the storage (for kernels and applications).
  VkBuffer vkBuffer() const;
  const std::shared_ptr<detail::TensorStorage>& storage() const { return storage_; }

 protected:
  Tensor(std::shared_ptr<detail::TensorStorage> storage, std::vector<uint32_t> shape,
         std::vector<int64_t> strides, uint64_t offset);

  std::shared_ptr<detail::TensorStorage> storage_;
  std::vector<uint32_t> shape_;
  std::vector<int64_t> strides_;
  uint64_t offset_ = 0;
};

// Short-lived tensor (MPSTemporaryNDArray), valid only while its CommandBuffer is being encoded:
// each kernel that reads it, or decrementReadCount(), lowers readCount, and at zero its memory
// goes back to the CommandBuffer's pool. The host cannot read or write it. Views share readCount.
class VKCNN_API TemporaryTensor : public Tensor {
 public:
  TemporaryTensor() = default;  // an empty handle
  // A temporary of `commandBuffer`, its memory taken from the pool when first written; readCount 1.
  TemporaryTensor(const CommandBuffer& commandBuffer, const TensorDescriptor& descriptor);
  // Treats a Tensor known to be temporary as one (throws if it is not).
  explicit TemporaryTensor(const Tensor& tensor);

  // The reads left before its memory goes back to the pool: set it to the number of kernels that
  // will read it; decrementReadCount() gives up one read without a kernel.
  uint32_t readCount() const;
  void setReadCount(uint32_t readCount);
  void decrementReadCount();
};

}  // namespace vkcnn
