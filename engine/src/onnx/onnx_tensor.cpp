#include "onnx/onnx_tensor.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>

namespace vkcnn::detail::onnx_import {

static_assert(std::endian::native == std::endian::little,
              "raw ONNX tensor data is little-endian and read in place");

void unsupported(const std::string& message) {
  // Every message about a feature vkcnn lacks says so in the same words, whatever it describes.
  if (message.find("not supported") != std::string::npos)
    throw Error(ErrorCode::unsupported, message);
  throw Error(ErrorCode::unsupported, message + ": not supported");
}
void invalidModel(const std::string& message) {
  throw Error(ErrorCode::invalidModel, message);
}

bool isFloatType(int32_t type) {
  return type == kFloat || type == kFloat16 || type == kDouble || type == kBfloat16;
}

bool isIntegerType(int32_t type) {
  switch (type) {
    case kUint8:
    case kInt8:
    case kUint16:
    case kInt16:
    case kInt32:
    case kInt64:
    case kBool:
    case kUint32:
    case kUint64:
      return true;
    default:
      return false;
  }
}

const char* elementTypeName(int32_t type) {
  switch (type) {
    case kFloat:
      return "float32";
    case kUint8:
      return "uint8";
    case kInt8:
      return "int8";
    case kUint16:
      return "uint16";
    case kInt16:
      return "int16";
    case kInt32:
      return "int32";
    case kInt64:
      return "int64";
    case kString:
      return "string";
    case kBool:
      return "bool";
    case kFloat16:
      return "float16";
    case kDouble:
      return "float64";
    case kUint32:
      return "uint32";
    case kUint64:
      return "uint64";
    case kComplex64:
      return "complex64";
    case kComplex128:
      return "complex128";
    case kBfloat16:
      return "bfloat16";
    default:
      return "undefined";
  }
}

namespace {

// Bytes per element in raw_data; 0 for types without a raw form.
size_t rawElementSize(int32_t type) {
  switch (type) {
    case kFloat:
    case kInt32:
    case kUint32:
      return 4;
    case kUint8:
    case kInt8:
    case kBool:
      return 1;
    case kUint16:
    case kInt16:
    case kFloat16:
    case kBfloat16:
      return 2;
    case kInt64:
    case kDouble:
    case kUint64:
    case kComplex64:
      return 8;
    case kComplex128:
      return 16;
    default:
      return 0;
  }
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h >> 15) << 31;
  const uint32_t exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24.
    const float v = std::ldexp(float(mantissa), -24);
    return sign ? -v : v;
  }
  uint32_t bits;
  if (exponent == 31)
    bits = sign | 0x7f800000u | (mantissa << 13);
  else
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  return std::bit_cast<float>(bits);
}

float bfloat16ToFloat(uint16_t b) {
  return std::bit_cast<float>(uint32_t(b) << 16);
}

// float -> float16 -> float, nearest even (Cast to FLOAT16 of a constant).
float roundToHalf(float x) {
  if (!std::isfinite(x) || x == 0) return x;
  const float a = std::fabs(x);
  if (a >= 65520.f) return std::copysign(std::numeric_limits<float>::infinity(), x);
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  // 11 significant bits for normals; a fixed quantum of 2^-24 for subnormals.
  const int quantumExponent = std::max(e - 11, -24);
  const float q = std::ldexp(std::nearbyint(std::ldexp(a, -quantumExponent)), quantumExponent);
  return std::copysign(q, x);
}

template <typename T>
T readRaw(std::span<const uint8_t> raw, size_t index) {
  T v;
  std::memcpy(&v, raw.data() + index * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

std::string dimsToString(const std::vector<int64_t>& dims) {
  std::ostringstream s;
  s << "[";
  for (size_t k = 0; k < dims.size(); ++k) s << (k ? ", " : "") << dims[k];
  s << "]";
  return s.str();
}

int64_t checkedElementCount(const std::vector<int64_t>& dims, const std::string& what) {
  for (int64_t d : dims) {
    if (d < 0)
      invalidModel(what + ": dimension " + std::to_string(d) + " of shape " + dimsToString(dims) +
                   " is negative");
    if (d > kMaxElements)
      invalidModel(what + ": dimension " + std::to_string(d) + " of shape " + dimsToString(dims) +
                   " exceeds the limit of " + std::to_string(kMaxElements) + " elements");
  }
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d == 0) return 0;
  }
  for (int64_t d : dims) {
    if (n > kMaxElements / d)
      invalidModel(what + ": shape " + dimsToString(dims) + " has more than " +
                   std::to_string(kMaxElements) + " elements");
    n *= d;
  }
  return n;
}

