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

// What every Tensor kernel has: a label and its Context.
class VKCNN_API TensorKernel {
 public:
  virtual ~TensorKernel();
  TensorKernel(const TensorKernel&) = default;
  TensorKernel& operator=(const TensorKernel&) = default;

  std::string label;  // names its dispatches in errors, profiles and validation messages
  // The Context it was made on.
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
  // A copy kernel writing tensors in `dataLayout`.
  explicit ImageToTensor(const Context& context, TensorLayout dataLayout = TensorLayout::NCHW);

  TensorLayout dataLayout;                            // NCHW or NHWC
  TensorDataType dataType = TensorDataType::float32;  // of temporaries made by encode()
  uint32_t sourceFeatureChannelOffset = 0;            // the first channel read
  uint32_t featureChannels = 0;                       // C; 0: to the last channel

  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
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
  // A copy kernel reading tensors in `dataLayout`.
  explicit TensorToImage(const Context& context, TensorLayout dataLayout = TensorLayout::NCHW);

  TensorLayout dataLayout;                               // NCHW or NHWC
  ChannelFormat channelFormat = ChannelFormat::float16;  // of temporaries made by encode()
  uint32_t destinationFeatureChannelOffset = 0;          // where the tensor's channels land

  // The Image a temporary destination gets; encode() writes into `destination` or into a new
  // temporary of that descriptor.
  ImageDescriptor destinationImageDescriptor(const Tensor& source) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Image& destination);
  TemporaryImage encode(CommandBuffer& commandBuffer, const Tensor& source);
};

// ONNX Cast between float16 and float32 (a copy where both agree): the destination's data type
// decides; float16 results round to nearest even, finite values beyond +-65504 saturate. The one
// kernel whose operands may differ in type.
class VKCNN_API TensorCast : public TensorKernel {
 public:
  // A cast whose temporaries are of `dataType`.
  explicit TensorCast(const Context& context, TensorDataType dataType = TensorDataType::float16);

  TensorDataType dataType;  // of temporaries made by encode()
  // Records the cast into `destination` (the source's shape), or into a new temporary.
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);
};

// ---- Copies and transposes --------------------------------------------------------------------

// Copies a view into another of the same shape: materialises a slice or a permuted view, writes
// one part of a concatenation into a slice of the destination.
class VKCNN_API TensorCopy : public TensorKernel {
 public:
  // A copy kernel; into `destination`, any view of the source's shape.
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
  // `perm` as ONNX Transpose's perm: a permutation of the axes, or empty.
  TensorTranspose(const Context& context, std::vector<uint32_t> perm);
  const std::vector<uint32_t>& perm() const { return perm_; }  // as given

  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
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
  // Concatenation along `axis` (negative: from the end).
  TensorConcat(const Context& context, int32_t axis);

  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
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
  // Parts of the given sizes, or numberOfOutputs equal parts, along `axis`.
  TensorSplit(const Context& context, int32_t axis, std::vector<uint32_t> sizes);
  TensorSplit(const Context& context, int32_t axis, uint32_t numberOfOutputs);

  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
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
  // ONNX Slice's starts, ends, axes and steps (axes empty: 0, 1, ...; steps empty: 1).
  TensorSlice(const Context& context, std::vector<int64_t> starts, std::vector<int64_t> ends,
              std::vector<int32_t> axes = {}, std::vector<int64_t> steps = {});

  // The view of `source` the slice selects.
  Tensor view(const Tensor& source) const;
  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
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
  // Gathers along `axis` (negative: from the end).
  TensorGather(const Context& context, int32_t axis);

  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
  std::vector<uint32_t> destinationShape(const Tensor& data, const Tensor& indices) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& data, const Tensor& indices,
              const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& data, const Tensor& indices);

 private:
  int32_t axis_;
};

// ---- Pad ----------------------------------------------------------------------------------------

// How TensorPad fills what it adds (ONNX Pad's mode).
enum class TensorPaddingMode : uint32_t {
  constant = 0,  // `value`
  reflect = 1,   // mirrored about the edge element, which is not repeated
  edge = 2,      // the edge element repeated
  wrap = 3,      // the axis tiled
};

