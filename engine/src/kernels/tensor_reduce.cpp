// TensorReduction, TensorSoftmax and TensorLayerNormalization: one workgroup per output position,
// reducing over an inner index space.
#include "kernels/tensor_checks.h"
#include "kernels/tensor_encoding.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn {

namespace {

// Workgroups of one item each, checked against the flat dispatch's reach.
void checkSources(detail::CommandBufferImpl& cb, const std::string& what, const Tensor& source,
                  const Tensor& destination) {
  cb.requireEncoding(what);
  detail::checkUsable(cb, source, false, what + " source");
  detail::checkUsable(cb, destination, true, what + " destination");
  detail::requireDataType(destination, source.dataType(), "destination", what);
  detail::requireNotInPlace(source, destination, what);
}

// The workgroup of 128 invocations per output position that the shaders use by default wastes
// most of itself on a short inner space (a softmax over 21 classes of 8732 anchors): there each
// invocation takes a whole position (VKCNN_TENSOR_SERIAL).
constexpr uint64_t kSerialInnerCount = 32;

void dispatchReducing(detail::DispatchRecorder& d, detail::shader::TensorParams& p, uint64_t outer,
                      uint64_t inner) {
  const bool serial = inner <= kSerialInnerCount;
  if (serial) p.flags |= VKCNN_TENSOR_SERIAL;
  d.bindParameters(0, &p, sizeof p);
  detail::dispatchFlat(d, serial ? (outer + 127) / 128 : outer);
}

// The shape a reduction leaves: the kept axes, each reduced one as 1 when kept, never rank 0.
std::vector<uint32_t> keptShape(const Tensor& source, const std::vector<bool>& reduced,
                                bool keepDimensions) {
  std::vector<uint32_t> shape;
  for (uint32_t i = 0; i < source.rank(); ++i)
    if (!reduced[i])
      shape.push_back(source.shape()[i]);
    else if (keepDimensions)
      shape.push_back(1);
  if (shape.empty()) shape.push_back(1);
  return shape;
}

// Records a one-source reducing shader (source at binding 1, destination at 2) over outer x inner.
void encodeReducing(detail::CommandBufferImpl& cb, detail::ShaderId shader, const std::string& what,
                    const Tensor& source, const Tensor& destination,
                    const detail::IndexSpace& outer, const detail::IndexSpace& inner, int32_t op,
                    int32_t i0 = 0) {
  detail::DispatchRecorder d(cb, shader, detail::variantFor(source.dataType()), what);
  detail::shader::TensorParams p = detail::bindOperands(d, cb, {source}, destination);
  detail::setOuter(p, outer);
  detail::setInner(p, inner);
  p.op = op;
  p.i0 = i0;
  dispatchReducing(d, p, outer.count(), inner.count());
  detail::markWritten(destination);
  detail::consumeRead(source);
}

}  // namespace

// ---- TensorReduction --------------------------------------------------------------------------

const char* toString(TensorReductionOperation operation) {
  switch (operation) {
    case TensorReductionOperation::sum:
      return "sum";
    case TensorReductionOperation::mean:
      return "mean";
    case TensorReductionOperation::maximum:
      return "maximum";
    case TensorReductionOperation::minimum:
      return "minimum";
    case TensorReductionOperation::product:
      return "product";
    case TensorReductionOperation::l1:
      return "l1";
    case TensorReductionOperation::l2:
      return "l2";
    case TensorReductionOperation::logSumExp:
      return "logSumExp";
    case TensorReductionOperation::sumSquare:
      return "sumSquare";
    case TensorReductionOperation::logSum:
      return "logSum";
  }
  return "unknown";
}

TensorReduction::TensorReduction(const Context& context, TensorReductionOperation operation,
                                 std::vector<int32_t> axes, bool keepDimensions)
    : TensorKernel(context, std::string("tensor reduce ") + toString(operation)),
      operation_(operation),
      axes_(std::move(axes)),
      keepDimensions_(keepDimensions) {
  detail::checkTensorReduction(operation, "TensorReduction");
}

std::vector<bool> TensorReduction::reduced(uint32_t rank, const std::string& what) const {
  std::vector<bool> r(rank, axes_.empty());
  for (int32_t axis : axes_) {
    const uint32_t a = detail::resolveAxis(axis, rank, what);
    if (r[a])
      throw Error(ErrorCode::invalidArgument,
                  what + ": axis " + std::to_string(axis) + " is listed twice");
    r[a] = true;
  }
  return r;
}

