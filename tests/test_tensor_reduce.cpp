// TensorReduction (every operation over swept axis sets, keepDimensions on and off), TensorSoftmax
// and log-softmax along every axis, and TensorLayerNormalization at every axis with broadcast
// scale and bias: against double-precision references, on strided sources, float32 and small
// float16, poisoned destinations; and their errors. NaN and infinities as PyTorch gives them.
#include <cmath>
#include <limits>

#include "tensor_check.h"

using namespace vkcnn;
using namespace vkcnn::tensortest;

namespace {

const TensorReductionOperation kReductions[] = {
    TensorReductionOperation::sum,       TensorReductionOperation::mean,
    TensorReductionOperation::maximum,   TensorReductionOperation::minimum,
    TensorReductionOperation::product,   TensorReductionOperation::l1,
    TensorReductionOperation::l2,        TensorReductionOperation::logSumExp,
    TensorReductionOperation::sumSquare, TensorReductionOperation::logSum};

double reduce(TensorReductionOperation op, const std::vector<double>& v) {
  double sum = 0, sq = 0, l1 = 0, prod = 1, mx = -INFINITY, mn = INFINITY;
  for (double x : v) {
    sum += x, sq += x * x, l1 += std::fabs(x), prod *= x;
    mx = test::nanMax(mx, x), mn = test::nanMin(mn, x);  // NaN propagates, as in PyTorch
  }
  switch (op) {
    case TensorReductionOperation::sum:
      return sum;
    case TensorReductionOperation::mean:
      return sum / double(v.size());
    case TensorReductionOperation::maximum:
      return mx;
    case TensorReductionOperation::minimum:
      return mn;
    case TensorReductionOperation::product:
      return prod;
    case TensorReductionOperation::l1:
      return l1;
    case TensorReductionOperation::l2:
      return std::sqrt(sq);
    case TensorReductionOperation::logSumExp: {
      // PyTorch's logsumexp shifts by 0 where the maximum is infinite.
      const double shift = std::isinf(mx) ? 0 : mx;
      double s = 0;
      for (double x : v) s += std::exp(x - shift);
      return shift + std::log(s);
    }
    case TensorReductionOperation::sumSquare:
      return sq;
    case TensorReductionOperation::logSum:
      return std::log(sum);
  }
  return NAN;
}

// The host values of a view of a row-major host tensor `x` of `shape` (source.permute(perm)).
std::vector<double> permuted(const std::vector<double>& x, const Shape& shape,
                             const std::vector<uint32_t>& perm, Shape& outShape) {
  outShape.assign(perm.size(), 0);
  for (size_t i = 0; i < perm.size(); ++i) outShape[i] = shape[perm[i]];
  std::vector<double> y(x.size());
  for (uint64_t i = 0; i < y.size(); ++i) {
    auto c = coordinates(i, outShape);
    std::vector<uint32_t> src(shape.size());
    for (size_t k = 0; k < perm.size(); ++k) src[perm[k]] = c[k];
    y[i] = x[flatten(src, shape)];
  }
  return y;
}

}  // namespace

