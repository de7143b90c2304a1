// TensorConcat, TensorSplit, TensorSlice (copies between views) and TensorGather.
#include <numeric>

#include "kernels/tensor_encoding.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn {

// ---- TensorConcat -----------------------------------------------------------------------------

TensorConcat::TensorConcat(const Context& context, int32_t axis)
    : TensorKernel(context, "tensor concat"), axis_(axis) {}

std::vector<uint32_t> TensorConcat::destinationShape(const std::vector<Tensor>& sources) const {
  const std::string what = "TensorConcat '" + label + "'";
  if (sources.empty()) throw Error(ErrorCode::invalidArgument, what + ": no sources");
  for (const Tensor& s : sources)
    if (!s.valid()) throw Error(ErrorCode::invalidArgument, what + ": a source is empty");
  const uint32_t axis = detail::resolveAxis(axis_, sources[0].rank(), what);
  std::vector<uint32_t> shape = sources[0].shape();
  uint64_t total = shape[axis];
  for (size_t i = 1; i < sources.size(); ++i) {
    std::vector<uint32_t> other = sources[i].shape();
    bool same = other.size() == shape.size();
    for (size_t j = 0; same && j < shape.size(); ++j) same = j == axis || other[j] == shape[j];
    if (!same)
      throw Error(ErrorCode::invalidArgument,
                  what + ": source " + std::to_string(i) + " " + detail::shapeText(other) +
                      " differs from source 0 " + detail::shapeText(shape) +
                      " along an axis other than " + std::to_string(axis));
    total += other[axis];
  }
  if (total > UINT32_MAX)
    throw Error(ErrorCode::limitExceeded, what + ": the concatenated axis exceeds 2^32 - 1");
  shape[axis] = uint32_t(total);
  return shape;
}

void TensorConcat::encode(CommandBuffer& commandBuffer, const std::vector<Tensor>& sources,
                          const Tensor& destination) {
  const std::string what = "TensorConcat '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  const std::vector<uint32_t> shape = destinationShape(sources);
  detail::checkUsable(cb, destination, true, what + " destination");
  detail::requireShape(destination, shape, "destination", what);
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string role = what + " source " + std::to_string(i);
    detail::checkUsable(cb, sources[i], false, role);
    detail::requireDataType(sources[i], destination.dataType(), "source", role);
    detail::requireNotInPlace(sources[i], destination, role);
  }
  const uint32_t axis = detail::resolveAxis(axis_, shape.size(), what);
  int64_t at = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    const int64_t extent = sources[i].shape()[axis];
    detail::encodeUnary(commandBuffer, what + " source " + std::to_string(i),
                        VKCNN_TENSOR_UNARY_COPY, {}, sources[i],
                        destination.slice(int32_t(axis), at, at + extent), true);
    at += extent;
  }
}

TemporaryTensor TensorConcat::encode(CommandBuffer& commandBuffer,
                                     const std::vector<Tensor>& sources) {
  TemporaryTensor t(commandBuffer,
                    {destinationShape(sources), sources[0].dataType(), label + " output"});
  encode(commandBuffer, sources, t);
  return t;
}

// ---- TensorSplit ------------------------------------------------------------------------------

TensorSplit::TensorSplit(const Context& context, int32_t axis, std::vector<uint32_t> sizes)
    : TensorKernel(context, "tensor split"), axis_(axis), sizes_(std::move(sizes)) {
  if (sizes_.empty())
    throw Error(ErrorCode::invalidArgument, "TensorSplit: the list of sizes is empty");
  for (uint32_t s : sizes_)
    if (!s) throw Error(ErrorCode::invalidArgument, "TensorSplit: a part of size 0");
}

TensorSplit::TensorSplit(const Context& context, int32_t axis, uint32_t numberOfOutputs)
    : TensorKernel(context, "tensor split"), axis_(axis), numberOfOutputs_(numberOfOutputs) {
  if (!numberOfOutputs)
    throw Error(ErrorCode::invalidArgument, "TensorSplit: numberOfOutputs is 0");
}

