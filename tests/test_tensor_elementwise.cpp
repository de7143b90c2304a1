// TensorUnary, TensorBinary and TensorWhere against double-precision references: every operation,
// numpy broadcasting at ranks 1-6 (either operand stretched, rank-extended, strided views),
// float32 and small float16, poisoned destinations, temporaries, and the errors; NaN and
// infinities as PyTorch gives them.
#include <cmath>

#include "tensor_check.h"

using namespace vkcnn;
using namespace vkcnn::tensortest;

namespace {

double unaryReference(TensorUnaryOperation op, double x) {
  switch (op) {
    case TensorUnaryOperation::erf:
      return std::erf(x);
    case TensorUnaryOperation::sqrt:
      return std::sqrt(x);
    case TensorUnaryOperation::reciprocal:
      return 1 / x;
    case TensorUnaryOperation::negate:
      return -x;
    case TensorUnaryOperation::exp:
      return std::exp(x);
    case TensorUnaryOperation::log:
      return std::log(x);
    case TensorUnaryOperation::abs:
      return std::fabs(x);
    case TensorUnaryOperation::floor:
      return std::floor(x);
    case TensorUnaryOperation::ceil:
      return std::ceil(x);
    default:
      return x;
  }
}

double binaryReference(TensorBinaryOperation op, double a, double b) {
  switch (op) {
    case TensorBinaryOperation::add:
      return a + b;
    case TensorBinaryOperation::subtract:
      return a - b;
    case TensorBinaryOperation::multiply:
      return a * b;
    case TensorBinaryOperation::divide:
      return a / b;
    case TensorBinaryOperation::power:
      return std::pow(a, b);
    case TensorBinaryOperation::maximum:
      return test::nanMax(a, b);  // torch.maximum: NaN wins
    case TensorBinaryOperation::minimum:
      return test::nanMin(a, b);
    case TensorBinaryOperation::equal:
      return a == b;
    case TensorBinaryOperation::less:
      return a < b;
    case TensorBinaryOperation::greater:
      return a > b;
    case TensorBinaryOperation::lessOrEqual:
      return a <= b;
    case TensorBinaryOperation::greaterOrEqual:
      return a >= b;
    case TensorBinaryOperation::prelu:
      return a >= 0 ? a : a * b;
  }
  return NAN;
}

// Index into a row-major host tensor of `shape` broadcast to `out` for output coordinates `c`.
uint64_t broadcastIndex(const std::vector<uint32_t>& c, const Shape& shape, const Shape& out) {
  const size_t lead = out.size() - shape.size();
  uint64_t i = 0;
  for (size_t k = 0; k < shape.size(); ++k) i = i * shape[k] + (shape[k] == 1 ? 0 : c[lead + k]);
  return i;
}

const TensorUnaryOperation kUnary[] = {
    TensorUnaryOperation::erf,    TensorUnaryOperation::sqrt,  TensorUnaryOperation::reciprocal,
    TensorUnaryOperation::negate, TensorUnaryOperation::exp,   TensorUnaryOperation::log,
    TensorUnaryOperation::abs,    TensorUnaryOperation::floor, TensorUnaryOperation::ceil};

const TensorBinaryOperation kBinary[] = {
    TensorBinaryOperation::add,         TensorBinaryOperation::subtract,
    TensorBinaryOperation::multiply,    TensorBinaryOperation::divide,
    TensorBinaryOperation::power,       TensorBinaryOperation::maximum,
    TensorBinaryOperation::minimum,     TensorBinaryOperation::equal,
    TensorBinaryOperation::less,        TensorBinaryOperation::greater,
    TensorBinaryOperation::lessOrEqual, TensorBinaryOperation::greaterOrEqual,
    TensorBinaryOperation::prelu};

}  // namespace