HostTensor HostTensor::floats(std::vector<int64_t> dims, std::vector<float> values) {
  HostTensor t;
  t.type = kFloat;
  t.dims = std::move(dims);
  t.f = std::move(values);
  return t;
}

HostTensor HostTensor::int64s(std::vector<int64_t> dims, std::vector<int64_t> values,
                              int32_t type) {
  HostTensor t;
  t.type = type;
  t.dims = std::move(dims);
  t.i = std::move(values);
  return t;
}

// The bytes of raw_data: the message's own, or those the scanner took out of it.
static std::span<const uint8_t> rawBytes(const onnx::TensorProto& t,
                                         const std::span<const uint8_t>* stripped) {
  if (stripped) return *stripped;
  return {reinterpret_cast<const uint8_t*>(t.raw_data().data()), t.raw_data().size()};
}

void validateTensorProto(const onnx::TensorProto& t, const std::string& what,
                         const std::span<const uint8_t>* stripped) {
  // External data left here came from memory with no directory to read it from.
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0) {
    std::string file;
    for (const auto& e : t.external_data())
      if (e.key() == "location") file = " in '" + e.value() + "'";
    invalidModel(what + ": tensor data stored outside the model" + file +
                 " (external data) needs the model's directory: import the model from its "
                 "file, or set OnnxImportOptions::externalDataDirectory");
  }
  if (t.has_segment()) invalidModel(what + ": segmented tensors are not accepted");
  const int32_t type = t.data_type();
  if (type <= kUndefined || type > kBfloat16)
    invalidModel(what + ": element type " + std::to_string(type) + " is not a known ONNX type");
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  const int64_t n = checkedElementCount(dims, what);

  struct Field {
    const char* name;
    int64_t size;
  };
  const Field fields[] = {{"float_data", t.float_data_size()},
                          {"int32_data", t.int32_data_size()},
                          {"string_data", t.string_data_size()},
                          {"int64_data", t.int64_data_size()},
                          {"double_data", t.double_data_size()},
                          {"uint64_data", t.uint64_data_size()},
                          {"raw_data", int64_t(rawBytes(t, stripped).size())}};
  const Field* used = nullptr;
  for (const Field& f : fields) {
    if (f.size == 0) continue;
    if (used) invalidModel(what + ": holds data in both " + used->name + " and " + f.name);
    used = &f;
  }
  if (!used) {
    if (n != 0)
      invalidModel(what + ": shape " + dimsToString(dims) + " declares " + std::to_string(n) +
                   " elements but the tensor holds no data");
    return;
  }
  const std::string field = used->name;
  if (field == "raw_data") {
    const size_t element = rawElementSize(type);
    if (element == 0)
      invalidModel(what + ": " + elementTypeName(type) + " tensors cannot use raw_data");
    if (uint64_t(used->size) != uint64_t(n) * element)
      invalidModel(what + ": shape " + dimsToString(dims) + " of " + elementTypeName(type) +
                   " needs " + std::to_string(uint64_t(n) * element) + " bytes of raw_data, " +
                   std::to_string(used->size) + " given");
    return;
  }
  const char* expected = nullptr;
  int64_t perElement = 1;
  switch (type) {
    case kFloat:
      expected = "float_data";
      break;
    case kComplex64:
      expected = "float_data";
      perElement = 2;
      break;
    case kInt32:
    case kInt16:
    case kInt8:
    case kUint16:
    case kUint8:
    case kBool:
    case kFloat16:
    case kBfloat16:
      expected = "int32_data";
      break;
    case kInt64:
      expected = "int64_data";
      break;
    case kString:
      expected = "string_data";
      break;
    case kDouble:
      expected = "double_data";
      break;
    case kComplex128:
      expected = "double_data";
      perElement = 2;
      break;
    case kUint32:
    case kUint64:
      expected = "uint64_data";
      break;
  }
  if (field != expected)
    invalidModel(what + ": " + elementTypeName(type) + " data in " + field + " (expected " +
                 expected + ")");
  if (used->size != n * perElement)
    invalidModel(what + ": shape " + dimsToString(dims) + " declares " + std::to_string(n) +
                 " elements but " + field + " holds " + std::to_string(used->size) + " values");
}

