// What the tensor kernels share on the host: checks that operands may be used, binding their
// storage, index spaces (shapes with one stride vector per operand, simplified before they go to
// the shader) and flat dispatches.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "kernels/kernel_encoding.h"
#include "memory/tensor_storage.h"
#include "tensor_interface.h"
#include "vkcnn/error.h"
#include "vkcnn/neuron.h"
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
// The checks of a kernel from one source to a destination of its type and of `shape`: both
// usable now, the type, the shape, no shared elements (in that order).
// The temporary a kernel `what` ("TensorCopy 'label'") writes when its output is like its source
// (shape and type), labelled "<label> output"; invalidArgument for an empty source.
TemporaryTensor temporaryLike(CommandBuffer& commandBuffer, const Tensor& source,
                              const std::string& what, const std::string& label);
void checkSourceAndDestination(const CommandBufferImpl& commandBuffer, const Tensor& source,
                               const Tensor& destination, const std::vector<uint32_t>& shape,
                               const std::string& what);

ShaderVariant variantFor(TensorDataType type);

// Binds the elements `tensor` spans at `binding` and returns where the view's element [0, .., 0]
// is inside the bound range (args[k].offset). A temporary destination gets its pool memory here.
int32_t bindTensor(DispatchRecorder& recorder, CommandBufferImpl& commandBuffer, uint32_t binding,
                   const Tensor& tensor, bool write);
// The parameters of a dispatch with `sources` bound at 1, 2, .. and `destination` after them (in
// that order): each operand's offset in args, the rest zero.
shader::TensorParams bindOperands(
    DispatchRecorder& recorder, CommandBufferImpl& commandBuffer,
    std::initializer_list<std::reference_wrapper<const Tensor>> sources, const Tensor& destination);
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

// The mask of a reduction (softmax, resize pass) over one axis.
std::vector<bool> onlyAxis(uint32_t rank, uint32_t axis);
// The axes `reduced` leaves as an outer space: source strides, then the destination axis each
// lands on (the same axis when keepDimensions, else the next one).
IndexSpace keptSpace(const Tensor& source, const Tensor& destination,
                     const std::vector<bool>& reduced, bool keepDimensions);

// Strides of `tensor` seen from an index space of `shape` it broadcasts to (numpy alignment).
std::vector<int64_t> broadcastStrides(const Tensor& tensor, const std::vector<uint32_t>& shape);

// Writes the outer (or inner) index space into the parameters: shape, rank, count and strides.
void setOuter(shader::TensorParams& params, const IndexSpace& space);
void setInner(shader::TensorParams& params, const IndexSpace& space);

// One copy (op VKCNN_TENSOR_UNARY_COPY: the tiled transpose where the innermost axis moves) or
// unary operation of `source` into `destination` of the same shape; `consume`: lower a temporary
// source's readCount.
void encodeUnary(CommandBuffer& commandBuffer, const std::string& what, int32_t op,
                 const NeuronDescriptor& neuron, const Tensor& source, const Tensor& destination,
                 bool consume);

// Axis `axis` of a rank-`rank` tensor, negative from the end, or invalidArgument.
uint32_t resolveAxis(int32_t axis, uint32_t rank, const std::string& what);

}  // namespace vkcnn::detail
