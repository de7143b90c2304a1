// TensorPad: ONNX Pad on any axes (constant, reflect, edge, wrap), one invocation per output
// element.
#include <algorithm>

#include "kernels/tensor_checks.h"
#include "kernels/tensor_encoding.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn {

TensorPad::TensorPad(const Context& context, TensorPaddingMode mode, std::vector<int64_t> pads,
                     float value, std::vector<int32_t> axes)
    : TensorKernel(context, "tensor pad"),
      mode_(mode),
      pads_(std::move(pads)),
      value_(value),
      axes_(std::move(axes)) {
  detail::checkTensorPad(mode, pads_.size(), axes_.size(), "TensorPad");
}

std::vector<int64_t> TensorPad::before(const Tensor& source, std::vector<uint32_t>& shape) const {
  const std::string what = "TensorPad '" + label + "'";
  if (!source.valid()) throw Error(ErrorCode::invalidArgument, what + ": the source is empty");
  const uint32_t rank = source.rank();
  const size_t listed = pads_.size() / 2;
  if (axes_.empty() && listed != rank)
    throw Error(ErrorCode::invalidArgument,
                what + ": " + std::to_string(pads_.size()) + " pads for a rank-" +
                    std::to_string(rank) + " source (" + std::to_string(2 * rank) + " needed)");
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < listed; ++i) {
    const uint32_t a = axes_.empty() ? uint32_t(i) : detail::resolveAxis(axes_[i], rank, what);
    if (seen[a])
      throw Error(ErrorCode::invalidArgument,
                  what + ": axis " + std::to_string(a) + " is listed twice");
    seen[a] = true;
    begin[a] = pads_[i];
    end[a] = pads_[listed + i];
  }
  shape.resize(rank);
  for (uint32_t a = 0; a < rank; ++a) {
    const int64_t extent = int64_t(source.shape()[a]) + begin[a] + end[a];
    if (extent < 1 || extent > INT32_MAX)
      throw Error(ErrorCode::invalidArgument, what + ": axis " + std::to_string(a) + " of extent " +
                                                  std::to_string(source.shape()[a]) +
                                                  " padded by " + std::to_string(begin[a]) +
                                                  " and " + std::to_string(end[a]) + " has " +
                                                  std::to_string(extent) + " elements");
    if (mode_ != TensorPaddingMode::constant && std::max(begin[a], end[a]) > INT32_MAX / 4)
      throw Error(ErrorCode::invalidArgument,
                  what + ": a pad of axis " + std::to_string(a) + " is too large");
    shape[a] = uint32_t(extent);
  }
  return begin;
}

std::vector<uint32_t> TensorPad::destinationShape(const Tensor& source) const {
  std::vector<uint32_t> shape;
  before(source, shape);
  return shape;
}

void TensorPad::encode(CommandBuffer& commandBuffer, const Tensor& source,
                       const Tensor& destination) {
  const std::string what = "TensorPad '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  std::vector<uint32_t> shape;
  const std::vector<int64_t> begin = before(source, shape);
  detail::checkSourceAndDestination(cb, source, destination, shape, what);
  detail::DispatchRecorder d(cb, detail::ShaderId::tensor_pad,
                             detail::variantFor(source.dataType()), what);
  detail::shader::TensorParams p = detail::bindOperands(d, cb, {source}, destination);
  // No simplify: the shader maps each axis' coordinate on its own.
  detail::IndexSpace space{shape, {source.strides(), destination.strides(), begin}};
  detail::setOuter(p, space);
  for (uint32_t j = 0; j < source.rank(); ++j)
    p.innerShape[j / 4][int(j % 4)] = int32_t(source.shape()[j]);
  p.op = int32_t(mode_);
  p.a = value_;
  d.bindParameters(0, &p, sizeof p);
  detail::dispatchFlat(d, (space.count() + 255) / 256);
  detail::markWritten(destination);
  detail::consumeRead(source);
}

TemporaryTensor TensorPad::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryTensor t(commandBuffer,
                    {destinationShape(source), source.dataType(), label + " output"});
  encode(commandBuffer, source, t);
  return t;
}

}  // namespace vkcnn
