// TensorMatMul (numpy semantics: rank-1 operands, broadcast batch axes, strided views) and
// TensorGemm (transA, transB, alpha, beta, scalar/row/column/matrix C or none) against double
// references, float32 and float16, poisoned destinations; and the errors.
#include <cmath>

#include "tensor_check.h"

using namespace vkcnn;
using namespace vkcnn::tensortest;

namespace {

// numpy matmul on row-major host tensors.
std::vector<double> matmul(const std::vector<double>& a, Shape as, const std::vector<double>& b,
                           Shape bs, const Shape& out) {
  const bool aVector = as.size() == 1, bVector = bs.size() == 1;
  if (aVector) as.insert(as.begin(), 1);
  if (bVector) bs.push_back(1);
  const uint32_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape full = out;  // the result with M and N restored
  if (aVector && bVector)
    full = {1, 1};
  else if (aVector)
    full.insert(full.end() - 1, 1);
  else if (bVector)
    full.push_back(1);
  const Shape batch(full.begin(), full.end() - 2);
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  std::vector<double> y(countOf(full));
  for (uint64_t i = 0; i < y.size(); ++i) {
    auto c = coordinates(i, full);
    const uint32_t row = c[c.size() - 2], col = c.back();
    auto batchIndex = [&](const Shape& bshape) {
      uint64_t idx = 0;
      const size_t lead = batch.size() - bshape.size();
      for (size_t j = 0; j < bshape.size(); ++j)
        idx = idx * bshape[j] + (bshape[j] == 1 ? 0 : c[lead + j]);
      return idx;
    };
    const uint64_t ai = batchIndex(ab) * m * k, bi = batchIndex(bb) * k * n;
    double s = 0;
    for (uint32_t l = 0; l < k; ++l) s += a[ai + row * k + l] * b[bi + l * n + col];
    y[i] = s;
  }
  return y;
}

}  // namespace

TEST_CASE("tensor matmul: numpy semantics with broadcast batches and vectors") {
  struct Case {
    Shape a, b;
  };
  const Case cases[] = {
      {{5, 7}, {7, 3}},
      {{17, 33}, {33, 19}},
      {{2, 3, 4, 5}, {5, 6}},
      {{3, 1, 4, 5}, {2, 5, 6}},
      {{7}, {7, 4}},
      {{3, 7}, {7}},
      {{7}, {7}},
      {{2, 1, 2, 3, 4}, {1, 3, 1, 4, 2}},
      // Past one 64x64 tile along M and N, ragged K (tensor_matmul.comp's 4x4 per invocation).
      {{70, 40}, {40, 130}},
      {{2, 65, 17}, {17, 66}},
  };
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16})
    for (const Case& k : cases) {
      CAPTURE(name(type));
      CAPTURE(text(k.a));
      CAPTURE(text(k.b));
      TensorMatMul kernel(test::context());
      std::vector<double> x, y;
      Tensor a = randomTensor(k.a, type, 90, x);
      Tensor b = randomTensor(k.b, type, 91, y);
      const Shape out = kernel.destinationShape(a, b);
      if (type == TensorDataType::float16 && countOf(out) > 300) continue;
      Tensor result = poisoned(out, type);
      test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, a, b, result); });
      CHECK(relativeError(result.readFloats(), matmul(x, k.a, y, k.b, out)) <=
            (type == TensorDataType::float16 ? 3e-3 : 1e-5));
    }
  // B given as a transposed (strided) view.
  std::vector<double> x, y;
  Tensor a = randomTensor({2, 6, 9}, TensorDataType::float32, 92, x);
  Tensor bt = randomTensor({2, 5, 9}, TensorDataType::float32, 93, y);
  Tensor b = bt.permute({0, 2, 1});
  std::vector<double> yb(y.size());
  for (uint32_t i = 0; i < 2; ++i)
    for (uint32_t r = 0; r < 9; ++r)
      for (uint32_t c = 0; c < 5; ++c) yb[(i * 9 + r) * 5 + c] = y[(i * 5 + c) * 9 + r];
  TensorMatMul kernel(test::context());
  Tensor result = poisoned({2, 6, 5}, TensorDataType::float32);
  test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, a, b, result); });
  CHECK(relativeError(result.readFloats(), matmul(x, {2, 6, 9}, yb, {2, 9, 5}, {2, 6, 5})) <= 1e-5);

  VKCNN_CHECK_ERROR(kernel.destinationShape(a, a), ErrorCode::invalidArgument, "9 columns");
  VKCNN_CHECK_ERROR(kernel.destinationShape(Tensor(test::context(), {{2, 3, 4}}),
                                            Tensor(test::context(), {{3, 4, 5}})),
                    ErrorCode::invalidArgument, "do not broadcast");
}