HostTensor decodeTensorProto(const onnx::TensorProto& t, const std::string& what,
                             const std::span<const uint8_t>* stripped) {
  validateTensorProto(t, what, stripped);
  HostTensor h;
  h.type = t.data_type();
  h.dims.assign(t.dims().begin(), t.dims().end());
  const int64_t n = checkedElementCount(h.dims, what);
  const std::span<const uint8_t> raw = rawBytes(t, stripped);
  const bool isRaw = !raw.empty();
  const size_t count = size_t(n);
  switch (h.type) {
    case kFloat:
      if (isRaw) {
        // Appended through a small buffer rather than zero-filled first and then overwritten:
        // one pass over fresh pages instead of two (553 MB for vgg16).
        h.f.reserve(count);
        float chunk[1024];
        for (size_t k = 0; k < count; k += std::size(chunk)) {
          const size_t c = std::min(count - k, std::size(chunk));
          std::memcpy(chunk, raw.data() + k * 4, c * 4);
          h.f.insert(h.f.end(), chunk, chunk + c);
        }
      } else {
        h.f.assign(t.float_data().begin(), t.float_data().end());
      }
      break;
    case kDouble:
      h.f.resize(count);
      for (size_t k = 0; k < count; ++k)
        h.f[k] = float(isRaw ? readRaw<double>(raw, k) : t.double_data(int(k)));
      break;
    case kFloat16:
    case kBfloat16:
      h.f.resize(count);
      for (size_t k = 0; k < count; ++k) {
        const uint16_t bits = isRaw ? readRaw<uint16_t>(raw, k) : uint16_t(t.int32_data(int(k)));
        h.f[k] = h.type == kFloat16 ? halfToFloat(bits) : bfloat16ToFloat(bits);
      }
      break;
    case kInt64:
      h.i.resize(count);
      for (size_t k = 0; k < count; ++k)
        h.i[k] = isRaw ? readRaw<int64_t>(raw, k) : t.int64_data(int(k));
      break;
    case kUint64:
    case kUint32:
      h.i.resize(count);
      for (size_t k = 0; k < count; ++k) {
        const uint64_t v = isRaw ? (h.type == kUint64 ? readRaw<uint64_t>(raw, k)
                                                      : uint64_t(readRaw<uint32_t>(raw, k)))
                                 : t.uint64_data(int(k));
        h.i[k] = int64_t(v);
      }
      break;
    case kInt32:
    case kInt16:
    case kInt8:
    case kUint16:
    case kUint8:
    case kBool:
      h.i.resize(count);
      for (size_t k = 0; k < count; ++k) {
        int64_t v = 0;
        if (!isRaw) {
          v = t.int32_data(int(k));
        } else if (h.type == kInt32) {
          v = readRaw<int32_t>(raw, k);
        } else if (h.type == kInt16) {
          v = readRaw<int16_t>(raw, k);
        } else if (h.type == kUint16) {
          v = readRaw<uint16_t>(raw, k);
        } else if (h.type == kInt8) {
          v = readRaw<int8_t>(raw, k);
        } else {
          v = readRaw<uint8_t>(raw, k);
        }
        h.i[k] = h.type == kBool ? (v != 0) : v;
      }
      break;
    default:
      unsupported(what + ": " + elementTypeName(h.type) + " tensors are not supported");
  }
  return h;
}

// ---- evaluator ------------------------------------------------------------------------------

namespace {

std::vector<int64_t> stridesOf(const std::vector<int64_t>& dims) {
  // Element counts are checked, but an empty tensor (a zero dimension) passes that check while
  // its other dimensions' product may overflow (found by fuzz_onnx); its strides are never used.
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) {
    int64_t product = 0;
    s[k - 1] = __builtin_mul_overflow(s[k], dims[k], &product) ? 0 : product;
  }
  return s;
}

