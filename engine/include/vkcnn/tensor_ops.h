// Kernels on Tensors (MPSNDArray kernels): conversions between Images and Tensors, copies and
// transposes, concatenation, split, slice and gather, matrix products, element-wise operations
// with numpy broadcasting, reductions, softmax and layer normalisation.
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

// Every image of an Image, channels [sourceFeatureChannelOffset, +C), into a rank-4 Tensor
// [N, C, H, W] (NCHW) or [N, H, W, C] (NHWC); C = featureChannels, 0: to the last channel (a
// window of a concatenation's image at any offset). The destination may be any view of that shape
// (a permuted view gives any other order).
class VKCNN_API ImageToTensor : public TensorKernel {
 public:
  explicit ImageToTensor(const Context& context, TensorLayout dataLayout = TensorLayout::NCHW);

  TensorLayout dataLayout;
  TensorDataType dataType = TensorDataType::float32;  // of temporaries made by encode()
  uint32_t sourceFeatureChannelOffset = 0;
  uint32_t featureChannels = 0;

  std::vector<uint32_t> destinationShape(const Image& source) const;
  void encode(CommandBuffer& commandBuffer, const Image& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Image& source);

 private:
  uint32_t windowChannels(const Image& source, const std::string& what) const;
};

// A rank-4 Tensor [N, C, H, W] or [N, H, W, C] into channels [destinationFeatureChannelOffset,
// +C) of every image of an Image of N images, H x W (concatenation at any offset); the other
// channels keep their contents and padding channels end as zero. A temporary destination has
// destinationFeatureChannelOffset + C channels.
class VKCNN_API TensorToImage : public TensorKernel {
 public:
  explicit TensorToImage(const Context& context, TensorLayout dataLayout = TensorLayout::NCHW);

  TensorLayout dataLayout;
  ChannelFormat channelFormat = ChannelFormat::float16;  // of temporaries made by encode()
  uint32_t destinationFeatureChannelOffset = 0;

  ImageDescriptor destinationImageDescriptor(const Tensor& source) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Image& destination);
  TemporaryImage encode(CommandBuffer& commandBuffer, const Tensor& source);
};

// ONNX Cast between float16 and float32 (a copy where both agree): the destination's data type
// decides; float16 results round to nearest even, finite values beyond +-65504 saturate. The one
// kernel whose operands may differ in type.
class VKCNN_API TensorCast : public TensorKernel {
 public:
  explicit TensorCast(const Context& context, TensorDataType dataType = TensorDataType::float16);

  TensorDataType dataType;  // of temporaries made by encode()
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);
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

// ONNX Concat along `axis` (negative from the end): the sources, equal but for that axis, one
// after another. Each source is one copy into a slice of the destination.
class VKCNN_API TensorConcat : public TensorKernel {
 public:
  TensorConcat(const Context& context, int32_t axis);

  std::vector<uint32_t> destinationShape(const std::vector<Tensor>& sources) const;
  void encode(CommandBuffer& commandBuffer, const std::vector<Tensor>& sources,
              const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const std::vector<Tensor>& sources);

 private:
  int32_t axis_;
};

// ONNX Split along `axis`: parts of the given sizes (their sum the axis' extent), or
// `numberOfOutputs` equal parts (the last smaller if the extent does not divide, as opset 18).
// The source is read once per encode (readCount lowered by one).
class VKCNN_API TensorSplit : public TensorKernel {
 public:
  TensorSplit(const Context& context, int32_t axis, std::vector<uint32_t> sizes);
  TensorSplit(const Context& context, int32_t axis, uint32_t numberOfOutputs);

  std::vector<std::vector<uint32_t>> destinationShapes(const Tensor& source) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& source,
              const std::vector<Tensor>& destinations);
  std::vector<TemporaryTensor> encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  std::vector<uint32_t> sizes(const Tensor& source, uint32_t& axis) const;
  int32_t axis_;
  std::vector<uint32_t> sizes_;
  uint32_t numberOfOutputs_ = 0;
};

// ONNX Slice: for each listed axis (empty: 0, 1, ...), elements start, start+step, ... before
// end, negative indices from the end, clamped; a negative step walks backwards. A slice is a view
// (Tensor::slice); this kernel copies it into a new tensor.
class VKCNN_API TensorSlice : public TensorKernel {
 public:
  TensorSlice(const Context& context, std::vector<int64_t> starts, std::vector<int64_t> ends,
              std::vector<int32_t> axes = {}, std::vector<int64_t> steps = {});

