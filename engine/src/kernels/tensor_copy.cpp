// TensorCopy, TensorTranspose and the element-wise kernels: TensorUnary, TensorBinary, TensorWhere.
#include <algorithm>
#include <cmath>

#include "kernels/tensor_encoding.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn {

namespace detail {

namespace {
constexpr int32_t kMaxTilesPerAxis = 1024;
constexpr uint64_t kMaxTransposeItems = 4096;
}  // namespace

// One dispatch of tensor_unary.comp over `source` -> `destination` (same shape), or of the tiled
// transpose when the copy moves the innermost axis. Checks everything first.
void encodeUnary(CommandBuffer& commandBuffer, const std::string& what, int32_t op,
                 const NeuronDescriptor& neuron, const Tensor& source, const Tensor& destination,
                 bool consume) {
  CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  checkSourceAndDestination(cb, source, destination, source.shape(), what);
  IndexSpace space{source.shape(), {source.strides(), destination.strides()}};
  space.simplify();
  // The tiled transpose: a copy where the destination's innermost axis A is not the source's B,
  // with at most 4 other axes (any other copy goes element by element).
  int a = -1, b = -1;
  if (op == VKCNN_TENSOR_UNARY_COPY && space.shape.size() >= 2 &&
      space.shape.size() <= 2 + VKCNN_TENSOR_TRANSPOSE_MAX_OUTER_RANK) {
    auto smallest = [&](size_t k) {
      int best = 0;
      for (size_t j = 1; j < space.shape.size(); ++j)
        if (std::llabs(space.strides[k][j]) < std::llabs(space.strides[k][size_t(best)]))
          best = int(j);
      return best;
    };
    b = smallest(0);
    a = smallest(1);
    if (a == b || space.shape[size_t(a)] < 4 || space.shape[size_t(b)] < 4) a = b = -1;
  }
  const ShaderId shader = a >= 0 ? ShaderId::tensor_transpose : ShaderId::tensor_unary;
  DispatchRecorder d(cb, shader, variantFor(source.dataType()), what);
  const int32_t sourceOffset = bindTensor(d, cb, 1, source, false);
  const int32_t destinationOffset = bindTensor(d, cb, 2, destination, true);
  if (a >= 0) {
    shader::TensorTransposePush pc{};
    for (size_t j = 0; j < space.shape.size(); ++j) {
      if (int(j) == a || int(j) == b) continue;
      pc.shape[pc.rank] = int32_t(space.shape[j]);
      pc.sourceStrides[pc.rank] = int32_t(space.strides[0][j]);
      pc.destinationStrides[pc.rank] = int32_t(space.strides[1][j]);
      pc.rank++;
    }
    uint64_t count = 1;
    for (int j = 0; j < pc.rank; ++j) count *= uint64_t(pc.shape[j]);
    pc.count = int32_t(count);
    pc.extentA = int32_t(space.shape[size_t(a)]);
    pc.extentB = int32_t(space.shape[size_t(b)]);
    pc.tilesA = (pc.extentA + 31) / 32;
    pc.tilesB = (pc.extentB + 31) / 32;
    pc.sourceA = int32_t(space.strides[0][size_t(a)]);
    pc.sourceB = int32_t(space.strides[0][size_t(b)]);
    pc.destinationA = int32_t(space.strides[1][size_t(a)]);
    pc.destinationB = int32_t(space.strides[1][size_t(b)]);
    pc.sourceOffset = sourceOffset;
    pc.destinationOffset = destinationOffset;
    // Workgroup (x, y, z) is tile (A, B) of outer item z; the shader loops over what is beyond
    // these caps (more workgroups than that would not run at once anyway).
    d.dispatchGroups(&pc, sizeof pc, uint32_t(std::min(pc.tilesA, kMaxTilesPerAxis)),
                     uint32_t(std::min(pc.tilesB, kMaxTilesPerAxis)),
                     uint32_t(std::min<uint64_t>(count, kMaxTransposeItems)));
  } else {
    shader::TensorParams p{};
    p.args[0].offset = sourceOffset;
    p.args[1].offset = destinationOffset;
    setOuter(p, space);
    p.op = op;
    p.i0 = int32_t(neuron.type);
    p.a = neuron.a;
    p.b = neuron.b;
    p.c = neuron.c;
    d.bindParameters(0, &p, sizeof p);
    dispatchFlat(d, (space.count() + 255) / 256);
  }
  markWritten(destination);
  if (consume) consumeRead(source);
}

}  // namespace detail

// ---- TensorCopy -------------------------------------------------------------------------------

TensorCopy::TensorCopy(const Context& context) : TensorKernel(context, "tensor copy") {}

void TensorCopy::encode(CommandBuffer& commandBuffer, const Tensor& source,
                        const Tensor& destination) {
  detail::encodeUnary(commandBuffer, "TensorCopy '" + label + "'", VKCNN_TENSOR_UNARY_COPY, {},
                      source, destination, true);
}

TemporaryTensor TensorCopy::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryTensor t =
      detail::temporaryLike(commandBuffer, source, "TensorCopy '" + label + "'", label);
  encode(commandBuffer, source, t);
  return t;
}