// Refuses constants the file does not already bound (computed from small inputs).
int64_t computedCount(const std::vector<int64_t>& dims, int64_t bound, const std::string& what) {
  const int64_t n = checkedElementCount(dims, what);
  if (n > std::max(bound, kMaxComputedElements))
    invalidModel(what + ": the computed constant " + dimsToString(dims) + " would have " +
                 std::to_string(n) + " elements, beyond the importer's limit of " +
                 std::to_string(kMaxComputedElements));
  return n;
}

HostTensor sameKind(const HostTensor& like, std::vector<int64_t> dims) {
  HostTensor t;
  t.type = like.type;
  t.dims = std::move(dims);
  return t;
}

void push(HostTensor& out, const HostTensor& in, int64_t k) {
  if (in.isFloat())
    out.f.push_back(in.f[size_t(k)]);
  else
    out.i.push_back(in.i[size_t(k)]);
}

// Offset in a tensor of `dims` (right-aligned against `outDims`, broadcast where 1) for the
// output coordinate `coord`.
int64_t broadcastOffset(const std::vector<int64_t>& coord, const std::vector<int64_t>& outDims,
                        const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  const size_t shift = outDims.size() - dims.size();
  for (size_t k = 0; k < dims.size(); ++k)
    if (dims[k] != 1) offset += coord[k + shift] * strides[k];
  return offset;
}

void advance(std::vector<int64_t>& coord, const std::vector<int64_t>& dims) {
  for (size_t k = dims.size(); k-- > 0;) {
    if (++coord[k] < dims[k]) return;
    coord[k] = 0;
  }
}

}  // namespace

std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    const int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      invalidModel("shapes " + dimsToString(a) + " and " + dimsToString(b) + " do not broadcast");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalizeAxis(int64_t axis, int64_t rank, const std::string& what) {
  if (rank < 1 || axis < -rank || axis >= rank)
    invalidModel(what + ": axis " + std::to_string(axis) + " is out of range for rank " +
                 std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

SliceRange sliceRange(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (step == 0) invalidModel("Slice: a step is 0");
  if (start < 0) start = start < -dim ? (step > 0 ? 0 : -1) : start + dim;
  if (end < 0) end = end < -dim ? -1 : end + dim;
  // |step| beyond any extent takes one element; no overflow on the way.
  const int64_t stride = step > 0 ? std::min(step, kMaxElements + 1)
                                  : (step < -kMaxElements ? kMaxElements + 1 : -step);
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? (end - start - 1) / stride + 1 : 0};
  }
  start = std::clamp<int64_t>(start, -1, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? (start - end - 1) / stride + 1 : 0};
}

HostTensor castTo(const HostTensor& t, int32_t type) {
  HostTensor out = sameKind(t, t.dims);
  out.type = type;
  if (type == kString || type == kComplex64 || type == kComplex128 || type <= kUndefined ||
      type > kBfloat16)
    unsupported(std::string("Cast to ") + elementTypeName(type) + " is not supported");
  if (isFloatType(type)) {
    out.f.resize(size_t(t.size()));
    for (int64_t k = 0; k < t.size(); ++k) {
      float v = float(t.at(k));
      if (type == kFloat16) v = roundToHalf(v);
      if (type == kBfloat16) v = bfloat16ToFloat(uint16_t(std::bit_cast<uint32_t>(v) >> 16));
      out.f[size_t(k)] = v;
    }
    return out;
  }
  out.i.resize(size_t(t.size()));
  for (int64_t k = 0; k < t.size(); ++k) {
    int64_t v;
    if (t.isFloat()) {
      const double d = t.f[size_t(k)];
      if (type == kBool)
        v = d != 0;
      else if (!std::isfinite(d) || std::fabs(d) >= 9.2e18)
        v = 0;  // undefined in ONNX; keep it deterministic
      else
        v = int64_t(d);
    } else {
      v = t.i[size_t(k)];
    }
    switch (type) {
      case kBool:
        v = v != 0;
        break;
      case kInt8:
        v = int8_t(v);
        break;
      case kUint8:
        v = uint8_t(v);
        break;
      case kInt16:
        v = int16_t(v);
        break;
      case kUint16:
        v = uint16_t(v);
        break;
      case kInt32:
        v = int32_t(v);
        break;
      case kUint32:
        v = uint32_t(v);
        break;
      default:
        break;
    }
    out.i[size_t(k)] = v;
  }
  return out;
}

