#include "kernels/tensor_encoding.h"

#include <algorithm>

#include "vulkan/context_impl.h"
#include "memory/temporary_rules.h"

namespace vkcnn::detail {

uint32_t resolveAxis(int32_t axis, uint32_t rank, const std::string& what) {
  const int64_t a = axis < 0 ? int64_t(axis) + rank : axis;
  if (a < 0 || a >= int64_t(rank))
    throw Error(ErrorCode::invalidArgument, what + ": axis " + std::to_string(axis) +
                                                " is outside a rank-" + std::to_string(rank) +
                                                " tensor");
  return uint32_t(a);
}

std::string shapeText(const std::vector<uint32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void checkUsable(const CommandBufferImpl& cb, const Tensor& tensor, bool write,
                 const std::string& what) {
  if (!tensor.valid()) throw Error(ErrorCode::invalidArgument, what + ": a Tensor handle is empty");
  const TensorStorage& s = *tensor.storage();
  if (write && tensor.hasOverlap())
    throw Error(ErrorCode::invalidArgument,
                what + ": destination " + s.describe() + " " + shapeText(tensor.shape()) +
                    " is a broadcast view (elements share storage); kernels cannot write it");
  if (s.context != cb.context)
    throw Error(ErrorCode::invalidArgument,
                what + ": " + s.describe() + " belongs to another Context than command buffer '" +
                    cb.label + "'");
  requireUsableTemporary(s, cb, what, write);
}

void consumeRead(const Tensor& tensor) {
  if (tensor.isTemporary()) TemporaryTensor(tensor).decrementReadCount();
}

void requireDataType(const Tensor& tensor, TensorDataType type, const char* role,
                     const std::string& what) {
  if (tensor.dataType() != type)
    throw Error(ErrorCode::invalidArgument, what + ": " + role + " '" + tensor.label() + "' is " +
                                                toString(tensor.dataType()) +
                                                " but the kernel's tensors are " + toString(type) +
                                                " (all operands of one kernel share a data type)");
}

namespace {
// The storage elements [first, last] a view spans.
std::pair<int64_t, int64_t> span(const Tensor& t) {
  int64_t lo = int64_t(t.storageOffset()), hi = lo;
  for (size_t i = 0; i < t.shape().size(); ++i) {
    const int64_t reach = t.strides()[i] * int64_t(t.shape()[i] - 1);
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}
}  // namespace

void requireNotInPlace(const Tensor& source, const Tensor& destination, const std::string& what) {
  if (source.storage() != destination.storage()) return;
  const auto a = span(source), b = span(destination);
  if (a.first <= b.second && b.first <= a.second)
    throw Error(ErrorCode::invalidArgument, what + ": source and destination share elements of " +
                                                source.storage()->describe() +
                                                "; in-place kernels are not supported");
}

void requireShape(const Tensor& tensor, const std::vector<uint32_t>& shape, const char* role,
                  const std::string& what) {
  if (tensor.shape() != shape)
    throw Error(ErrorCode::invalidArgument, what + ": " + role + " '" + tensor.label() + "' is " +
                                                shapeText(tensor.shape()) + ", expected " +
                                                shapeText(shape));
}

TemporaryTensor temporaryLike(CommandBuffer& commandBuffer, const Tensor& source,
                              const std::string& what, const std::string& label) {
  if (!source.valid()) throw Error(ErrorCode::invalidArgument, what + ": the source is empty");
  return TemporaryTensor(commandBuffer, {source.shape(), source.dataType(), label + " output"});
}

void checkSourceAndDestination(const CommandBufferImpl& commandBuffer, const Tensor& source,
                               const Tensor& destination, const std::vector<uint32_t>& shape,
                               const std::string& what) {
  checkUsable(commandBuffer, source, false, what + " source");
  checkUsable(commandBuffer, destination, true, what + " destination");
  requireDataType(destination, source.dataType(), "destination", what);
  requireShape(destination, shape, "destination", what);
  requireNotInPlace(source, destination, what);
}

ShaderVariant variantFor(TensorDataType type) {
  return type == TensorDataType::float16 ? ShaderVariant::f16 : ShaderVariant::f32;
}

int32_t bindTensor(DispatchRecorder& d, CommandBufferImpl& cb, uint32_t binding,
                   const Tensor& tensor, bool write) {
  TensorStorage& s = *tensor.storage();
  if (write && s.temporary && !s.bound && s.bindTemporary(cb)) d.requireAliasingBarrier();
  const auto [lo, hi] = span(tensor);
  const int64_t esize = bytesPerElement(s.dataType);
  // Whole 4-byte words (the buffer is sized so).
  const VkDeviceSize start = VkDeviceSize(lo * esize) / 4 * 4;
  const VkDeviceSize end = (VkDeviceSize((hi + 1) * esize) + 3) / 4 * 4;
  const uint32_t word =
      d.bindStorageBuffer(binding, s.buffer, start, end - start, write, tensor.storage());
  // The bound range starts `word` words before `start`.
  return int32_t((int64_t(word) * 4 + int64_t(tensor.storageOffset()) * esize - int64_t(start)) /
                 esize);
}

std::vector<bool> onlyAxis(uint32_t rank, uint32_t axis) {
  std::vector<bool> r(rank, false);
  r[axis] = true;
  return r;
}

IndexSpace keptSpace(const Tensor& source, const Tensor& destination,
                     const std::vector<bool>& reduced, bool keepDimensions) {
  IndexSpace outer{{}, {{}, {}}};
  uint32_t kept = 0;  // the destination axis of the next kept source axis
  for (uint32_t i = 0; i < source.rank(); ++i) {
    if (reduced[i]) continue;
    outer.shape.push_back(source.shape()[i]);
    outer.strides[0].push_back(source.strides()[i]);
    outer.strides[1].push_back(destination.strides()[keepDimensions ? i : kept++]);
  }
  outer.simplify();
  return outer;
}

shader::TensorParams bindOperands(
    DispatchRecorder& recorder, CommandBufferImpl& commandBuffer,
    std::initializer_list<std::reference_wrapper<const Tensor>> sources,
    const Tensor& destination) {
  shader::TensorParams p{};
  uint32_t k = 0;
  for (const Tensor& source : sources) {
    p.args[k].offset = bindTensor(recorder, commandBuffer, k + 1, source, false);
    ++k;
  }
  p.args[k].offset = bindTensor(recorder, commandBuffer, k + 1, destination, true);
  return p;
}

void markWritten(const Tensor& tensor) {
  tensor.storage()->written = true;
}

void dispatchFlat(DispatchRecorder& d, uint64_t groups) {
  if (!groups) return;
  const uint64_t x = std::min<uint64_t>(groups, 65535);
  const uint64_t y = (groups + x - 1) / x;
  if (y > 65535)
    throw Error(ErrorCode::limitExceeded, "a tensor kernel needs " + std::to_string(groups) +
                                              " workgroups, more than one dispatch allows");
  d.dispatchGroups(nullptr, 0, uint32_t(x), uint32_t(y), 1);
}

uint64_t IndexSpace::count() const {
  uint64_t n = 1;
  for (uint32_t e : shape) n *= e;
  return n;
}

void IndexSpace::simplify() {
  std::vector<uint32_t> outShape;
  std::vector<std::vector<int64_t>> outStrides(strides.size());
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] == 1) continue;
    if (!outShape.empty()) {
      // Axis `axis` continues the previous kept axis for every operand: merge.
      bool mergeable = true;
      for (size_t k = 0; k < strides.size() && mergeable; ++k)
        mergeable = outStrides[k].back() == strides[k][axis] * int64_t(shape[axis]);
      if (mergeable && uint64_t(outShape.back()) * shape[axis] <= uint64_t(INT32_MAX)) {
        outShape.back() *= shape[axis];
        for (size_t k = 0; k < strides.size(); ++k) outStrides[k].back() = strides[k][axis];
        continue;
      }
    }
    outShape.push_back(shape[axis]);
    for (size_t k = 0; k < strides.size(); ++k) outStrides[k].push_back(strides[k][axis]);
  }
  shape = std::move(outShape);
  strides = std::move(outStrides);
}

