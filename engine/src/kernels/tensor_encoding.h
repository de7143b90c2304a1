// What the tensor kernels share on the host: checks that operands may be used, binding their
// storage, index spaces (shapes with one stride vector per operand, simplified before they go to
// the shader) and flat dispatches.
#pragma once

#include <string>
#include <vector>

#include "kernels/kernel_encoding.h"
#include "memory/tensor_storage.h"
#include "tensor_interface.h"
#include "vkcnn/error.h"
#include "vkcnn/tensor.h"

namespace vkcnn::detail {

std::string shapeText(const std::vector<uint32_t>& shape);

// Throws unless `tensor` may be read (or written) by a kernel in `commandBuffer` now (as
// checkUsable for images).
void checkUsable(const CommandBufferImpl& commandBuffer, const Tensor& tensor, bool write,
                 const std::string& what);
// A temporary source has been read by one more kernel.
void consumeRead(const Tensor& tensor);
// Every operand has `type` (the first operand's), or invalidArgument.
void requireDataType(const Tensor& tensor, TensorDataType type, const char* role,
                     const std::string& what);
// Throws invalidArgument when `destination` shares storage elements with `source`.
void requireNotInPlace(const Tensor& source, const Tensor& destination, const std::string& what);
void requireShape(const Tensor& tensor, const std::vector<uint32_t>& shape, const char* role,
                  const std::string& what);

ShaderVariant variantFor(TensorDataType type);

// Binds the elements `tensor` spans at `binding` and returns where the view's element [0, .., 0]
// is inside the bound range (args[k].offset). A temporary destination gets its pool memory here.
int32_t bindTensor(DispatchRecorder& recorder, CommandBufferImpl& commandBuffer, uint32_t binding,
                   const Tensor& tensor, bool write);
// After the dispatch: the destination holds data now.
void markWritten(const Tensor& tensor);

// Dispatches `groups` workgroups spread over x and y (flatGroup() in tensor.glsl).
void dispatchFlat(DispatchRecorder& recorder, uint64_t groups);

// An index space: extents and, per operand, a stride per axis (0 where it is broadcast).
struct IndexSpace {
  std::vector<uint32_t> shape;
  std::vector<std::vector<int64_t>> strides;  // [operand][axis]

  uint64_t count() const;
  // Drops extent-1 axes and merges neighbours that every operand walks as one axis, so the shader
  // loops over as few axes as possible (a contiguous copy becomes rank 1).
  void simplify();
};

// Strides of `tensor` seen from an index space of `shape` it broadcasts to (numpy alignment).
std::vector<int64_t> broadcastStrides(const Tensor& tensor, const std::vector<uint32_t>& shape);

// Writes the outer (or inner) index space into the parameters: shape, rank, count and strides.
void setOuter(shader::TensorParams& params, const IndexSpace& space);
void setInner(shader::TensorParams& params, const IndexSpace& space);

}  // namespace vkcnn::detail