std::vector<uint32_t> TensorSplit::sizes(const Tensor& source, uint32_t& axis) const {
  const std::string what = "TensorSplit '" + label + "'";
  if (!source.valid()) throw Error(ErrorCode::invalidArgument, what + ": the source is empty");
  axis = detail::resolveAxis(axis_, source.rank(), what);
  const uint32_t extent = source.shape()[axis];
  std::vector<uint32_t> parts = sizes_;
  if (parts.empty()) {
    const uint32_t each = (extent + numberOfOutputs_ - 1) / numberOfOutputs_;
    if (uint64_t(each) * (numberOfOutputs_ - 1) >= extent)
      throw Error(ErrorCode::invalidArgument, what + ": " + std::to_string(numberOfOutputs_) +
                                                  " parts of axis " + std::to_string(axis) +
                                                  " (extent " + std::to_string(extent) +
                                                  ") would leave a part empty");
    for (uint32_t i = 0; i < numberOfOutputs_; ++i)
      parts.push_back(i + 1 < numberOfOutputs_ ? each : extent - each * i);
  }
  const uint64_t total = std::accumulate(parts.begin(), parts.end(), uint64_t(0));
  if (total != extent)
    throw Error(ErrorCode::invalidArgument,
                what + ": the parts add up to " + std::to_string(total) + " but axis " +
                    std::to_string(axis) + " of " + detail::shapeText(source.shape()) + " has " +
                    std::to_string(extent));
  return parts;
}

std::vector<std::vector<uint32_t>> TensorSplit::destinationShapes(const Tensor& source) const {
  uint32_t axis = 0;
  std::vector<std::vector<uint32_t>> shapes;
  for (uint32_t part : sizes(source, axis)) {
    shapes.push_back(source.shape());
    shapes.back()[axis] = part;
  }
  return shapes;
}

void TensorSplit::encode(CommandBuffer& commandBuffer, const Tensor& source,
                         const std::vector<Tensor>& destinations) {
  const std::string what = "TensorSplit '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  detail::checkUsable(cb, source, false, what + " source");
  uint32_t axis = 0;
  const std::vector<uint32_t> parts = sizes(source, axis);
  if (destinations.size() != parts.size())
    throw Error(ErrorCode::invalidArgument, what + ": " + std::to_string(destinations.size()) +
                                                " destinations for " +
                                                std::to_string(parts.size()) + " parts");
  const auto shapes = destinationShapes(source);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string role = what + " destination " + std::to_string(i);
    detail::checkUsable(cb, destinations[i], true, role);
    detail::requireShape(destinations[i], shapes[i], "destination", role);
    detail::requireDataType(destinations[i], source.dataType(), "destination", role);
    detail::requireNotInPlace(source, destinations[i], role);
  }
  int64_t at = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    detail::encodeUnary(commandBuffer, what + " part " + std::to_string(i), VKCNN_TENSOR_UNARY_COPY,
                        {}, source.slice(int32_t(axis), at, at + parts[i]), destinations[i], false);
    at += parts[i];
  }
  detail::consumeRead(source);
}

std::vector<TemporaryTensor> TensorSplit::encode(CommandBuffer& commandBuffer,
                                                 const Tensor& source) {
  std::vector<TemporaryTensor> out;
  std::vector<Tensor> handles;
  for (const auto& shape : destinationShapes(source)) {
    out.emplace_back(commandBuffer,
                     TensorDescriptor{shape, source.dataType(),
                                      label + " output " + std::to_string(out.size())});
    handles.push_back(out.back());
  }
  encode(commandBuffer, source, handles);
  return out;
}

// ---- TensorSlice ------------------------------------------------------------------------------

TensorSlice::TensorSlice(const Context& context, std::vector<int64_t> starts,
                         std::vector<int64_t> ends, std::vector<int32_t> axes,
                         std::vector<int64_t> steps)
    : TensorKernel(context, "tensor slice"),
      starts_(std::move(starts)),
      ends_(std::move(ends)),
      steps_(std::move(steps)),
      axes_(std::move(axes)) {
  if (starts_.size() != ends_.size() || (!axes_.empty() && axes_.size() != starts_.size()) ||
      (!steps_.empty() && steps_.size() != starts_.size()))
    throw Error(ErrorCode::invalidArgument,
                "TensorSlice: starts (" + std::to_string(starts_.size()) + "), ends (" +
                    std::to_string(ends_.size()) + "), axes (" + std::to_string(axes_.size()) +
                    ") and steps (" + std::to_string(steps_.size()) +
                    ") must have one entry per sliced axis");
}