TEST_CASE("tensor reduce: every operation over swept axes, keepDimensions on and off") {
  struct Case {
    Shape shape;
    std::vector<int32_t> axes;
  };
  const Case cases[] = {
      {{13}, {}},           {{5, 7}, {1}},      {{5, 7}, {0}},       {{3, 4, 5}, {0, 2}},
      {{3, 4, 5}, {-1, 1}}, {{2, 3, 4, 5}, {}}, {{2, 3, 4, 5}, {1}}, {{2, 3, 2, 3, 5}, {0, 3}},
      {{1, 300}, {1}},  // more elements than the workgroup has invocations
  };
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16})
    for (const Case& k : cases) {
      if (type == TensorDataType::float16 && countOf(k.shape) > 150) continue;
      // A permuted view of a tensor with the axes reversed, so the source is strided.
      Shape baseShape(k.shape.rbegin(), k.shape.rend());
      std::vector<uint32_t> perm(k.shape.size());
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = uint32_t(perm.size() - 1 - i);
      std::vector<double> base;
      // Positive values keep logSum defined and products away from zero.
      Tensor baseTensor = randomTensor(baseShape, type, 31, base, 0.5f, 1.5f);
      Shape shape;
      std::vector<double> x = permuted(base, baseShape, perm, shape);
      Tensor source = baseTensor.permute(perm);
      std::vector<bool> reducedAxis(shape.size(), k.axes.empty());
      for (int32_t a : k.axes) reducedAxis[size_t(a < 0 ? a + int32_t(shape.size()) : a)] = true;
      for (bool keep : {true, false})
        for (TensorReductionOperation op : kReductions) {
          CAPTURE(name(type));
          CAPTURE(text(shape));
          CAPTURE(keep);
          CAPTURE(std::string(toString(op)));
          TensorReduction kernel(test::context(), op, k.axes, keep);
          const Shape outShape = kernel.destinationShape(source);
          Tensor out = poisoned(outShape, type);
          test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, out); });
          // Group the source values by their kept coordinates.
          Shape keptShape;
          for (size_t i = 0; i < shape.size(); ++i)
            keptShape.push_back(reducedAxis[i] ? 1 : shape[i]);
          std::vector<std::vector<double>> groups(countOf(keptShape));
          for (uint64_t i = 0; i < x.size(); ++i) {
            auto c = coordinates(i, shape);
            for (size_t a = 0; a < c.size(); ++a)
              if (reducedAxis[a]) c[a] = 0;
            groups[flatten(c, keptShape)].push_back(x[i]);
          }
          std::vector<double> expected;
          for (auto& g : groups) expected.push_back(reduce(op, g));
          CHECK(countOf(outShape) == expected.size());
          const double tol = type == TensorDataType::float16 ? 3e-3 : 2e-6;
          CHECK(relativeError(out.readFloats(), expected) <= tol);
        }
    }
  Tensor t(test::context(), {{2, 3}});
  VKCNN_CHECK_ERROR(
      TensorReduction(test::context(), TensorReductionOperation::sum, {2}).destinationShape(t),
      ErrorCode::invalidArgument, "axis 2");
  VKCNN_CHECK_ERROR(
      TensorReduction(test::context(), TensorReductionOperation::sum, {1, -1}).destinationShape(t),
      ErrorCode::invalidArgument, "listed twice");
  VKCNN_CHECK_ERROR(TensorReduction(test::context(), TensorReductionOperation(42)),
                    ErrorCode::invalidArgument, "does not exist");
  CHECK(TensorReduction(test::context(), TensorReductionOperation::sum, {}, false)
            .destinationShape(t) == Shape{1});
}

TEST_CASE("tensor softmax: softmax and log-softmax along every axis") {
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16}) {
    const Shape shape = type == TensorDataType::float32 ? Shape{3, 5, 4, 133} : Shape{2, 3, 5};
    std::vector<double> x;
    Tensor source = randomTensor(shape, type, 41, x, -4, 4);
    for (bool logarithm : {false, true})
      for (int32_t axis = -1; axis < int32_t(shape.size()); ++axis) {
        CAPTURE(name(type));
        CAPTURE(axis);
        CAPTURE(logarithm);
        const uint32_t a = uint32_t(axis < 0 ? axis + int32_t(shape.size()) : axis);
        TensorSoftmax kernel(test::context(), axis, logarithm);
        Tensor out = poisoned(shape, type);
        test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, out); });
        std::vector<double> expected(x.size());
        for (uint64_t i = 0; i < x.size(); ++i) {
          auto c = coordinates(i, shape);
          double m = -INFINITY, s = 0;
          for (uint32_t j = 0; j < shape[a]; ++j) {
            c[a] = j;
            m = test::nanMax(m, x[flatten(c, shape)]);
          }
          for (uint32_t j = 0; j < shape[a]; ++j) {
            c[a] = j;
            s += std::exp(x[flatten(c, shape)] - m);
          }
          expected[i] = logarithm ? x[i] - m - std::log(s) : std::exp(x[i] - m) / s;
        }
        CHECK(relativeError(out.readFloats(), expected) <=
              (type == TensorDataType::float16 ? 3e-3 : 1e-5));
      }
  }
  Tensor t(test::context(), {{2, 3}});
  CommandBuffer cb(test::context());
  VKCNN_CHECK_ERROR(TensorSoftmax(test::context(), 2).encode(cb, t), ErrorCode::invalidArgument,
                    "axis 2");
  cb.commit();
  cb.waitUntilCompleted();
}

