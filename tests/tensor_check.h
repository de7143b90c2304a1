// Shared by the tests/test_tensor*.cpp files: host tensors in double precision (row-major, with
// the shape), their strided views, and the comparison every Tensor kernel test makes. The tests
// do not use namespace vkcnn::test, whose test::Tensor would clash with vkcnn::Tensor.
#pragma once

#include <vkcnn/tensor.h>
#include <vkcnn/tensor_ops.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "test_support.h"

// So doctest can print shapes and strides in failed comparisons.
namespace std {
template <typename T>
ostream& operator<<(ostream& o, const vector<T>& v) {
  o << "[";
  for (size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << v[i];
  return o << "]";
}
}  // namespace std

namespace vkcnn {
inline std::ostream& operator<<(std::ostream& o, TensorDataType v) {
  return o << toString(v);
}
}  // namespace vkcnn

namespace vkcnn::tensortest {

using Shape = std::vector<uint32_t>;

inline uint64_t countOf(const Shape& s) {
  uint64_t n = 1;
  for (uint32_t d : s) n *= d;
  return n;
}

inline std::string text(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

// Row-major coordinates of flat index `i`.
inline std::vector<uint32_t> coordinates(uint64_t i, const Shape& s) {
  std::vector<uint32_t> c(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    c[k] = uint32_t(i % s[k]);
    i /= s[k];
  }
  return c;
}

inline uint64_t flatten(const std::vector<uint32_t>& c, const Shape& s) {
  uint64_t i = 0;
  for (size_t k = 0; k < s.size(); ++k) i = i * s[k] + c[k];
  return i;
}

// The host value a tensor of `type` holds for `x`.
inline double stored(double x, TensorDataType type) {
  return type == TensorDataType::float16 ? test::roundToHalf(double(float(x))) : double(float(x));
}

// A device tensor of `shape` with random values in [lo, hi); `values` receives them as stored.
inline Tensor randomTensor(const Shape& shape, TensorDataType type, uint32_t seed,
                           std::vector<double>& values, float lo = -1, float hi = 1) {
  std::vector<float> data = test::randomFloats(countOf(shape), seed, lo, hi);
  Tensor t(test::context(), {shape, type, "input " + text(shape)});
  t.writeFloats(data);
  values.assign(data.size(), 0);
  for (size_t i = 0; i < data.size(); ++i) values[i] = stored(data[i], type);
  return t;
}

// A device tensor of `shape` filled with NaN (a poisoned destination).
inline Tensor poisoned(const Shape& shape, TensorDataType type, const std::string& label = "out") {
  Tensor t(test::context(), {shape, type, label});
  t.writeFloats(std::vector<float>(countOf(shape), std::nanf("")));
  return t;
}

inline double tolerance(TensorDataType type) {
  return type == TensorDataType::float16 ? 2e-3 : 1e-5;
}

// Relative L2 error of `actual` against `expected`; NaN where a value is expected (or a value
// where NaN is expected) counts as infinite.
inline double relativeError(const std::vector<float>& actual, const std::vector<double>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const bool ea = std::isnan(expected[i]), aa = std::isnan(actual[i]);
    if (ea || aa) {
      if (ea != aa) return INFINITY;
      continue;
    }
    const double d = double(actual[i]) - expected[i];
    num += d * d;
    den += expected[i] * expected[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline std::string name(TensorDataType type) {
  return toString(type);
}

}  // namespace vkcnn::tensortest