HostTensor reshaped(const HostTensor& t, std::vector<int64_t> dims) {
  if (checkedElementCount(dims, "Reshape") != t.size())
    invalidModel("cannot reshape " + dimsToString(t.dims) + " to " + dimsToString(dims));
  HostTensor out = t;
  out.dims = std::move(dims);
  return out;
}

HostTensor transposed(const HostTensor& t, const std::vector<int64_t>& perm) {
  const size_t rank = t.dims.size();
  if (perm.size() != rank) invalidModel("Transpose: perm has the wrong length");
  std::vector<int64_t> outDims(rank);
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < rank; ++k) {
    if (perm[k] < 0 || perm[k] >= int64_t(rank) || seen[size_t(perm[k])])
      invalidModel("Transpose: perm " + dimsToString(perm) + " is not a permutation");
    seen[size_t(perm[k])] = true;
    outDims[k] = t.dims[size_t(perm[k])];
  }
  const auto inStrides = stridesOf(t.dims);
  HostTensor out = sameKind(t, outDims);
  std::vector<int64_t> coord(rank, 0);
  for (int64_t n = 0; n < t.size(); ++n) {
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k) offset += coord[k] * inStrides[size_t(perm[k])];
    push(out, t, offset);
    advance(coord, outDims);
  }
  return out;
}

HostTensor concatenated(const std::vector<const HostTensor*>& parts, int64_t axis) {
  if (parts.empty()) invalidModel("Concat: no inputs");
  const HostTensor& first = *parts[0];
  const int64_t rank = first.rank();
  axis = normalizeAxis(axis, rank, "Concat");
  std::vector<int64_t> dims = first.dims;
  dims[size_t(axis)] = 0;
  for (const HostTensor* p : parts) {
    if (p->rank() != rank || p->isFloat() != first.isFloat())
      invalidModel("Concat: inputs differ in rank or type");
    for (int64_t k = 0; k < rank; ++k)
      if (k != axis && p->dims[size_t(k)] != first.dims[size_t(k)])
        invalidModel("Concat: shapes " + dimsToString(first.dims) + " and " +
                     dimsToString(p->dims) + " differ off the axis");
    dims[size_t(axis)] += p->dims[size_t(axis)];
  }
  // A constant listed many times could make the result far larger than the file.
  std::vector<const HostTensor*> distinct = parts;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  int64_t distinctSize = 0;
  for (const HostTensor* p : distinct) distinctSize += p->size();
  computedCount(dims, distinctSize, "Concat");
  HostTensor out = sameKind(first, dims);
  int64_t outer = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= dims[size_t(k)];
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor* p : parts) {
      int64_t inner = 1;
      for (int64_t k = axis; k < rank; ++k) inner *= p->dims[size_t(k)];
      for (int64_t k = 0; k < inner; ++k) push(out, *p, o * inner + k);
    }
  return out;
}

HostTensor sliced(const HostTensor& t, const std::vector<int64_t>& starts,
                  const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                  const std::vector<int64_t>& steps) {
  const int64_t rank = t.rank();
  std::vector<int64_t> first(size_t(rank), 0), step(size_t(rank), 1), dims = t.dims;
  std::vector<bool> seen(size_t(rank), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = normalizeAxis(axes[k], rank, "Slice");
    if (seen[size_t(a)]) invalidModel("Slice: axis " + std::to_string(a) + " appears twice");
    seen[size_t(a)] = true;
    const SliceRange r = sliceRange(t.dims[size_t(a)], starts[k], ends[k], steps[k]);
    first[size_t(a)] = r.start;
    step[size_t(a)] = steps[k];
    dims[size_t(a)] = r.count;
  }
  const auto strides = stridesOf(t.dims);
  HostTensor out = sameKind(t, dims);
  const int64_t n = checkedElementCount(dims, "Slice");
  std::vector<int64_t> coord(size_t(rank), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t offset = 0;
    for (int64_t k = 0; k < rank; ++k)
      offset += (first[size_t(k)] + coord[size_t(k)] * step[size_t(k)]) * strides[size_t(k)];
    push(out, t, offset);
    advance(coord, dims);
  }
  return out;
}