// ONNX Pad on any axes: pads = [begin of each listed axis..., end of each...] (axes empty: every
// axis, in order); a negative pad crops. reflect mirrors without repeating the edge (numpy's
// reflect, repeatedly for pads longer than the axis), edge repeats it, wrap tiles the axis.
class VKCNN_API TensorPad : public TensorKernel {
 public:
  // ONNX Pad's mode, pads, constant value and axes.
  TensorPad(const Context& context, TensorPaddingMode mode, std::vector<int64_t> pads,
            float value = 0, std::vector<int32_t> axes = {});

  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
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

// ONNX Resize's mode.
enum class TensorInterpolation : uint32_t {
  nearest = 0,  // the element nearestMode picks
  linear = 1,   // linear along each resized axis
  cubic = 2,    // cubic convolution (cubicCoefficient, excludeOutside)
};

// ONNX Resize's coordinate_transformation_mode.
enum class TensorCoordinateTransformation : uint32_t {
  halfPixel = 0,           // half_pixel (the default)
  halfPixelSymmetric = 1,  // half_pixel_symmetric (opset 19)
  pytorchHalfPixel = 2,    // pytorch_half_pixel
  alignCorners = 3,        // align_corners
  asymmetric = 4,          // asymmetric
  tfCropAndResize = 5,     // tf_crop_and_resize (roi, extrapolationValue)
  tfHalfPixelForNN = 6,    // tf_half_pixel_for_nn
};

// ONNX Resize (opsets 10-19 without antialias) on any axes: per axis an output extent (`sizes`)
// or a scale (`scales`, output floor(extent * scale), or floor(extent * (end - start) * scale)
// with tfCropAndResize's roi). Interpolation is separable: one pass per resized axis, as the ONNX
// reference computes it. Nearest uses nearestMode (NearestMode of vkcnn/resize.h, default
// roundPreferFloor); cubic the coefficient A and excludeOutside; tfCropAndResize the roi (starts,
// then ends, one per axis, in [0, 1]) and extrapolationValue outside it.
struct TensorResizeDescriptor {
  TensorInterpolation interpolation = TensorInterpolation::nearest;  // ONNX mode
  // ONNX coordinate_transformation_mode.
  TensorCoordinateTransformation coordinateTransformation =
      TensorCoordinateTransformation::halfPixel;
  uint32_t nearestMode = 0;         // 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil
  float cubicCoefficient = -0.75f;  // ONNX cubic_coeff_a
  bool excludeOutside = false;      // ONNX exclude_outside
  float extrapolationValue = 0;     // ONNX extrapolation_value
  std::vector<uint32_t> sizes;      // one per axis, or empty: from scales
  std::vector<float> scales;        // one per axis, or empty: output / input
  std::vector<float> roi;           // tfCropAndResize: 2 * rank values (empty: 0 and 1)
};

// The resize of TensorResizeDescriptor, one pass per resized axis.
class VKCNN_API TensorResize : public TensorKernel {
 public:
  // A mode that does not exist is an invalidArgument Error; sizes and scales are checked against
  // each source when encoding.
  TensorResize(const Context& context, const TensorResizeDescriptor& descriptor);

  const TensorResizeDescriptor& descriptor() const { return descriptor_; }  // as given
  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
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
  // A matrix-product kernel (it holds no weights).
  explicit TensorMatMul(const Context& context);

  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
  std::vector<uint32_t> destinationShape(const Tensor& a, const Tensor& b) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
              const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b);
};

// ONNX Gemm's attributes.
struct GemmDescriptor {
  bool transposeA = false;  // transA
  bool transposeB = false;  // transB
  float alpha = 1;          // A'B's factor
  float beta = 1;           // C's factor
};

// ONNX Gemm: Y [M, N] = alpha * A' B' + beta * C, A' = A [M, K] or its transpose, B' likewise, C
// (optional: an empty Tensor) broadcast to [M, N]: a scalar, a row [N], a column [M, 1] or a
// matrix.
class VKCNN_API TensorGemm : public TensorKernel {
 public:
  // A Gemm kernel with these attributes.
  TensorGemm(const Context& context, const GemmDescriptor& descriptor);

  const GemmDescriptor& descriptor() const { return descriptor_; }  // as given
  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
  std::vector<uint32_t> destinationShape(const Tensor& a, const Tensor& b) const;
  void encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b, const Tensor& c,
              const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
                         const Tensor& c);

 private:
  GemmDescriptor descriptor_;
};

// ---- Element-wise -----------------------------------------------------------------------------

// What TensorUnary computes of each element.
enum class TensorUnaryOperation : uint32_t {
  neuron = 0,      // the NeuronDescriptor's function (every NeuronType but prelu: TensorBinary)
  erf = 1,         // the error function
  sqrt = 2,        // the square root
  reciprocal = 3,  // 1 / x
  negate = 4,      // -x
  exp = 5,         // e ^ x
  log = 6,         // the natural logarithm
  abs = 7,         // |x|
  floor = 8,       // rounded down
  ceil = 9,        // rounded up
};

// The operation's name as the enum spells it.
VKCNN_API const char* toString(TensorUnaryOperation operation);

// y = f(x), same shape.
class VKCNN_API TensorUnary : public TensorKernel {
 public:
  // An operation, or a neuron's function (TensorUnaryOperation::neuron).
  TensorUnary(const Context& context, TensorUnaryOperation operation);
  TensorUnary(const Context& context, const NeuronDescriptor& neuron);

