// Kernels on Tensors (MPSNDArray kernels): conversions between Images and Tensors, copies and
// transposes, element-wise operations with numpy broadcasting.
//
// Every kernel reads any view (strided, permuted, sliced, even with negative strides) and writes
// any view whose elements are distinct and do not overlap a source. All operands of one kernel
// share a TensorDataType; arithmetic is float32 whatever the storage (float16 results are rounded
// to nearest even, finite values beyond +-65504 saturated). A temporary source is read once
// (readCount lowered by one per encode, as for images). Shapes that do not fit are an Error
// before anything is recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkcnn/buffer.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/export.h"
#include "vkcnn/image.h"
#include "vkcnn/neuron.h"
#include "vkcnn/tensor.h"

namespace vkcnn {

class VKCNN_API TensorKernel {
 public:
  virtual ~TensorKernel();
  TensorKernel(const TensorKernel&) = default;
  TensorKernel& operator=(const TensorKernel&) = default;

  std::string label;
  // Element type of the temporaries encode() makes (sources of another type are an error).
  const Context& context() const { return context_; }

 protected:
  TensorKernel(const Context& context, std::string defaultLabel);
  Context context_;
};

// ---- Image <-> Tensor -----------------------------------------------------------------------

// Every image and channel of an Image into a rank-4 Tensor [N, C, H, W] (NCHW) or [N, H, W, C]
// (NHWC); the destination may be any view of that shape (a permuted view gives any other order).
class VKCNN_API ImageToTensor : public TensorKernel {
 public:
  explicit ImageToTensor(const Context& context, TensorLayout dataLayout = TensorLayout::NCHW);

  TensorLayout dataLayout;
  TensorDataType dataType = TensorDataType::float32;  // of temporaries made by encode()

  std::vector<uint32_t> destinationShape(const Image& source) const;
  void encode(CommandBuffer& commandBuffer, const Image& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Image& source);
};

// A rank-4 Tensor [N, C, H, W] or [N, H, W, C] into every image and channel of an Image of N
// images of C channels, H x W. Padding channels end as zero.
class VKCNN_API TensorToImage : public TensorKernel {
 public:
  explicit TensorToImage(const Context& context, TensorLayout dataLayout = TensorLayout::NCHW);

  TensorLayout dataLayout;
  ChannelFormat channelFormat = ChannelFormat::float16;  // of temporaries made by encode()

  ImageDescriptor destinationImageDescriptor(const Tensor& source) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Image& destination);
  TemporaryImage encode(CommandBuffer& commandBuffer, const Tensor& source);
};

// ---- Copies and transposes --------------------------------------------------------------------

// Copies a view into another of the same shape: materialises a slice or a permuted view, writes
// one part of a concatenation into a slice of the destination.
class VKCNN_API TensorCopy : public TensorKernel {
 public:
  explicit TensorCopy(const Context& context);
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  // Into a new contiguous temporary of the source's shape.
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);
};

// ONNX Transpose: destination axis i is source axis perm[i] (an empty perm reverses the axes).
// Where the innermost axis moves, tiles go through shared memory so that both the reads and the
// writes are contiguous.
class VKCNN_API TensorTranspose : public TensorKernel {
 public:
  TensorTranspose(const Context& context, std::vector<uint32_t> perm);
  const std::vector<uint32_t>& perm() const { return perm_; }

  std::vector<uint32_t> destinationShape(const Tensor& source) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  std::vector<uint32_t> perm_;
};

// ---- Element-wise -----------------------------------------------------------------------------

enum class TensorUnaryOperation : uint32_t {
  neuron = 0,  // the NeuronDescriptor's function (every NeuronType but prelu: TensorBinary)
  erf = 1,
  sqrt = 2,
  reciprocal = 3,
  negate = 4,
  exp = 5,
  log = 6,
  abs = 7,
  floor = 8,
  ceil = 9,
};

VKCNN_API const char* toString(TensorUnaryOperation operation);

// y = f(x), same shape.
class VKCNN_API TensorUnary : public TensorKernel {
 public:
  TensorUnary(const Context& context, TensorUnaryOperation operation);
  TensorUnary(const Context& context, const NeuronDescriptor& neuron);

  TensorUnaryOperation operation() const { return operation_; }
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  TensorUnaryOperation operation_;
  NeuronDescriptor neuron_;
};

enum class TensorBinaryOperation : uint32_t {
  add = 0,
  subtract = 1,
  multiply = 2,
  divide = 3,
  power = 4,
  maximum = 5,
  minimum = 6,
  equal = 7,            // 1 where a == b, else 0
  less = 8,             // 1 where a < b
  greater = 9,          // 1 where a > b
  lessOrEqual = 10,     // 1 where a <= b
  greaterOrEqual = 11,  // 1 where a >= b
  prelu = 13,           // a >= 0 ? a : a * b (ONNX PRelu, the slopes in b)
};

VKCNN_API const char* toString(TensorBinaryOperation operation);

// The numpy broadcast of two shapes (aligned at the innermost axis; an extent of 1 stretches), or
// an Error naming the axis where they disagree. `what` prefixes the message.
VKCNN_API std::vector<uint32_t> broadcastShape(const std::vector<uint32_t>& a,
                                               const std::vector<uint32_t>& b,
                                               const std::string& what = "broadcast");

// y = a op b with numpy broadcasting at any rank; the destination has the broadcast shape.
class VKCNN_API TensorBinary : public TensorKernel {
 public:
  TensorBinary(const Context& context, TensorBinaryOperation operation);

  TensorBinaryOperation operation() const { return operation_; }
  void encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
              const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b);

 private:
  TensorBinaryOperation operation_;
};

// ONNX Where: y = condition != 0 ? x : y, the three broadcast together.
class VKCNN_API TensorWhere : public TensorKernel {
 public:
  explicit TensorWhere(const Context& context);
  void encode(CommandBuffer& commandBuffer, const Tensor& condition, const Tensor& x,
              const Tensor& y, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& condition, const Tensor& x,
                         const Tensor& y);
};

}  // namespace vkcnn