TEST_CASE("tensor elementwise: unary operations and neurons") {
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16}) {
    const Shape shape = type == TensorDataType::float32 ? Shape{3, 17, 9} : Shape{2, 5, 7};
    std::vector<double> x;
    // Positive inputs for sqrt and log; a permuted view so the source is strided.
    Tensor base = randomTensor(shape, type, 21, x, 0.05f, 3.0f);
    Tensor source = base.permute({2, 0, 1});
    std::vector<double> xs(x.size());
    for (uint64_t i = 0; i < xs.size(); ++i) {
      auto c = coordinates(i, source.shape());
      xs[i] = x[flatten({c[1], c[2], c[0]}, shape)];
    }
    for (TensorUnaryOperation op : kUnary) {
      CAPTURE(name(type));
      CAPTURE(std::string(toString(op)));
      TensorUnary kernel(test::context(), op);
      Tensor out = poisoned(source.shape(), type);
      test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, out); });
      std::vector<double> expected(xs.size());
      for (size_t i = 0; i < xs.size(); ++i) expected[i] = unaryReference(op, xs[i]);
      CHECK(relativeError(out.readFloats(), expected) <= tolerance(type));
    }
    // The neurons on [-3, 3], where sampleNeuron keeps every function finite and non-trivial.
    std::vector<double> z;
    Tensor signedSource = randomTensor(shape, type, 22, z, -3.0f, 3.0f);
    for (uint32_t t = 1; t < kNeuronTypeCount; ++t) {
      if (NeuronType(t) == NeuronType::prelu) continue;
      CAPTURE(name(type));
      CAPTURE(std::string(toString(NeuronType(t))));
      NeuronDescriptor neuron = test::sampleNeuron(NeuronType(t), 1);
      TensorUnary kernel(test::context(), neuron);
      Tensor out = poisoned(shape, type);
      test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, signedSource, out); });
      std::vector<double> expected(z.size());
      for (size_t i = 0; i < z.size(); ++i) expected[i] = applyNeuron(neuron, z[i], 0);
      CHECK(relativeError(out.readFloats(), expected) <= tolerance(type));
    }
  }
  VKCNN_CHECK_ERROR(TensorUnary(test::context(), NeuronDescriptor::of(NeuronType::prelu)),
                    ErrorCode::invalidArgument, "TensorBinaryOperation::prelu");
  VKCNN_CHECK_ERROR(TensorUnary(test::context(), TensorUnaryOperation(99)),
                    ErrorCode::invalidArgument, "does not exist");
}

TEST_CASE("tensor elementwise: binary operations with numpy broadcasting") {
  struct Case {
    Shape a, b;
  };
  const Case cases[] = {
      {{7}, {7}},
      {{3, 5}, {5}},
      {{3, 1}, {1, 4}},
      {{1}, {2, 3, 4}},
      {{2, 1, 5, 1}, {3, 1, 6}},
      {{1, 3, 1, 5, 1, 2}, {2, 1, 4, 1, 3, 1}},
      {{2, 3, 4, 5}, {1, 3, 1, 1}},  // a per-channel bias along NCHW's C
  };
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16})
    for (const Case& k : cases) {
      const Shape out = broadcastShape(k.a, k.b);
      if (type == TensorDataType::float16 && countOf(out) > 200) continue;
      std::vector<double> x, y;
      Tensor a = randomTensor(k.a, type, 3, x, -2, 2);
      Tensor b = randomTensor(k.b, type, 4, y, 0.25f, 2);
      for (TensorBinaryOperation op : kBinary) {
        CAPTURE(name(type));
        CAPTURE(text(k.a));
        CAPTURE(text(k.b));
        CAPTURE(std::string(toString(op)));
        TensorBinary kernel(test::context(), op);
        Tensor result = poisoned(out, type);
        test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, a, b, result); });
        std::vector<double> expected(countOf(out));
        for (uint64_t i = 0; i < expected.size(); ++i) {
          auto c = coordinates(i, out);
          expected[i] = stored(
              binaryReference(op, x[broadcastIndex(c, k.a, out)], y[broadcastIndex(c, k.b, out)]),
              type);
        }
        // power of a negative base to a non-integer exponent is NaN on both sides.
        CHECK(relativeError(result.readFloats(), expected) <= tolerance(type));
      }
    }
}

TEST_CASE("tensor elementwise: comparisons of equal values, where, temporaries and errors") {
  Context& ctx = test::context();
  std::vector<double> x, y, c;
  Tensor a = randomTensor({4, 6}, TensorDataType::float32, 8, x);
  Tensor cond = randomTensor({4, 1}, TensorDataType::float32, 9, c);
  Tensor b = randomTensor({6}, TensorDataType::float32, 10, y);
  // equal / lessOrEqual where the operands are the same values (a against itself through a view).
  TensorBinary equal(ctx, TensorBinaryOperation::equal);
  Tensor same = poisoned({4, 6}, TensorDataType::float32);
  test::runOnce([&](CommandBuffer& cb) { equal.encode(cb, a, a, same); });
  CHECK(relativeError(same.readFloats(), std::vector<double>(24, 1.0)) == 0);

  // condition = cond > 0 through a temporary, then Where(condition, a, b) broadcast.
  TensorBinary greater(ctx, TensorBinaryOperation::greater);
  Tensor zero(ctx, {{1}});
  TensorWhere where(ctx);
  Tensor result = poisoned({4, 6}, TensorDataType::float32);
  test::runOnce([&](CommandBuffer& cb) {
    TemporaryTensor positive = greater.encode(cb, cond, zero);
    CHECK(positive.shape() == Shape{4, 1});
    where.encode(cb, positive, a, b, result);
    CHECK(positive.readCount() == 0);
  });
  std::vector<double> expected(24);
  for (uint32_t i = 0; i < 4; ++i)
    for (uint32_t j = 0; j < 6; ++j) expected[i * 6 + j] = c[i] > 0 ? x[i * 6 + j] : y[j];
  CHECK(relativeError(result.readFloats(), expected) == 0);

  TensorBinary add(ctx, TensorBinaryOperation::add);
  CommandBuffer cb(ctx);
  VKCNN_CHECK_ERROR(add.encode(cb, a, Tensor(ctx, {{5}})), ErrorCode::invalidArgument,
                    "do not broadcast");
  VKCNN_CHECK_ERROR(add.encode(cb, a, b, Tensor(ctx, {{4, 5}})), ErrorCode::invalidArgument,
                    "expected [4, 6]");
  VKCNN_CHECK_ERROR(add.encode(cb, a, b, a), ErrorCode::invalidArgument, "in-place");
  VKCNN_CHECK_ERROR(add.encode(cb, a, Tensor(ctx, {{6}, TensorDataType::float16})),
                    ErrorCode::invalidArgument, "share a data type");
  VKCNN_CHECK_ERROR(TensorBinary(ctx, TensorBinaryOperation(12)), ErrorCode::invalidArgument,
                    "does not exist");
  cb.commit();
  cb.waitUntilCompleted();
}