std::vector<uint32_t> TensorReduction::destinationShape(const Tensor& source) const {
  const std::string what = "TensorReduction '" + label + "'";
  if (!source.valid()) throw Error(ErrorCode::invalidArgument, what + ": the source is empty");
  return keptShape(source, reduced(source.rank(), what), keepDimensions_);
}

void TensorReduction::encode(CommandBuffer& commandBuffer, const Tensor& source,
                             const Tensor& destination) {
  const std::string what = "TensorReduction '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  checkSources(cb, what, source, destination);
  detail::requireShape(destination, destinationShape(source), "destination", what);
  const std::vector<bool> r = reduced(source.rank(), what);
  detail::IndexSpace inner{{}, {{}}};
  for (uint32_t i = 0; i < source.rank(); ++i) {
    if (!r[i]) continue;
    inner.shape.push_back(source.shape()[i]);
    inner.strides[0].push_back(source.strides()[i]);
  }
  inner.simplify();
  encodeReducing(cb, detail::ShaderId::tensor_reduce, what, source, destination,
                 detail::keptSpace(source, destination, r, keepDimensions_), inner,
                 int32_t(operation_));
}

TemporaryTensor TensorReduction::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryTensor t(commandBuffer,
                    {destinationShape(source), source.dataType(), label + " output"});
  encode(commandBuffer, source, t);
  return t;
}

// ---- TensorArgReduction -----------------------------------------------------------------------

TensorArgReduction::TensorArgReduction(const Context& context, bool maximum, int32_t axis,
                                       bool keepDimensions, bool selectLastIndex)
    : TensorKernel(context, maximum ? "tensor argmax" : "tensor argmin"),
      maximum_(maximum),
      axis_(axis),
      keepDimensions_(keepDimensions),
      selectLastIndex_(selectLastIndex) {}

std::vector<uint32_t> TensorArgReduction::destinationShape(const Tensor& source) const {
  const std::string what = "TensorArgReduction '" + label + "'";
  if (!source.valid()) throw Error(ErrorCode::invalidArgument, what + ": the source is empty");
  return keptShape(source,
                   detail::onlyAxis(source.rank(), detail::resolveAxis(axis_, source.rank(), what)),
                   keepDimensions_);
}

void TensorArgReduction::encode(CommandBuffer& commandBuffer, const Tensor& source,
                                const Tensor& destination) {
  const std::string what = "TensorArgReduction '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  checkSources(cb, what, source, destination);
  detail::requireShape(destination, destinationShape(source), "destination", what);
  const uint32_t axis = detail::resolveAxis(axis_, source.rank(), what);
  detail::IndexSpace inner{{source.shape()[axis]}, {{source.strides()[axis]}}};
  encodeReducing(cb, detail::ShaderId::tensor_arg_reduce, what, source, destination,
                 detail::keptSpace(source, destination, detail::onlyAxis(source.rank(), axis),
                                   keepDimensions_),
                 inner, maximum_ ? 0 : 1, selectLastIndex_ ? 1 : 0);
}

TemporaryTensor TensorArgReduction::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryTensor t(commandBuffer,
                    {destinationShape(source), source.dataType(), label + " output"});
  encode(commandBuffer, source, t);
  return t;
}

// ---- TensorSoftmax ----------------------------------------------------------------------------

TensorSoftmax::TensorSoftmax(const Context& context, int32_t axis, bool logarithm)
    : TensorKernel(context, logarithm ? "tensor log-softmax" : "tensor softmax"),
      axis_(axis),
      logarithm_(logarithm) {}

void TensorSoftmax::encode(CommandBuffer& commandBuffer, const Tensor& source,
                           const Tensor& destination) {
  const std::string what = "TensorSoftmax '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  checkSources(cb, what, source, destination);
  detail::requireShape(destination, source.shape(), "destination", what);
  const uint32_t axis = detail::resolveAxis(axis_, source.rank(), what);
  detail::IndexSpace inner{{source.shape()[axis]},
                           {{source.strides()[axis]}, {destination.strides()[axis]}}};
  encodeReducing(
      cb, detail::ShaderId::tensor_softmax, what, source, destination,
      detail::keptSpace(source, destination, detail::onlyAxis(source.rank(), axis), true), inner,
      logarithm_ ? 1 : 0);
}