// ---- TensorTranspose --------------------------------------------------------------------------

TensorTranspose::TensorTranspose(const Context& context, std::vector<uint32_t> perm)
    : TensorKernel(context, "tensor transpose"), perm_(std::move(perm)) {}

namespace {
std::vector<uint32_t> resolvedPerm(const std::vector<uint32_t>& perm, uint32_t rank) {
  if (!perm.empty()) return perm;
  std::vector<uint32_t> reversed(rank);
  for (uint32_t i = 0; i < rank; ++i) reversed[i] = rank - 1 - i;
  return reversed;
}
}  // namespace

std::vector<uint32_t> TensorTranspose::destinationShape(const Tensor& source) const {
  if (!source.valid())
    throw Error(ErrorCode::invalidArgument, "TensorTranspose '" + label + "': the source is empty");
  return source.permute(resolvedPerm(perm_, source.rank())).shape();
}

void TensorTranspose::encode(CommandBuffer& commandBuffer, const Tensor& source,
                             const Tensor& destination) {
  const std::string what = "TensorTranspose '" + label + "'";
  if (!source.valid()) throw Error(ErrorCode::invalidArgument, what + ": the source is empty");
  detail::encodeUnary(commandBuffer, what, VKCNN_TENSOR_UNARY_COPY, {},
                      source.permute(resolvedPerm(perm_, source.rank())), destination, true);
}

TemporaryTensor TensorTranspose::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryTensor t(commandBuffer,
                    {destinationShape(source), source.dataType(), label + " output"});
  encode(commandBuffer, source, t);
  return t;
}

// ---- TensorUnary ------------------------------------------------------------------------------

const char* toString(TensorUnaryOperation operation) {
  switch (operation) {
    case TensorUnaryOperation::neuron:
      return "neuron";
    case TensorUnaryOperation::erf:
      return "erf";
    case TensorUnaryOperation::sqrt:
      return "sqrt";
    case TensorUnaryOperation::reciprocal:
      return "reciprocal";
    case TensorUnaryOperation::negate:
      return "negate";
    case TensorUnaryOperation::exp:
      return "exp";
    case TensorUnaryOperation::log:
      return "log";
    case TensorUnaryOperation::abs:
      return "abs";
    case TensorUnaryOperation::floor:
      return "floor";
    case TensorUnaryOperation::ceil:
      return "ceil";
  }
  return "unknown";
}

TensorUnary::TensorUnary(const Context& context, TensorUnaryOperation operation)
    : TensorKernel(context, std::string("tensor ") + toString(operation)), operation_(operation) {
  detail::requireEnumerator(operation, TensorUnaryOperation::ceil, "TensorUnary", "operation");
}

TensorUnary::TensorUnary(const Context& context, const NeuronDescriptor& neuron)
    : TensorKernel(context, std::string("tensor ") + toString(neuron.type)),
      operation_(TensorUnaryOperation::neuron),
      neuron_(neuron) {
  if (uint32_t(neuron.type) >= kNeuronTypeCount)
    throw Error(
        ErrorCode::invalidArgument,
        "TensorUnary: neuron type " + std::to_string(uint32_t(neuron.type)) + " does not exist");
  if (neuron.type == NeuronType::prelu)
    throw Error(ErrorCode::invalidArgument,
                "TensorUnary: PReLU takes its slopes as a tensor: use TensorBinary "
                "(TensorBinaryOperation::prelu)");
}

void TensorUnary::encode(CommandBuffer& commandBuffer, const Tensor& source,
                         const Tensor& destination) {
  detail::encodeUnary(commandBuffer, "TensorUnary '" + label + "'", int32_t(operation_), neuron_,
                      source, destination, true);
}

TemporaryTensor TensorUnary::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryTensor t =
      detail::temporaryLike(commandBuffer, source, "TensorUnary '" + label + "'", label);
  encode(commandBuffer, source, t);
  return t;
}

// ---- Broadcasting kernels ---------------------------------------------------------------------

std::vector<uint32_t> broadcastShape(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                                     const std::string& what) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<uint32_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const uint32_t x = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const uint32_t y = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1)
      throw Error(ErrorCode::invalidArgument,
                  what + ": shapes " + detail::shapeText(a) + " and " + detail::shapeText(b) +
                      " do not broadcast (axis " + std::to_string(i) + " of the result: " +
                      std::to_string(x) + " against " + std::to_string(y) + ")");
    out[i] = std::max(x, y);
  }
  return out;
}