HostTensor gathered(const HostTensor& data, const HostTensor& indices, int64_t axis) {
  if (indices.isFloat()) invalidModel("Gather: indices must be integers");
  const int64_t rank = data.rank();
  if (rank == 0) invalidModel("Gather: data must have rank 1 or more");
  axis = normalizeAxis(axis, rank, "Gather");
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  computedCount(dims, data.size(), "Gather");
  const int64_t extent = data.dims[size_t(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= data.dims[size_t(k)];
  for (int64_t k = axis + 1; k < rank; ++k) inner *= data.dims[size_t(k)];
  HostTensor out = sameKind(data, dims);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t idx : indices.i) {
      if (idx < -extent || idx >= extent)
        invalidModel("Gather: index " + std::to_string(idx) + " is out of range for axis size " +
                     std::to_string(extent));
      if (idx < 0) idx += extent;
      for (int64_t k = 0; k < inner; ++k) push(out, data, (o * extent + idx) * inner + k);
    }
  return out;
}

HostTensor expanded(const HostTensor& t, const std::vector<int64_t>& shape) {
  const std::vector<int64_t> dims = broadcastShapes(t.dims, shape);
  const int64_t n = computedCount(dims, t.size(), "Expand");
  const auto strides = stridesOf(t.dims);
  HostTensor out = sameKind(t, dims);
  std::vector<int64_t> coord(dims.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    push(out, t, broadcastOffset(coord, dims, t.dims, strides));
    advance(coord, dims);
  }
  return out;
}

HostTensor tiled(const HostTensor& t, const std::vector<int64_t>& repeats) {
  if (repeats.size() != t.dims.size()) invalidModel("Tile: repeats must have one value per axis");
  std::vector<int64_t> dims = t.dims;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (repeats[k] < 0) invalidModel("Tile: a repeat is negative");
    if (repeats[k] > 0 && dims[k] > kMaxElements / repeats[k])
      invalidModel("Tile: the result is too large");
    dims[k] *= repeats[k];
  }
  const int64_t n = computedCount(dims, 0, "Tile");
  const auto strides = stridesOf(t.dims);
  HostTensor out = sameKind(t, dims);
  std::vector<int64_t> coord(dims.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t offset = 0;
    for (size_t k = 0; k < dims.size(); ++k) offset += (coord[k] % t.dims[k]) * strides[k];
    push(out, t, offset);
    advance(coord, dims);
  }
  return out;
}

HostTensor reduced(const HostTensor& t, const std::string& op, std::vector<int64_t> axes,
                   bool keepDims) {
  const int64_t rank = t.rank();
  std::vector<bool> reduce(size_t(rank), axes.empty());
  for (int64_t a : axes) reduce[size_t(normalizeAxis(a, rank, op))] = true;
  std::vector<int64_t> outDims, keptDims(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    keptDims[size_t(k)] = reduce[size_t(k)] ? 1 : t.dims[size_t(k)];
    if (!reduce[size_t(k)] || keepDims) outDims.push_back(keptDims[size_t(k)]);
  }
  const int64_t outCount = checkedElementCount(keptDims, op);
  std::vector<double> acc(size_t(outCount), op == "ReduceProd" ? 1.0 : 0.0);
  std::vector<bool> any(size_t(outCount), false);
  const auto outStrides = stridesOf(keptDims);
  std::vector<int64_t> coord(size_t(rank), 0);
  for (int64_t e = 0; e < t.size(); ++e) {
    int64_t o = 0;
    for (int64_t k = 0; k < rank; ++k)
      if (!reduce[size_t(k)]) o += coord[size_t(k)] * outStrides[size_t(k)];
    const double v = t.at(e);
    double& a = acc[size_t(o)];
    if (op == "ReduceSum" || op == "ReduceMean")
      a += v;
    else if (op == "ReduceProd")
      a *= v;
    else if (op == "ReduceMax")
      a = any[size_t(o)] ? std::max(a, v) : v;
    else if (op == "ReduceMin")
      a = any[size_t(o)] ? std::min(a, v) : v;
    else
      unsupported(op + " is not evaluated on constants");
    any[size_t(o)] = true;
    advance(coord, t.dims);
  }
  if (op == "ReduceMean" && outCount > 0) {
    const double count = double(t.size()) / double(outCount);
    for (double& a : acc) a /= count;
  }
  HostTensor out = sameKind(t, outDims);
  for (double a : acc) {
    if (out.isFloat())
      out.f.push_back(float(a));
    else
      out.i.push_back(int64_t(a));
  }
  return out;
}