TEST_CASE("tensor layer normalization: every axis, broadcast scale and bias") {
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16}) {
    const Shape shape = type == TensorDataType::float32 ? Shape{2, 3, 7, 33} : Shape{2, 3, 5};
    std::vector<double> x;
    Tensor source = randomTensor(shape, type, 51, x, -2, 3);
    for (int32_t axis = 0; axis < int32_t(shape.size()); ++axis)
      for (bool withBias : {true, false}) {
        CAPTURE(name(type));
        CAPTURE(axis);
        CAPTURE(withBias);
        Shape normalized(shape.begin() + axis, shape.end());
        // The scale broadcasts along the normalised shape's first axis; the bias is full.
        Shape scaleShape = normalized;
        scaleShape[0] = 1;
        std::vector<double> scale, bias;
        Tensor scaleTensor = randomTensor(scaleShape, type, 52, scale, 0.5f, 1.5f);
        Tensor biasTensor = withBias ? randomTensor(normalized, type, 53, bias) : Tensor();
        TensorLayerNormalization kernel(test::context(), axis, 1e-5f);
        Tensor out = poisoned(shape, type);
        test::runOnce(
            [&](CommandBuffer& cb) { kernel.encode(cb, source, scaleTensor, biasTensor, out); });
        const uint64_t inner = countOf(normalized), outer = x.size() / inner;
        std::vector<double> expected(x.size());
        for (uint64_t o = 0; o < outer; ++o) {
          double mean = 0, var = 0;
          for (uint64_t j = 0; j < inner; ++j) mean += x[o * inner + j];
          mean /= double(inner);
          for (uint64_t j = 0; j < inner; ++j) var += std::pow(x[o * inner + j] - mean, 2);
          var /= double(inner);
          for (uint64_t j = 0; j < inner; ++j) {
            auto c = coordinates(j, normalized);
            c[0] = 0;
            expected[o * inner + j] =
                (x[o * inner + j] - mean) / std::sqrt(var + 1e-5) * scale[flatten(c, scaleShape)] +
                (withBias ? bias[j] : 0);
          }
        }
        CHECK(relativeError(out.readFloats(), expected) <=
              (type == TensorDataType::float16 ? 3e-3 : 1e-5));
      }
  }
  Context& ctx = test::context();
  Tensor t(ctx, {{2, 3}});
  CommandBuffer cb(ctx);
  TensorLayerNormalization norm(ctx, -1);
  VKCNN_CHECK_ERROR(norm.encode(cb, t, Tensor(ctx, {{2, 3}}), Tensor()), ErrorCode::invalidArgument,
                    "does not broadcast to the normalised shape");
  VKCNN_CHECK_ERROR(norm.encode(cb, t, Tensor(ctx, {{4}}), Tensor()), ErrorCode::invalidArgument,
                    "do not broadcast");
  VKCNN_CHECK_ERROR(TensorLayerNormalization(ctx, 0, -1.0f), ErrorCode::invalidArgument, "epsilon");
  cb.commit();
  cb.waitUntilCompleted();
}

TEST_CASE("tensor argmax and argmin: every axis, ties, keepDimensions") {
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16}) {
    const Shape shape = type == TensorDataType::float32 ? Shape{3, 200, 5} : Shape{3, 4, 5};
    // Few distinct values, so ties are common.
    std::vector<float> data = test::randomFloats(countOf(shape), 61, 0, 4);
    for (float& v : data) v = std::floor(v);
    Tensor source(test::context(), {shape, type, "source"});
    source.writeFloats(data);
    for (int32_t axis = 0; axis < 3; ++axis)
      for (bool maximum : {true, false})
        for (bool last : {false, true})
          for (bool keep : {true, false}) {
            CAPTURE(name(type));
            CAPTURE(axis);
            CAPTURE(maximum);
            CAPTURE(last);
            TensorArgReduction kernel(test::context(), maximum, axis, keep, last);
            const Shape outShape = kernel.destinationShape(source);
            Tensor out = poisoned(outShape, type);
            test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, out); });
            Shape kept = shape;
            kept[size_t(axis)] = 1;
            std::vector<double> expected(countOf(kept));
            for (uint64_t i = 0; i < expected.size(); ++i) {
              auto c = coordinates(i, kept);
              int64_t best = -1;
              double bestValue = 0;
              for (uint32_t j = 0; j < shape[size_t(axis)]; ++j) {
                c[size_t(axis)] = j;
                const double v = data[flatten(c, shape)];
                const bool wins = best < 0 || (maximum ? v > bestValue : v < bestValue) ||
                                  (v == bestValue && last);
                if (wins) best = j, bestValue = v;
              }
              expected[i] = double(best);
            }
            CHECK(countOf(outShape) == expected.size());
            CHECK(relativeError(out.readFloats(), expected) == 0);
          }
  }
}

