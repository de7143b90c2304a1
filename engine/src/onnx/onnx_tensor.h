// Host tensors of the ONNX importer: constants (initializers, Constant nodes, folded shape
// arithmetic) decoded from TensorProto with every size checked against the bytes that hold it, and
// the small evaluator that folds shape-computing subgraphs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vkcnn/error.h"

namespace onnx {
class TensorProto;
}

namespace vkcnn::detail::onnx_import {

// TensorProto::DataType values (kept here so callers need not include the protobuf headers).
enum ElementType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBfloat16 = 16,
};

// Largest element count of any tensor the importer accepts (images and constants alike).
inline constexpr int64_t kMaxElements = (int64_t(1) << 31) - 1;
// Largest constant the evaluator computes (ConstantOfShape, Expand, Tile, Range...): the file does
// not bound those, so this does.
inline constexpr int64_t kMaxComputedElements = int64_t(1) << 24;

bool isFloatType(int32_t type);
bool isIntegerType(int32_t type);  // bool too
const char* elementTypeName(int32_t type);

// Product of dims; invalidModel naming `what` if a dimension is negative or the product exceeds
// kMaxElements (no overflow on the way).
int64_t checkedElementCount(const std::vector<int64_t>& dims, const std::string& what);
std::string dimsToString(const std::vector<int64_t>& dims);

struct HostTensor {
  int32_t type = kFloat;
  std::vector<int64_t> dims;
  std::vector<float> f;    // float, float16, bfloat16, double
  std::vector<int64_t> i;  // integers and bool

  bool isFloat() const { return isFloatType(type); }
  int64_t size() const { return isFloat() ? int64_t(f.size()) : int64_t(i.size()); }
  double at(int64_t k) const { return isFloat() ? double(f[size_t(k)]) : double(i[size_t(k)]); }
  int64_t rank() const { return int64_t(dims.size()); }

  static HostTensor floats(std::vector<int64_t> dims, std::vector<float> values);
  static HostTensor int64s(std::vector<int64_t> dims, std::vector<int64_t> values,
                           int32_t type = kInt64);
};

// Validates sizes only (no decoding): element type known, dims sane, exactly one data field whose
// length matches the element count, no external data. invalidModel otherwise. `stripped`: the
// tensor's raw_data, which the model scanner took out of the message (onnx/raw_data.h) and which
// stands for the placeholder the message holds.
void validateTensorProto(const onnx::TensorProto& tensor, const std::string& what,
                         const std::span<const uint8_t>* stripped = nullptr);
// Decodes a validated tensor; string and complex tensors are Error(unsupported).
HostTensor decodeTensorProto(const onnx::TensorProto& tensor, const std::string& what,
                             const std::span<const uint8_t>* stripped = nullptr);

// Errors raised by the evaluator carry no node context; the importer adds it.
// Error(unsupported) with `message`, which ends in ": not supported" unless it says so already.
[[noreturn]] void unsupported(const std::string& message);
[[noreturn]] void invalidModel(const std::string& message);

// ---- the constant evaluator ----------------------------------------------------------------

// Numpy broadcasting of two shapes; invalidModel if they do not broadcast.
std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Normalises a possibly negative axis against a rank; invalidModel when out of range.
int64_t normalizeAxis(int64_t axis, int64_t rank, const std::string& what);

// ONNX Slice clamping of one axis of size `dim`: the first index and the element count.
struct SliceRange {
  int64_t start = 0, count = 0;
};
SliceRange sliceRange(int64_t dim, int64_t start, int64_t end, int64_t step);

HostTensor castTo(const HostTensor& t, int32_t type);
HostTensor reshaped(const HostTensor& t, std::vector<int64_t> dims);
HostTensor transposed(const HostTensor& t, const std::vector<int64_t>& perm);
HostTensor concatenated(const std::vector<const HostTensor*>& parts, int64_t axis);
HostTensor sliced(const HostTensor& t, const std::vector<int64_t>& starts,
                  const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                  const std::vector<int64_t>& steps);
HostTensor gathered(const HostTensor& data, const HostTensor& indices, int64_t axis);
HostTensor expanded(const HostTensor& t, const std::vector<int64_t>& shape);
HostTensor tiled(const HostTensor& t, const std::vector<int64_t>& repeats);
// ReduceSum / Mean / Prod / Max / Min over `axes` (empty: all).
HostTensor reduced(const HostTensor& t, const std::string& op, std::vector<int64_t> axes,
                   bool keepDims);
// Element-wise ops with broadcasting: Add Sub Mul Div Pow Min Max Mod Equal Less Greater
// LessOrEqual GreaterOrEqual And Or Xor; Where takes three.
HostTensor binary(const std::string& op, const HostTensor& a, const HostTensor& b);
HostTensor where(const HostTensor& condition, const HostTensor& a, const HostTensor& b);
// Neg Abs Floor Ceil Round Sqrt Exp Log Reciprocal Relu Sigmoid Tanh Not Sign Identity.
HostTensor unary(const std::string& op, const HostTensor& t);
HostTensor range(const HostTensor& start, const HostTensor& limit, const HostTensor& delta);
HostTensor constantOfShape(const std::vector<int64_t>& shape, const HostTensor& value);

// Reads a constant as a list of int64 (shapes, axes, pads); floats are truncated.
std::vector<int64_t> toInt64s(const HostTensor& t);
std::vector<float> toFloats(const HostTensor& t);

}  // namespace vkcnn::detail::onnx_import