  // The view of `source` the slice selects.
  Tensor view(const Tensor& source) const;
  std::vector<uint32_t> destinationShape(const Tensor& source) const {
    return view(source).shape();
  }
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  std::vector<int64_t> starts_, ends_, steps_;
  std::vector<int32_t> axes_;
};

// ONNX Gather along `axis`: output shape data[:axis] + indices + data[axis+1:]. The indices are a
// float32 Tensor holding integers (exact to 2^24); negative ones count from the end; an index
// outside the axis yields NaN (a GPU kernel cannot stop with an error).
class VKCNN_API TensorGather : public TensorKernel {
 public:
  TensorGather(const Context& context, int32_t axis);

  std::vector<uint32_t> destinationShape(const Tensor& data, const Tensor& indices) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& data, const Tensor& indices,
              const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& data, const Tensor& indices);

 private:
  int32_t axis_;
};

// ---- Pad ----------------------------------------------------------------------------------------

enum class TensorPaddingMode : uint32_t { constant = 0, reflect = 1, edge = 2, wrap = 3 };

// ONNX Pad on any axes: pads = [begin of each listed axis..., end of each...] (axes empty: every
// axis, in order); a negative pad crops. reflect mirrors without repeating the edge (numpy's
// reflect, repeatedly for pads longer than the axis), edge repeats it, wrap tiles the axis.
class VKCNN_API TensorPad : public TensorKernel {
 public:
  TensorPad(const Context& context, TensorPaddingMode mode, std::vector<int64_t> pads,
            float value = 0, std::vector<int32_t> axes = {});

  std::vector<uint32_t> destinationShape(const Tensor& source) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  // Pads before each axis of `source` (and its output extents).
  std::vector<int64_t> before(const Tensor& source, std::vector<uint32_t>& shape) const;
  TensorPaddingMode mode_;
  std::vector<int64_t> pads_;
  float value_;
  std::vector<int32_t> axes_;
};

// ---- Resize -----------------------------------------------------------------------------------

enum class TensorInterpolation : uint32_t { nearest = 0, linear = 1, cubic = 2 };

// ONNX Resize's coordinate_transformation_mode.
enum class TensorCoordinateTransformation : uint32_t {
  halfPixel = 0,
  halfPixelSymmetric = 1,
  pytorchHalfPixel = 2,
  alignCorners = 3,
  asymmetric = 4,
  tfCropAndResize = 5,
  tfHalfPixelForNN = 6,
};

// ONNX Resize (opsets 10-19 without antialias) on any axes: per axis an output extent (`sizes`)
// or a scale (`scales`, output floor(extent * scale), or floor(extent * (end - start) * scale)
// with tfCropAndResize's roi). Interpolation is separable: one pass per resized axis, as the ONNX
// reference computes it. Nearest uses nearestMode (NearestMode of vkcnn/resize.h, default
// roundPreferFloor); cubic the coefficient A and excludeOutside; tfCropAndResize the roi (starts,
// then ends, one per axis, in [0, 1]) and extrapolationValue outside it.
struct TensorResizeDescriptor {
  TensorInterpolation interpolation = TensorInterpolation::nearest;
  TensorCoordinateTransformation coordinateTransformation =
      TensorCoordinateTransformation::halfPixel;
  uint32_t nearestMode = 0;  // 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil
  float cubicCoefficient = -0.75f;
  bool excludeOutside = false;
  float extrapolationValue = 0;
  std::vector<uint32_t> sizes;  // one per axis, or empty: from scales
  std::vector<float> scales;    // one per axis, or empty: output / input
  std::vector<float> roi;       // tfCropAndResize: 2 * rank values (empty: 0 and 1)
};

class VKCNN_API TensorResize : public TensorKernel {
 public:
  TensorResize(const Context& context, const TensorResizeDescriptor& descriptor);

  const TensorResizeDescriptor& descriptor() const { return descriptor_; }
  std::vector<uint32_t> destinationShape(const Tensor& source) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  TensorResizeDescriptor descriptor_;
};

// ---- Matrix products ----------------------------------------------------------------------------