namespace {

double applyBinary(const std::string& op, double a, double b, bool integer) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") {
    if (integer) {
      if (b == 0) invalidModel("Div: integer division by zero in a constant");
      return std::trunc(a / b);
    }
    return a / b;
  }
  if (op == "Pow") return std::pow(a, b);
  if (op == "Min") return std::min(a, b);
  if (op == "Max") return std::max(a, b);
  if (op == "Equal") return a == b;
  if (op == "Less") return a < b;
  if (op == "Greater") return a > b;
  if (op == "LessOrEqual") return a <= b;
  if (op == "GreaterOrEqual") return a >= b;
  if (op == "And") return (a != 0) && (b != 0);
  if (op == "Or") return (a != 0) || (b != 0);
  if (op == "Xor") return (a != 0) != (b != 0);
  unsupported(op + " is not evaluated on constants");
}

bool isComparison(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
         op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor";
}

}  // namespace

HostTensor binary(const std::string& op, const HostTensor& a, const HostTensor& b) {
  const std::vector<int64_t> dims = broadcastShapes(a.dims, b.dims);
  const int64_t n = computedCount(dims, std::max(a.size(), b.size()), op);
  const bool integer = !a.isFloat() && !b.isFloat();
  HostTensor out;
  out.dims = dims;
  out.type = isComparison(op) ? kBool : (a.isFloat() ? a.type : b.isFloat() ? b.type : a.type);
  const auto sa = stridesOf(a.dims), sb = stridesOf(b.dims);
  std::vector<int64_t> coord(dims.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    const int64_t ia = broadcastOffset(coord, dims, a.dims, sa);
    const int64_t ib = broadcastOffset(coord, dims, b.dims, sb);
    // Integers stay exact: doubles lose int64 precision beyond 2^53.
    if (integer && (op == "Add" || op == "Sub" || op == "Mul")) {
      const uint64_t x = uint64_t(a.i[size_t(ia)]), y = uint64_t(b.i[size_t(ib)]);
      const uint64_t r = op == "Add" ? x + y : op == "Sub" ? x - y : x * y;
      out.i.push_back(int64_t(r));
    } else if (integer && op == "Div") {
      const int64_t x = a.i[size_t(ia)], y = b.i[size_t(ib)];
      if (y == 0) invalidModel("Div: integer division by zero in a constant");
      out.i.push_back(y == -1 ? int64_t(0 - uint64_t(x)) : x / y);
    } else {
      const double r = applyBinary(op, a.at(ia), b.at(ib), integer);
      if (isFloatType(out.type))
        out.f.push_back(float(r));
      else
        out.i.push_back(std::isfinite(r) && std::fabs(r) < 9.2e18 ? int64_t(r) : 0);
    }
    advance(coord, dims);
  }
  return out;
}

HostTensor where(const HostTensor& condition, const HostTensor& a, const HostTensor& b) {
  if (a.isFloat() != b.isFloat()) invalidModel("Where: the two branches differ in type");
  const std::vector<int64_t> dims =
      broadcastShapes(condition.dims, broadcastShapes(a.dims, b.dims));
  const int64_t n = computedCount(dims, std::max({condition.size(), a.size(), b.size()}), "Where");
  HostTensor out = sameKind(a, dims);
  const auto sc = stridesOf(condition.dims), sa = stridesOf(a.dims), sb = stridesOf(b.dims);
  std::vector<int64_t> coord(dims.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    const bool c = condition.at(broadcastOffset(coord, dims, condition.dims, sc)) != 0;
    if (c)
      push(out, a, broadcastOffset(coord, dims, a.dims, sa));
    else
      push(out, b, broadcastOffset(coord, dims, b.dims, sb));
    advance(coord, dims);
  }
  return out;
}

