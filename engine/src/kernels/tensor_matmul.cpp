// TensorMatMul and TensorGemm: one shader (tensor_matmul.comp) for batched products; transposes,
// broadcast batch axes and the bias's shape are only strides.
#include "kernels/tensor_encoding.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn {

namespace {

// One product: shapes and strides resolved, operands checked.
struct Product {
  uint32_t m = 1, n = 1, k = 1;
  int64_t am = 0, ak = 0, bk = 0, bn = 0, cm = 0, cn = 0, dm = 0, dn = 0;
  detail::IndexSpace batch{{}, {{}, {}, {}, {}}};
};

void encodeProduct(CommandBuffer& commandBuffer, const std::string& what, const Product& pr,
                   const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& destination,
                   float alpha, float beta) {
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  detail::IndexSpace batch = pr.batch;
  batch.simplify();
  const uint32_t tilesM = (pr.m + 63) / 64, tilesN = (pr.n + 63) / 64;  // tensor_matmul.comp
  detail::DispatchRecorder d(cb, detail::ShaderId::tensor_matmul, detail::variantFor(a.dataType()),
                             what);
  detail::shader::TensorParams p =
      detail::bindOperands(d, cb, {a, b, c.valid() ? c : a}, destination);
  detail::setOuter(p, batch);
  auto strides = [&](int arg, int64_t x, int64_t y) {
    p.args[arg].innerStrides[0][0] = int32_t(x);
    p.args[arg].innerStrides[0][1] = int32_t(y);
  };
  strides(0, pr.am, pr.ak);
  strides(1, pr.bk, pr.bn);
  strides(2, pr.cm, pr.cn);
  strides(3, pr.dm, pr.dn);
  p.i0 = int32_t(pr.m);
  p.i1 = int32_t(pr.n);
  p.i2 = int32_t(pr.k);
  p.i3 = int32_t(tilesN);
  p.i4 = int32_t(tilesM);
  p.a = alpha;
  p.b = beta;
  p.flags = c.valid() ? 1 : 0;
  d.bindParameters(0, &p, sizeof p);
  detail::dispatchFlat(d, uint64_t(tilesM) * tilesN * batch.count());
  detail::markWritten(destination);
  detail::consumeRead(a);
  detail::consumeRead(b);
  if (c.valid()) detail::consumeRead(c);
}

void checkOperands(detail::CommandBufferImpl& cb, const std::string& what,
                   const std::vector<std::pair<const Tensor*, const char*>>& sources,
                   const Tensor& destination) {
  cb.requireEncoding(what);
  for (auto [t, role] : sources) detail::checkUsable(cb, *t, false, what + " " + role);
  detail::checkUsable(cb, destination, true, what + " destination");
  const TensorDataType type = sources[0].first->dataType();
  for (auto [t, role] : sources) {
    detail::requireDataType(*t, type, role, what);
    detail::requireNotInPlace(*t, destination, what);
  }
  detail::requireDataType(destination, type, "destination", what);
}

}  // namespace

// ---- TensorMatMul -----------------------------------------------------------------------------

TensorMatMul::TensorMatMul(const Context& context) : TensorKernel(context, "tensor matmul") {}

namespace {

// numpy matmul's shapes: the result, and the batch shape.
std::vector<uint32_t> matmulShape(const Tensor& a, const Tensor& b, const std::string& what,
                                  std::vector<uint32_t>* batchOut = nullptr) {
  if (!a.valid() || !b.valid())
    throw Error(ErrorCode::invalidArgument, what + ": an operand is empty");
  const auto& as = a.shape();
  const auto& bs = b.shape();
  const uint32_t k = as.back();
  const uint32_t kb = bs.size() == 1 ? bs[0] : bs[bs.size() - 2];
  if (k != kb)
    throw Error(ErrorCode::invalidArgument, what + ": A " + detail::shapeText(as) + " has " +
                                                std::to_string(k) + " columns but B " +
                                                detail::shapeText(bs) + " has " +
                                                std::to_string(kb) + " rows");
  const std::vector<uint32_t> batchA(as.begin(), as.end() - std::min<size_t>(as.size(), 2));
  const std::vector<uint32_t> batchB(bs.begin(), bs.end() - std::min<size_t>(bs.size(), 2));
  std::vector<uint32_t> batch = batchA.empty()   ? batchB
                                : batchB.empty() ? batchA
                                                 : broadcastShape(batchA, batchB, what);
  if (batchOut) *batchOut = batch;
  std::vector<uint32_t> out = batch;
  if (as.size() > 1) out.push_back(as[as.size() - 2]);
  if (bs.size() > 1) out.push_back(bs.back());
  if (out.empty()) out.push_back(1);
  return out;
}

// Strides of `t`'s batch axes seen from `batch` (numpy alignment; 0 where broadcast).
std::vector<int64_t> batchStrides(const Tensor& t, const std::vector<uint32_t>& batch) {
  std::vector<int64_t> out(batch.size(), 0);
  const size_t r = t.rank() >= 2 ? t.rank() - 2 : 0, lead = batch.size() - r;
  for (size_t i = 0; i < r; ++i) out[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
  return out;
}

}  // namespace

std::vector<uint32_t> TensorMatMul::destinationShape(const Tensor& a, const Tensor& b) const {
  return matmulShape(a, b, "TensorMatMul '" + label + "'");
}

void TensorMatMul::encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
                          const Tensor& destination) {
  const std::string what = "TensorMatMul '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  checkOperands(cb, what, {{&a, "A"}, {&b, "B"}}, destination);
  std::vector<uint32_t> batch;
  detail::requireShape(destination, matmulShape(a, b, what, &batch), "destination", what);
  Product pr;
  const size_t ra = a.rank(), rb = b.rank(), rd = destination.rank();
  pr.k = a.shape().back();
  pr.ak = a.strides().back();
  if (ra > 1) pr.m = a.shape()[ra - 2], pr.am = a.strides()[ra - 2];
  if (rb > 1) {
    pr.n = b.shape().back(), pr.bn = b.strides().back(), pr.bk = b.strides()[rb - 2];
  } else {
    pr.bk = b.strides()[0];
  }
  // The destination's matrix axes: the last two, or one (or none) where an operand was a vector.
  size_t next = rd;
  if (rb > 1) pr.dn = destination.strides()[--next];
  if (ra > 1) pr.dm = destination.strides()[--next];
  pr.batch.shape = batch;
  pr.batch.strides[0] = batchStrides(a, batch);
  pr.batch.strides[1] = batchStrides(b, batch);
  pr.batch.strides[2].assign(batch.size(), 0);
  pr.batch.strides[3].assign(destination.strides().begin(),
                             destination.strides().begin() + int64_t(batch.size()));
  encodeProduct(commandBuffer, what, pr, a, b, Tensor(), destination, 1.0f, 0.0f);
}