TEST_CASE("tensor elementwise: NaN and infinities propagate as in PyTorch") {
  // Every pair of {NaN, +inf, -inf, finite values}: maximum and minimum return the NaN (GLSL's
  // may return the other operand: glsl/nan.glsl), comparisons with NaN are false, arithmetic
  // follows IEEE; the unary operations and the neurons (glsl/neuron.glsl) likewise.
  const double inf = INFINITY;
  const std::vector<float> values = {NAN, float(inf), float(-inf), 0.5f, -1.5f, 2.0f, 0.0f};
  const uint32_t n = uint32_t(values.size());
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16}) {
    CAPTURE(name(type));
    const double tol = type == TensorDataType::float16 ? 2e-3 : 1e-5;
    Tensor a(test::context(), {{n, 1}, type, "a"}), b(test::context(), {{1, n}, type, "b"});
    a.writeFloats(values);
    b.writeFloats(values);
    // A TensorUnary on `a`, into a destination poisoned with a finite value.
    const auto runUnary = [&](TensorUnary kernel) {
      Tensor out(test::context(), {{n, 1}, type, "out"});
      out.writeFloats(std::vector<float>(n, 1234.f));
      test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, a, out); });
      return out.readFloats();
    };
    for (TensorBinaryOperation op : kBinary) {
      CAPTURE(std::string(toString(op)));
      TensorBinary kernel(test::context(), op);
      Tensor result(test::context(), {{n, n}, type, "out"});
      result.writeFloats(std::vector<float>(n * n, 1234.f));
      test::runOnce([&](CommandBuffer& cb) { kernel.encode(cb, a, b, result); });
      std::vector<double> expected;
      for (uint32_t i = 0; i < n; ++i)
        for (uint32_t j = 0; j < n; ++j)
          expected.push_back(stored(binaryReference(op, values[i], values[j]), type));
      const std::vector<float> actual = result.readFloats();
      std::vector<double> got(actual.begin(), actual.end());
      if (op >= TensorBinaryOperation::equal && op <= TensorBinaryOperation::greaterOrEqual) {
        CHECK(got == expected);  // no NaN to compare: comparisons give 0 or 1
        continue;
      }
      test::compareSpecials(got, expected, tol);
    }
    for (TensorUnaryOperation op : kUnary) {
      CAPTURE(std::string(toString(op)));
      const std::vector<float> actual = runUnary(TensorUnary(test::context(), op));
      std::vector<double> got, expected;
      for (uint32_t i = 0; i < n; ++i) {
        // GLSL leaves sqrt and log of a negative number undefined.
        const bool domain = op != TensorUnaryOperation::sqrt && op != TensorUnaryOperation::log;
        if (!domain && values[i] < 0) continue;
        got.push_back(actual[i]);
        expected.push_back(stored(unaryReference(op, values[i]), type));
      }
      test::compareSpecials(got, expected, tol);
    }
    for (uint32_t t = 1; t < kNeuronTypeCount; ++t) {
      if (NeuronType(t) == NeuronType::prelu) continue;  // a binary operation here
      CAPTURE(std::string(toString(NeuronType(t))));
      const NeuronDescriptor neuron = test::sampleNeuron(NeuronType(t), 1);
      const std::vector<float> actual = runUnary(TensorUnary(test::context(), neuron));
      std::vector<double> got, expected;
      for (uint32_t i = 0; i < n; ++i) {
        // GLSL's pow and log are undefined for a negative argument (a * -inf + b).
        const bool negativeArgument =
            NeuronType(t) == NeuronType::power || NeuronType(t) == NeuronType::logarithm;
        if (negativeArgument && values[i] == -inf) continue;
        got.push_back(actual[i]);
        expected.push_back(stored(applyNeuron(neuron, values[i], 0), type));
      }
      test::compareSpecials(got, expected, tol);
    }
  }
}