namespace {

const char* binaryName(TensorBinaryOperation op) {
  switch (op) {
    case TensorBinaryOperation::add:
      return "add";
    case TensorBinaryOperation::subtract:
      return "subtract";
    case TensorBinaryOperation::multiply:
      return "multiply";
    case TensorBinaryOperation::divide:
      return "divide";
    case TensorBinaryOperation::power:
      return "power";
    case TensorBinaryOperation::maximum:
      return "maximum";
    case TensorBinaryOperation::minimum:
      return "minimum";
    case TensorBinaryOperation::equal:
      return "equal";
    case TensorBinaryOperation::less:
      return "less";
    case TensorBinaryOperation::greater:
      return "greater";
    case TensorBinaryOperation::lessOrEqual:
      return "lessOrEqual";
    case TensorBinaryOperation::greaterOrEqual:
      return "greaterOrEqual";
    case TensorBinaryOperation::prelu:
      return "prelu";
  }
  return nullptr;
}

// Encodes a broadcasting kernel over `sources` (2 or 3) into `destination`.
void encodeBroadcast(CommandBuffer& commandBuffer, const std::string& what, detail::ShaderId shader,
                     int32_t op, const std::vector<Tensor>& sources, const Tensor& destination) {
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  static const char* roles[] = {"first source", "second source", "third source"};
  for (size_t i = 0; i < sources.size(); ++i)
    detail::checkUsable(cb, sources[i], false, what + " " + roles[i]);
  detail::checkUsable(cb, destination, true, what + " destination");
  const TensorDataType type = sources[0].dataType();
  for (size_t i = 1; i < sources.size(); ++i)
    detail::requireDataType(sources[i], type, roles[i], what);
  detail::requireDataType(destination, type, "destination", what);
  std::vector<uint32_t> shape = sources[0].shape();
  for (size_t i = 1; i < sources.size(); ++i)
    shape = broadcastShape(shape, sources[i].shape(), what);
  detail::requireShape(destination, shape, "destination", what);
  for (const Tensor& s : sources) detail::requireNotInPlace(s, destination, what);
  detail::IndexSpace space{shape, {}};
  for (const Tensor& s : sources) space.strides.push_back(detail::broadcastStrides(s, shape));
  space.strides.push_back(destination.strides());
  space.simplify();
  detail::DispatchRecorder d(cb, shader, detail::variantFor(type), what);
  detail::shader::TensorParams p{};
  for (size_t i = 0; i < sources.size(); ++i)
    p.args[i].offset = detail::bindTensor(d, cb, uint32_t(i + 1), sources[i], false);
  p.args[sources.size()].offset =
      detail::bindTensor(d, cb, uint32_t(sources.size() + 1), destination, true);
  detail::setOuter(p, space);
  p.op = op;
  d.bindParameters(0, &p, sizeof p);
  detail::dispatchFlat(d, (space.count() + 255) / 256);
  detail::markWritten(destination);
  for (const Tensor& s : sources) detail::consumeRead(s);
}

TemporaryTensor broadcastTemporary(CommandBuffer& commandBuffer, const std::string& what,
                                   const std::string& label, const std::vector<Tensor>& sources) {
  for (const Tensor& s : sources)
    if (!s.valid()) throw Error(ErrorCode::invalidArgument, what + ": a source is empty");
  std::vector<uint32_t> shape = sources[0].shape();
  for (size_t i = 1; i < sources.size(); ++i)
    shape = broadcastShape(shape, sources[i].shape(), what);
  return TemporaryTensor(commandBuffer, {shape, sources[0].dataType(), label + " output"});
}

}  // namespace

const char* toString(TensorBinaryOperation operation) {
  const char* name = binaryName(operation);
  return name ? name : "unknown";
}

TensorBinary::TensorBinary(const Context& context, TensorBinaryOperation operation)
    : TensorKernel(context, std::string("tensor ") + toString(operation)), operation_(operation) {
  if (!binaryName(operation))
    throw Error(
        ErrorCode::invalidArgument,
        "TensorBinary: operation " + std::to_string(uint32_t(operation)) + " does not exist");
}

void TensorBinary::encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
                          const Tensor& destination) {
  encodeBroadcast(commandBuffer, "TensorBinary '" + label + "'", detail::ShaderId::tensor_binary,
                  int32_t(operation_), {a, b}, destination);
}

TemporaryTensor TensorBinary::encode(CommandBuffer& commandBuffer, const Tensor& a,
                                     const Tensor& b) {
  const std::string what = "TensorBinary '" + label + "'";
  TemporaryTensor t = broadcastTemporary(commandBuffer, what, label, {a, b});
  encode(commandBuffer, a, b, t);
  return t;
}

TensorWhere::TensorWhere(const Context& context) : TensorKernel(context, "tensor where") {}

void TensorWhere::encode(CommandBuffer& commandBuffer, const Tensor& condition, const Tensor& x,
                         const Tensor& y, const Tensor& destination) {
  encodeBroadcast(commandBuffer, "TensorWhere '" + label + "'", detail::ShaderId::tensor_where, 0,
                  {condition, x, y}, destination);
}

TemporaryTensor TensorWhere::encode(CommandBuffer& commandBuffer, const Tensor& condition,
                                    const Tensor& x, const Tensor& y) {
  const std::string what = "TensorWhere '" + label + "'";
  TemporaryTensor t = broadcastTemporary(commandBuffer, what, label, {condition, x, y});
  encode(commandBuffer, condition, x, y, t);
  return t;
}

}  // namespace vkcnn