std::vector<int64_t> broadcastStrides(const Tensor& tensor, const std::vector<uint32_t>& shape) {
  std::vector<int64_t> out(shape.size(), 0);
  const size_t r = tensor.rank(), lead = shape.size() - r;
  for (size_t i = 0; i < r; ++i) out[lead + i] = tensor.shape()[i] == 1 ? 0 : tensor.strides()[i];
  return out;
}

namespace {
// A shape or strides as the shader's two vectors of four 32-bit ints.
template <typename T>
void writeInts(shader::IVec4 (&dst)[2], const std::vector<T>& values) {
  for (size_t j = 0; j < values.size(); ++j) dst[j / 4][int(j % 4)] = int32_t(values[j]);
}
}  // namespace

namespace {
// One of the two index spaces: its rank, count and shape, and each operand's strides over it.
void setSpace(shader::TensorParams& p, const IndexSpace& space, int32_t& rank, int32_t& count,
              shader::IVec4 (&shape)[2], shader::IVec4 (shader::TensorArg::*strides)[2]) {
  rank = int32_t(space.shape.size());
  count = int32_t(space.count());
  writeInts(shape, space.shape);
  for (size_t k = 0; k < space.strides.size(); ++k) writeInts(p.args[k].*strides, space.strides[k]);
}
}  // namespace

void setOuter(shader::TensorParams& p, const IndexSpace& space) {
  setSpace(p, space, p.rank, p.count, p.shape, &shader::TensorArg::strides);
}

void setInner(shader::TensorParams& p, const IndexSpace& space) {
  setSpace(p, space, p.innerRank, p.innerCount, p.innerShape, &shader::TensorArg::innerStrides);
}

}  // namespace vkcnn::detail