// numpy matmul (ONNX MatMul): A [..., M, K] times B [..., K, N] with the batch axes broadcast; a
// rank-1 A is a row [1, K] and a rank-1 B a column [K, 1], whose axis the result then drops.
class VKCNN_API TensorMatMul : public TensorKernel {
 public:
  explicit TensorMatMul(const Context& context);

  std::vector<uint32_t> destinationShape(const Tensor& a, const Tensor& b) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
              const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b);
};

struct GemmDescriptor {
  bool transposeA = false;
  bool transposeB = false;
  float alpha = 1;
  float beta = 1;
};

// ONNX Gemm: Y [M, N] = alpha * A' B' + beta * C, A' = A [M, K] or its transpose, B' likewise, C
// (optional: an empty Tensor) broadcast to [M, N]: a scalar, a row [N], a column [M, 1] or a
// matrix.
class VKCNN_API TensorGemm : public TensorKernel {
 public:
  TensorGemm(const Context& context, const GemmDescriptor& descriptor);

  const GemmDescriptor& descriptor() const { return descriptor_; }
  std::vector<uint32_t> destinationShape(const Tensor& a, const Tensor& b) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b, const Tensor& c,
              const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
                         const Tensor& c);

 private:
  GemmDescriptor descriptor_;
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

// ---- Reductions and normalisations -------------------------------------------------------------

enum class TensorReductionOperation : uint32_t {
  sum = 0,
  mean = 1,
  maximum = 2,
  minimum = 3,
  product = 4,
  l1 = 5,         // sum |x|
  l2 = 6,         // sqrt(sum x^2)
  logSumExp = 7,  // log(sum exp(x)), computed as max + log(sum exp(x - max))
  sumSquare = 8,  // sum x^2
  logSum = 9,     // log(sum x)
};

VKCNN_API const char* toString(TensorReductionOperation operation);

// ONNX Reduce*: reduces `axes` (negative counts from the end; empty: every axis). keepDimensions
// keeps them as extent 1; without it they are dropped (all of them dropped: shape [1]).
class VKCNN_API TensorReduction : public TensorKernel {
 public:
  TensorReduction(const Context& context, TensorReductionOperation operation,
                  std::vector<int32_t> axes = {}, bool keepDimensions = true);

  TensorReductionOperation operation() const { return operation_; }
  std::vector<uint32_t> destinationShape(const Tensor& source) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  // Whether each axis of a rank-`rank` source is reduced; throws for a bad axis.
  std::vector<bool> reduced(uint32_t rank, const std::string& what) const;
  TensorReductionOperation operation_;
  std::vector<int32_t> axes_;
  bool keepDimensions_;
};

// ONNX ArgMax / ArgMin along one axis: the index of the largest (smallest) element, the first of
// equal ones or with selectLastIndex the last, written as a float (exact to 2^24 in float32,
// 2048 in float16). keepDimensions keeps the axis as extent 1.
class VKCNN_API TensorArgReduction : public TensorKernel {
 public:
  TensorArgReduction(const Context& context, bool maximum, int32_t axis = 0,
                     bool keepDimensions = true, bool selectLastIndex = false);

  std::vector<uint32_t> destinationShape(const Tensor& source) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  bool maximum_;
  int32_t axis_;
  bool keepDimensions_, selectLastIndex_;
};

// ONNX Softmax / LogSoftmax (opset 13) along one axis of any rank. (Older opsets' flattening to
// 2D is a reshape to [outer, inner] and axis 1.)
class VKCNN_API TensorSoftmax : public TensorKernel {
 public:
  TensorSoftmax(const Context& context, int32_t axis = -1, bool logarithm = false);

  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  int32_t axis_;
  bool logarithm_;
};

// ONNX LayerNormalization (opset 17): normalises over the axes from `axis` on, then multiplies by
// `scale` and adds `bias` (an empty Tensor: none), both broadcast to those axes' shape.
class VKCNN_API TensorLayerNormalization : public TensorKernel {
 public:
  TensorLayerNormalization(const Context& context, int32_t axis = -1, float epsilon = 1e-5f);

  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& scale,
              const Tensor& bias, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& scale,
                         const Tensor& bias);

 private:
  int32_t axis_;
  float epsilon_;
};

}  // namespace vkcnn