TemporaryTensor TensorSoftmax::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryTensor t =
      detail::temporaryLike(commandBuffer, source, "TensorSoftmax '" + label + "'", label);
  encode(commandBuffer, source, t);
  return t;
}

// ---- TensorLayerNormalization -----------------------------------------------------------------

TensorLayerNormalization::TensorLayerNormalization(const Context& context, int32_t axis,
                                                   float epsilon)
    : TensorKernel(context, "tensor layer normalization"), axis_(axis), epsilon_(epsilon) {
  detail::checkTensorLayerNormalization(epsilon, "TensorLayerNormalization");
}

void TensorLayerNormalization::encode(CommandBuffer& commandBuffer, const Tensor& source,
                                      const Tensor& scale, const Tensor& bias,
                                      const Tensor& destination) {
  const std::string what = "TensorLayerNormalization '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  checkSources(cb, what, source, destination);
  detail::checkUsable(cb, scale, false, what + " scale");
  if (bias.valid()) detail::checkUsable(cb, bias, false, what + " bias");
  detail::requireDataType(scale, source.dataType(), "scale", what);
  if (bias.valid()) detail::requireDataType(bias, source.dataType(), "bias", what);
  detail::requireShape(destination, source.shape(), "destination", what);
  detail::requireNotInPlace(scale, destination, what);
  if (bias.valid()) detail::requireNotInPlace(bias, destination, what);
  const uint32_t axis = detail::resolveAxis(axis_, source.rank(), what);
  const std::vector<uint32_t> normalized(source.shape().begin() + axis, source.shape().end());
  // Scale and bias must broadcast to the normalised shape without growing it.
  auto checkParameter = [&](const Tensor& t, const char* role) {
    if (broadcastShape(normalized, t.shape(), what + " " + role) != normalized)
      throw Error(ErrorCode::invalidArgument, what + ": " + role + " " +
                                                  detail::shapeText(t.shape()) +
                                                  " does not broadcast to the normalised shape " +
                                                  detail::shapeText(normalized));
  };
  checkParameter(scale, "scale");
  if (bias.valid()) checkParameter(bias, "bias");
  const Tensor& biasOrScale = bias.valid() ? bias : scale;
  const std::vector<int64_t> scaleStrides = detail::broadcastStrides(scale, normalized);
  const std::vector<int64_t> biasStrides = detail::broadcastStrides(biasOrScale, normalized);
  detail::IndexSpace outer{{}, {{}, {}, {}, {}}};
  detail::IndexSpace inner{{}, {{}, {}, {}, {}}};
  for (uint32_t i = 0; i < source.rank(); ++i) {
    detail::IndexSpace& space = i < axis ? outer : inner;
    space.shape.push_back(source.shape()[i]);
    space.strides[0].push_back(source.strides()[i]);
    space.strides[1].push_back(i < axis ? 0 : scaleStrides[i - axis]);
    space.strides[2].push_back(i < axis ? 0 : biasStrides[i - axis]);
    space.strides[3].push_back(destination.strides()[i]);
  }
  outer.simplify();
  inner.simplify();
  detail::DispatchRecorder d(cb, detail::ShaderId::tensor_layer_norm,
                             detail::variantFor(source.dataType()), what);
  detail::shader::TensorParams p =
      detail::bindOperands(d, cb, {source, scale, biasOrScale}, destination);
  detail::setOuter(p, outer);
  detail::setInner(p, inner);
  p.a = epsilon_;
  p.flags = bias.valid() ? 1 : 0;
  dispatchReducing(d, p, outer.count(), inner.count());
  detail::markWritten(destination);
  detail::consumeRead(source);
  detail::consumeRead(scale);
  if (bias.valid()) detail::consumeRead(bias);
}

TemporaryTensor TensorLayerNormalization::encode(CommandBuffer& commandBuffer, const Tensor& source,
                                                 const Tensor& scale, const Tensor& bias) {
  TemporaryTensor t = detail::temporaryLike(commandBuffer, source,
                                            "TensorLayerNormalization '" + label + "'", label);
  encode(commandBuffer, source, scale, bias, t);
  return t;
}

}  // namespace vkcnn