  TensorUnaryOperation operation() const { return operation_; }  // as given
  // Records the kernel into `destination` (the source's shape), or into a new temporary.
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source);

 private:
  TensorUnaryOperation operation_;
  NeuronDescriptor neuron_;
};

// What TensorBinary computes of each pair of elements.
enum class TensorBinaryOperation : uint32_t {
  add = 0,              // a + b
  subtract = 1,         // a - b
  multiply = 2,         // a * b
  divide = 3,           // a / b
  power = 4,            // a ^ b
  maximum = 5,          // max(a, b)
  minimum = 6,          // min(a, b)
  equal = 7,            // 1 where a == b, else 0
  less = 8,             // 1 where a < b
  greater = 9,          // 1 where a > b
  lessOrEqual = 10,     // 1 where a <= b
  greaterOrEqual = 11,  // 1 where a >= b
  prelu = 13,           // a >= 0 ? a : a * b (ONNX PRelu, the slopes in b)
};

// The operation's name as the enum spells it.
VKCNN_API const char* toString(TensorBinaryOperation operation);

// The numpy broadcast of two shapes (aligned at the innermost axis; an extent of 1 stretches), or
// an Error naming the axis where they disagree. `what` prefixes the message.
VKCNN_API std::vector<uint32_t> broadcastShape(const std::vector<uint32_t>& a,
                                               const std::vector<uint32_t>& b,
                                               const std::string& what = "broadcast");

// y = a op b with numpy broadcasting at any rank; the destination has the broadcast shape.
class VKCNN_API TensorBinary : public TensorKernel {
 public:
  // A kernel of `operation`.
  TensorBinary(const Context& context, TensorBinaryOperation operation);

  TensorBinaryOperation operation() const { return operation_; }  // as given
  // Records the kernel into `destination` (the broadcast shape), or into a new temporary.
  void encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
              const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b);

 private:
  TensorBinaryOperation operation_;
};

// ONNX Where: y = condition != 0 ? x : y, the three broadcast together.
class VKCNN_API TensorWhere : public TensorKernel {
 public:
  // A select kernel; encode() writes the broadcast shape into `destination`, or a new temporary.
  explicit TensorWhere(const Context& context);
  void encode(CommandBuffer& commandBuffer, const Tensor& condition, const Tensor& x,
              const Tensor& y, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& condition, const Tensor& x,
                         const Tensor& y);
};

// ---- Reductions and normalisations -------------------------------------------------------------

// What TensorReduction computes over the reduced axes.
enum class TensorReductionOperation : uint32_t {
  sum = 0,        // sum x
  mean = 1,       // sum x / count
  maximum = 2,    // max x
  minimum = 3,    // min x
  product = 4,    // prod x
  l1 = 5,         // sum |x|
  l2 = 6,         // sqrt(sum x^2)
  logSumExp = 7,  // log(sum exp(x)), computed as max + log(sum exp(x - max))
  sumSquare = 8,  // sum x^2
  logSum = 9,     // log(sum x)
};

// The operation's name as the enum spells it.
VKCNN_API const char* toString(TensorReductionOperation operation);

// ONNX Reduce*: reduces `axes` (negative counts from the end; empty: every axis). keepDimensions
// keeps them as extent 1; without it they are dropped (all of them dropped: shape [1]).
class VKCNN_API TensorReduction : public TensorKernel {
 public:
  // ONNX Reduce*'s operation, axes and keepdims.
  TensorReduction(const Context& context, TensorReductionOperation operation,
                  std::vector<int32_t> axes = {}, bool keepDimensions = true);

  TensorReductionOperation operation() const { return operation_; }  // as given
  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
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
  // ArgMax (maximum) or ArgMin along `axis`, with ONNX's keepdims and select_last_index.
  TensorArgReduction(const Context& context, bool maximum, int32_t axis = 0,
                     bool keepDimensions = true, bool selectLastIndex = false);

  // The result's shape for these operands; encode() writes it into `destination` (any view
  // of that shape, elements distinct) or into a new contiguous temporary.
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
  // Softmax along `axis` (negative: from the end), or LogSoftmax with `logarithm`.
  TensorSoftmax(const Context& context, int32_t axis = -1, bool logarithm = false);

  // Records the kernel into `destination`, or into a new contiguous temporary of the result's
  // shape.
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
  // Normalisation over the axes from `axis` on, epsilon added to the variance.
  TensorLayerNormalization(const Context& context, int32_t axis = -1, float epsilon = 1e-5f);

  // Records the kernel into `destination`, or into a new contiguous temporary of the result's
  // shape.
  void encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& scale,
              const Tensor& bias, const Tensor& destination);
  TemporaryTensor encode(CommandBuffer& commandBuffer, const Tensor& source, const Tensor& scale,
                         const Tensor& bias);

 private:
  int32_t axis_;
  float epsilon_;
};

}  // namespace vkcnn