Tensor TensorSlice::view(const Tensor& source) const {
  const std::string what = "TensorSlice '" + label + "'";
  if (!source.valid()) throw Error(ErrorCode::invalidArgument, what + ": the source is empty");
  std::vector<bool> seen(source.rank(), false);
  Tensor v = source;
  for (size_t i = 0; i < starts_.size(); ++i) {
    const int32_t axis = axes_.empty() ? int32_t(i) : axes_[i];
    const uint32_t a = detail::resolveAxis(axis, source.rank(), what);
    if (seen[a])
      throw Error(ErrorCode::invalidArgument,
                  what + ": axis " + std::to_string(axis) + " is sliced twice");
    seen[a] = true;
    v = v.slice(int32_t(a), starts_[i], ends_[i], steps_.empty() ? 1 : steps_[i]);
  }
  return v;
}

void TensorSlice::encode(CommandBuffer& commandBuffer, const Tensor& source,
                         const Tensor& destination) {
  const std::string what = "TensorSlice '" + label + "'";
  detail::encodeUnary(commandBuffer, what, VKCNN_TENSOR_UNARY_COPY, {}, view(source), destination,
                      true);
}

TemporaryTensor TensorSlice::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryTensor t(commandBuffer,
                    {destinationShape(source), source.dataType(), label + " output"});
  encode(commandBuffer, source, t);
  return t;
}

// ---- TensorGather -----------------------------------------------------------------------------

TensorGather::TensorGather(const Context& context, int32_t axis)
    : TensorKernel(context, "tensor gather"), axis_(axis) {}

std::vector<uint32_t> TensorGather::destinationShape(const Tensor& data,
                                                     const Tensor& indices) const {
  const std::string what = "TensorGather '" + label + "'";
  if (!data.valid() || !indices.valid())
    throw Error(ErrorCode::invalidArgument, what + ": the data or the indices are empty");
  const uint32_t axis = detail::resolveAxis(axis_, data.rank(), what);
  std::vector<uint32_t> shape(data.shape().begin(), data.shape().begin() + axis);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + axis + 1, data.shape().end());
  if (shape.size() > kMaxTensorRank)
    throw Error(ErrorCode::invalidArgument, what + ": the result would have rank " +
                                                std::to_string(shape.size()) + ", more than " +
                                                std::to_string(kMaxTensorRank));
  return shape;
}

void TensorGather::encode(CommandBuffer& commandBuffer, const Tensor& data, const Tensor& indices,
                          const Tensor& destination) {
  const std::string what = "TensorGather '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  detail::checkUsable(cb, data, false, what + " data");
  detail::checkUsable(cb, indices, false, what + " indices");
  detail::checkUsable(cb, destination, true, what + " destination");
  if (indices.dataType() != TensorDataType::float32)
    throw Error(ErrorCode::invalidArgument,
                what + ": indices '" + indices.label() + "' must be float32 (holding integers)");
  detail::requireDataType(destination, data.dataType(), "destination", what);
  const std::vector<uint32_t> shape = destinationShape(data, indices);
  detail::requireShape(destination, shape, "destination", what);
  detail::requireNotInPlace(data, destination, what);
  detail::requireNotInPlace(indices, destination, what);
  const uint32_t axis = detail::resolveAxis(axis_, data.rank(), what);
  const uint32_t q = indices.rank();
  detail::IndexSpace space{shape, {{}, {}, destination.strides()}};
  for (uint32_t j = 0; j < shape.size(); ++j) {
    const bool indexAxis = j >= axis && j < axis + q;
    space.strides[0].push_back(indexAxis ? 0 : data.strides()[j < axis ? j : j - q + 1]);
    space.strides[1].push_back(indexAxis ? indices.strides()[j - axis] : 0);
  }
  space.simplify();
  detail::DispatchRecorder d(cb, detail::ShaderId::tensor_gather,
                             detail::variantFor(data.dataType()), what);
  detail::shader::TensorParams p = detail::bindOperands(d, cb, {data, indices}, destination);
  detail::setOuter(p, space);
  p.i0 = int32_t(data.strides()[axis]);
  p.i1 = int32_t(data.shape()[axis]);
  d.bindParameters(0, &p, sizeof p);
  detail::dispatchFlat(d, (space.count() + 255) / 256);
  detail::markWritten(destination);
  detail::consumeRead(data);
  detail::consumeRead(indices);
}

TemporaryTensor TensorGather::encode(CommandBuffer& commandBuffer, const Tensor& data,
                                     const Tensor& indices) {
  TemporaryTensor t(commandBuffer,
                    {destinationShape(data, indices), data.dataType(), label + " output"});
  encode(commandBuffer, data, indices, t);
  return t;
}

}  // namespace vkcnn