TEST_CASE("tensor gemm: every attribute and bias shape") {
  const uint32_t m = 19, k = 13, n = 7;
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16})
    for (int transA = 0; transA < 2; ++transA)
      for (int transB = 0; transB < 2; ++transB)
        for (int bias = 0; bias < 5; ++bias) {  // none, scalar, row, column, matrix
          if (type == TensorDataType::float16 && (transA != transB || bias % 2)) continue;
          CAPTURE(name(type));
          CAPTURE(transA);
          CAPTURE(transB);
          CAPTURE(bias);
          const Shape as = transA ? Shape{k, m} : Shape{m, k};
          const Shape bs = transB ? Shape{n, k} : Shape{k, n};
          const Shape cs = bias == 1   ? Shape{1}
                           : bias == 2 ? Shape{n}
                           : bias == 3 ? Shape{m, 1}
                                       : Shape{m, n};
          std::vector<double> x, y, z;
          Tensor a = randomTensor(as, type, 94, x);
          Tensor b = randomTensor(bs, type, 95, y);
          Tensor c = bias ? randomTensor(cs, type, 96, z) : Tensor();
          GemmDescriptor desc{bool(transA), bool(transB), 0.75f, -1.25f};
          TensorGemm gemm(test::context(), desc);
          CHECK(gemm.destinationShape(a, b) == Shape{m, n});
          Tensor out = poisoned({m, n}, type);
          test::runOnce([&](CommandBuffer& cb) { gemm.encode(cb, a, b, c, out); });
          std::vector<double> expected(m * n);
          for (uint32_t i = 0; i < m; ++i)
            for (uint32_t j = 0; j < n; ++j) {
              double s = 0;
              for (uint32_t l = 0; l < k; ++l)
                s += x[transA ? l * m + i : i * k + l] * y[transB ? j * k + l : l * n + j];
              double cv = bias == 0   ? 0
                          : bias == 1 ? z[0]
                          : bias == 2 ? z[j]
                          : bias == 3 ? z[i]
                                      : z[i * n + j];
              expected[i * n + j] = 0.75 * s - 1.25 * cv;
            }
          CHECK(relativeError(out.readFloats(), expected) <=
                (type == TensorDataType::float16 ? 3e-3 : 1e-5));
        }
  Context& ctx = test::context();
  TensorGemm gemm(ctx, {});
  Tensor a(ctx, {{4, 3}}), b(ctx, {{3, 5}});
  CommandBuffer cb(ctx);
  VKCNN_CHECK_ERROR(gemm.encode(cb, a, b, Tensor(ctx, {{4, 2}})), ErrorCode::invalidArgument,
                    "do not broadcast");
  VKCNN_CHECK_ERROR(gemm.encode(cb, a, b, Tensor(ctx, {{2, 4, 5}})), ErrorCode::invalidArgument,
                    "does not broadcast to the result");
  VKCNN_CHECK_ERROR(gemm.destinationShape(a, a), ErrorCode::invalidArgument, "3 columns");
  VKCNN_CHECK_ERROR(gemm.destinationShape(Tensor(ctx, {{4}}), b), ErrorCode::invalidArgument,
                    "rank 2");
  cb.commit();
  cb.waitUntilCompleted();
}