TemporaryTensor TensorMatMul::encode(CommandBuffer& commandBuffer, const Tensor& a,
                                     const Tensor& b) {
  TemporaryTensor t(commandBuffer, {destinationShape(a, b), a.dataType(), label + " output"});
  encode(commandBuffer, a, b, t);
  return t;
}

// ---- TensorGemm -------------------------------------------------------------------------------

TensorGemm::TensorGemm(const Context& context, const GemmDescriptor& descriptor)
    : TensorKernel(context, "tensor gemm"), descriptor_(descriptor) {}

std::vector<uint32_t> TensorGemm::destinationShape(const Tensor& a, const Tensor& b) const {
  const std::string what = "TensorGemm '" + label + "'";
  if (!a.valid() || !b.valid())
    throw Error(ErrorCode::invalidArgument, what + ": an operand is empty");
  if (a.rank() != 2 || b.rank() != 2)
    throw Error(ErrorCode::invalidArgument, what + ": A " + detail::shapeText(a.shape()) +
                                                " and B " + detail::shapeText(b.shape()) +
                                                " must both have rank 2");
  const uint32_t m = a.shape()[descriptor_.transposeA ? 1 : 0];
  const uint32_t k = a.shape()[descriptor_.transposeA ? 0 : 1];
  const uint32_t kb = b.shape()[descriptor_.transposeB ? 1 : 0];
  const uint32_t n = b.shape()[descriptor_.transposeB ? 0 : 1];
  if (k != kb)
    throw Error(ErrorCode::invalidArgument,
                what + ": A' has " + std::to_string(k) + " columns but B' has " +
                    std::to_string(kb) + " rows (transposeA " +
                    std::to_string(descriptor_.transposeA) + ", transposeB " +
                    std::to_string(descriptor_.transposeB) + ")");
  return {m, n};
}

void TensorGemm::encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
                        const Tensor& c, const Tensor& destination) {
  const std::string what = "TensorGemm '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  if (c.valid())
    checkOperands(cb, what, {{&a, "A"}, {&b, "B"}, {&c, "C"}}, destination);
  else
    checkOperands(cb, what, {{&a, "A"}, {&b, "B"}}, destination);
  const std::vector<uint32_t> shape = destinationShape(a, b);
  detail::requireShape(destination, shape, "destination", what);
  Product pr;
  pr.m = shape[0];
  pr.n = shape[1];
  pr.k = a.shape()[descriptor_.transposeA ? 0 : 1];
  pr.am = a.strides()[descriptor_.transposeA ? 1 : 0];
  pr.ak = a.strides()[descriptor_.transposeA ? 0 : 1];
  pr.bk = b.strides()[descriptor_.transposeB ? 1 : 0];
  pr.bn = b.strides()[descriptor_.transposeB ? 0 : 1];
  if (c.valid()) {
    if (broadcastShape(shape, c.shape(), what + " C") != shape)
      throw Error(ErrorCode::invalidArgument, what + ": C " + detail::shapeText(c.shape()) +
                                                  " does not broadcast to the result " +
                                                  detail::shapeText(shape));
    const std::vector<int64_t> s = detail::broadcastStrides(c, shape);
    pr.cm = s[0];
    pr.cn = s[1];
  }
  pr.dm = destination.strides()[0];
  pr.dn = destination.strides()[1];
  encodeProduct(commandBuffer, what, pr, a, b, c, destination, descriptor_.alpha, descriptor_.beta);
}

TemporaryTensor TensorGemm::encode(CommandBuffer& commandBuffer, const Tensor& a, const Tensor& b,
                                   const Tensor& c) {
  TemporaryTensor t(commandBuffer, {destinationShape(a, b), a.dataType(), label + " output"});
  encode(commandBuffer, a, b, c, t);
  return t;
}

}  // namespace vkcnn