TEST_CASE("tensor reductions: NaN and infinities propagate as in PyTorch") {
  // Rows of one NaN, +inf, -inf, both infinities, NaN and +inf, and none; short rows (one
  // invocation per row) and long ones (a workgroup's shared-memory reduction). Max and min keep a
  // NaN (GLSL's may drop it: glsl/nan.glsl), argmax and argmin pick it as PyTorch does.
  const double inf = INFINITY;
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16})
    for (uint32_t length : {8u, 300u}) {
      CAPTURE(name(type));
      CAPTURE(length);
      const Shape shape{6, length};
      std::vector<float> data = test::randomFloats(countOf(shape), 71, 0.5f, 1.5f);
      auto at = [&](uint32_t row, uint32_t column) -> float& {
        return data[size_t(row) * length + column];
      };
      at(0, 3) = NAN;
      at(1, 5) = float(inf);
      at(2, 1) = float(-inf);
      at(3, 0) = float(inf);
      at(3, length - 1) = float(-inf);
      at(4, length - 2) = NAN;
      at(4, 6) = float(inf);
      Tensor source(test::context(), {shape, type, "source"});
      source.writeFloats(data);
      std::vector<std::vector<double>> rows(6);
      for (uint32_t r = 0; r < 6; ++r)
        for (uint32_t j = 0; j < length; ++j) rows[r].push_back(stored(at(r, j), type));
      const double tol = type == TensorDataType::float16 ? 3e-3 : 1e-5;
      for (TensorReductionOperation op : kReductions) {
        CAPTURE(std::string(toString(op)));
        TensorReduction kernel(test::context(), op, {1}, false);
        Tensor out(test::context(), {{6}, type, "out"});
        out.writeFloats(std::vector<float>(6, 1234.f));
        test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, out); });
        std::vector<double> expected;
        for (const auto& row : rows) expected.push_back(reduce(op, row));
        const std::vector<float> actual = out.readFloats();
        test::compareSpecials(std::vector<double>(actual.begin(), actual.end()), expected, tol);
      }
      for (bool logarithm : {false, true}) {
        CAPTURE(logarithm);
        TensorSoftmax kernel(test::context(), 1, logarithm);
        Tensor out(test::context(), {shape, type, "out"});
        out.writeFloats(std::vector<float>(countOf(shape), 1234.f));
        test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, out); });
        std::vector<double> expected;
        for (const auto& row : rows) {
          double m = -inf, sum = 0;
          for (double v : row) m = test::nanMax(m, v);
          for (double v : row) sum += std::exp(v - m);
          for (double v : row)
            expected.push_back(logarithm ? v - m - std::log(sum) : std::exp(v - m) / sum);
        }
        const std::vector<float> actual = out.readFloats();
        test::compareSpecials(std::vector<double>(actual.begin(), actual.end()), expected, tol);
      }
      for (bool maximum : {true, false})
        for (bool last : {false, true}) {
          CAPTURE(maximum);
          CAPTURE(last);
          TensorArgReduction kernel(test::context(), maximum, 1, false, last);
          Tensor out(test::context(), {{6}, type, "out"});
          out.writeFloats(std::vector<float>(6, 1234.f));
          test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, out); });
          const std::vector<float> actual = out.readFloats();
          for (uint32_t r = 0; r < 6; ++r) {
            int64_t best = -1;
            double bestValue = 0;
            for (uint32_t j = 0; j < length; ++j) {
              const double v = rows[r][j];
              const bool nan = std::isnan(v), bestNan = best >= 0 && std::isnan(bestValue);
              const bool wins =
                  best < 0 || (nan && (!bestNan || last)) ||
                  (!nan && !bestNan &&
                   ((maximum ? v > bestValue : v < bestValue) || (v == bestValue && last)));
              if (wins) best = j, bestValue = v;
            }
            CAPTURE(r);
            CHECK(actual[r] == float(best));
          }
        }
    }
}