HostTensor unary(const std::string& op, const HostTensor& t) {
  HostTensor out = sameKind(t, t.dims);
  if (op == "Not") out.type = kBool;
  std::function<double(double)> f;
  if (op == "Identity")
    return t;
  else if (op == "Neg")
    f = [](double x) { return -x; };
  else if (op == "Abs")
    f = [](double x) { return std::fabs(x); };
  else if (op == "Floor")
    f = [](double x) { return std::floor(x); };
  else if (op == "Ceil")
    f = [](double x) { return std::ceil(x); };
  else if (op == "Round")
    f = [](double x) { return std::nearbyint(x); };
  else if (op == "Sqrt")
    f = [](double x) { return std::sqrt(x); };
  else if (op == "Exp")
    f = [](double x) { return std::exp(x); };
  else if (op == "Log")
    f = [](double x) { return std::log(x); };
  else if (op == "Reciprocal")
    f = [](double x) { return 1.0 / x; };
  else if (op == "Relu")
    f = [](double x) { return std::max(x, 0.0); };
  else if (op == "Sigmoid")
    f = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  else if (op == "Tanh")
    f = [](double x) { return std::tanh(x); };
  else if (op == "Not")
    f = [](double x) { return x == 0 ? 1.0 : 0.0; };
  else if (op == "Sign")
    f = [](double x) { return double((x > 0) - (x < 0)); };
  else
    unsupported(op + " is not evaluated on constants");
  for (int64_t k = 0; k < t.size(); ++k) {
    const double r = f(t.at(k));
    if (out.isFloat())
      out.f.push_back(float(r));
    else if (op == "Neg" || op == "Abs")
      out.i.push_back(op == "Neg" ? int64_t(0 - uint64_t(t.i[size_t(k)]))
                                  : (t.i[size_t(k)] < 0 ? int64_t(0 - uint64_t(t.i[size_t(k)]))
                                                        : t.i[size_t(k)]));
    else
      out.i.push_back(std::isfinite(r) && std::fabs(r) < 9.2e18 ? int64_t(r) : 0);
  }
  return out;
}

HostTensor range(const HostTensor& start, const HostTensor& limit, const HostTensor& delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1)
    invalidModel("Range: start, limit and delta must be scalars");
  const double s = start.at(0), l = limit.at(0), d = delta.at(0);
  if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
    invalidModel("Range: delta is 0 or a bound is not finite");
  const double count = std::max(std::ceil((l - s) / d), 0.0);
  if (count > double(kMaxComputedElements))
    invalidModel("Range: " + std::to_string(count) + " elements exceed the importer's limit of " +
                 std::to_string(kMaxComputedElements));
  HostTensor out = sameKind(start, {int64_t(count)});
  for (int64_t k = 0; k < int64_t(count); ++k) {
    if (out.isFloat())
      out.f.push_back(float(s + double(k) * d));
    else
      out.i.push_back(int64_t(uint64_t(start.i[0]) + uint64_t(k) * uint64_t(delta.i[0])));
  }
  return out;
}

HostTensor constantOfShape(const std::vector<int64_t>& shape, const HostTensor& value) {
  if (value.size() != 1) invalidModel("ConstantOfShape: value must hold one element");
  const int64_t n = computedCount(shape, 0, "ConstantOfShape");
  HostTensor out = sameKind(value, shape);
  if (out.isFloat())
    out.f.assign(size_t(n), value.f[0]);
  else
    out.i.assign(size_t(n), value.i[0]);
  return out;
}

std::vector<int64_t> toInt64s(const HostTensor& t) {
  if (!t.isFloat()) return t.i;
  std::vector<int64_t> v;
  // Out-of-range floats saturate (a cast would be undefined): whoever reads the integer then
  // rejects the size or index as too large, as for any other integer. 2^63 is exact in float.
  for (float x : t.f)
    v.push_back(!std::isfinite(x) ? 0
                : x >= 0x1p63f    ? std::numeric_limits<int64_t>::max()
                : x < -0x1p63f    ? std::numeric_limits<int64_t>::min()
                                  : int64_t(x));
  return v;
}

std::vector<float> toFloats(const HostTensor& t) {
  if (t.isFloat()) return t.f;
  std::vector<float> v;
  for (int64_t x : t.i) v.push_back(float(x));
  return v;
}

}  // namespace vkcnn::detail::onnx_import
