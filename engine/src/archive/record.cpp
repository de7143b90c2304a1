// Typed records (record.h): the writer lays fields out as docs/model-format.md#records says, the
// reader checks that framing once and each field's type on access.
#include "archive/record.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "archive/bytes.h"
#include "vkcnn/error.h"

namespace vkcnn::archive {
namespace {

constexpr size_t kFieldHeader = 8;  // u16 key, u8 type, u8 reserved, u32 size

// The payload size a type must have (0: any), and the element size its size must be a multiple
// of. Unknown types (from a newer minor version) may have any size.
struct TypeShape {
  uint32_t exact;
  uint32_t element;
};

TypeShape shapeOf(FieldType type) {
  switch (type) {
    case FieldType::u32:
    case FieldType::i32:
    case FieldType::f32:
    case FieldType::tensor:
      return {4, 1};
    case FieldType::u64:
    case FieldType::i64:
      return {8, 1};
    case FieldType::u32s:
    case FieldType::i32s:
    case FieldType::f32s:
    case FieldType::tensors:
      return {0, 4};
    case FieldType::i64s:
      return {0, 8};
    default:
      return {0, 1};
  }
}

std::string describe(FieldKey key) {
  return "field '" + std::string(key.name) + "' (key " + std::to_string(key.id) + ")";
}

template <typename T>
std::vector<T> loadArray(std::span<const uint8_t> payload) {
  std::vector<T> values(payload.size() / sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    const uint8_t* p = payload.data() + i * sizeof(T);
    if constexpr (sizeof(T) == 4)
      values[i] = std::bit_cast<T>(loadU32(p));
    else
      values[i] = std::bit_cast<T>(loadU64(p));
  }
  return values;
}

}  // namespace

const char* toString(FieldType type) {
  switch (type) {
    case FieldType::u32:
      return "u32";
    case FieldType::i32:
      return "i32";
    case FieldType::f32:
      return "f32";
    case FieldType::u64:
      return "u64";
    case FieldType::i64:
      return "i64";
    case FieldType::string:
      return "string";
    case FieldType::u32s:
      return "u32 array";
    case FieldType::i32s:
      return "i32 array";
    case FieldType::f32s:
      return "f32 array";
    case FieldType::i64s:
      return "i64 array";
    case FieldType::tensor:
      return "tensor reference";
    case FieldType::record:
      return "record";
    case FieldType::records:
      return "list of records";
    case FieldType::bytes:
      return "byte string";
    case FieldType::tensors:
      return "list of tensor references";
  }
  return "field of an unknown type";
}

// ---- writer -------------------------------------------------------------------------------------

void RecordWriter::begin(FieldKey key, FieldType type, size_t size) {
  if (std::find(keys_.begin(), keys_.end(), key.id) != keys_.end())
    throw Error(ErrorCode::misuse, "record " + describe(key) + " written twice");
  if (size > std::numeric_limits<uint32_t>::max())
    throw Error(ErrorCode::limitExceeded, "record " + describe(key) + " is " +
                                              std::to_string(size) +
                                              " bytes; a field holds at most 4 GiB");
  keys_.push_back(key.id);
  ++count_;
  fields_.push_back(uint8_t(key.id));
  fields_.push_back(uint8_t(key.id >> 8));
  fields_.push_back(uint8_t(type));
  fields_.push_back(0);
  put32(uint32_t(size));
}

void RecordWriter::put32(uint32_t v) {
  for (int i = 0; i < 4; ++i) fields_.push_back(uint8_t(v >> (8 * i)));
}

void RecordWriter::put64(uint64_t v) {
  put32(uint32_t(v));
  put32(uint32_t(v >> 32));
}

RecordWriter& RecordWriter::word32(FieldKey key, FieldType type, uint32_t bits) {
  begin(key, type, 4);
  put32(bits);
  return *this;
}

RecordWriter& RecordWriter::word64(FieldKey key, FieldType type, uint64_t bits) {
  begin(key, type, 8);
  put64(bits);
  return *this;
}

RecordWriter& RecordWriter::u32(FieldKey key, uint32_t value) {
  return word32(key, FieldType::u32, value);
}

RecordWriter& RecordWriter::i32(FieldKey key, int32_t value) {
  return word32(key, FieldType::i32, uint32_t(value));
}

RecordWriter& RecordWriter::f32(FieldKey key, float value) {
  return word32(key, FieldType::f32, std::bit_cast<uint32_t>(value));
}

RecordWriter& RecordWriter::u64(FieldKey key, uint64_t value) {
  return word64(key, FieldType::u64, value);
}

RecordWriter& RecordWriter::i64(FieldKey key, int64_t value) {
  return word64(key, FieldType::i64, uint64_t(value));
}

RecordWriter& RecordWriter::string(FieldKey key, std::string_view value) {
  begin(key, FieldType::string, value.size());
  fields_.insert(fields_.end(), value.begin(), value.end());
  return *this;
}

RecordWriter& RecordWriter::u32s(FieldKey key, std::span<const uint32_t> values) {
  begin(key, FieldType::u32s, values.size_bytes());
  for (uint32_t v : values) put32(v);
  return *this;
}

RecordWriter& RecordWriter::i32s(FieldKey key, std::span<const int32_t> values) {
  begin(key, FieldType::i32s, values.size_bytes());
  for (int32_t v : values) put32(uint32_t(v));
  return *this;
}

RecordWriter& RecordWriter::f32s(FieldKey key, std::span<const float> values) {
  begin(key, FieldType::f32s, values.size_bytes());
  for (float v : values) put32(std::bit_cast<uint32_t>(v));
  return *this;
}

RecordWriter& RecordWriter::i64s(FieldKey key, std::span<const int64_t> values) {
  begin(key, FieldType::i64s, values.size_bytes());
  for (int64_t v : values) put64(uint64_t(v));
  return *this;
}

RecordWriter& RecordWriter::tensor(FieldKey key, uint32_t index) {
  begin(key, FieldType::tensor, 4);
  put32(index);
  return *this;
}

RecordWriter& RecordWriter::tensors(FieldKey key, std::span<const uint32_t> indices) {
  begin(key, FieldType::tensors, indices.size_bytes());
  for (uint32_t v : indices) put32(v);
  return *this;
}

RecordWriter& RecordWriter::record(FieldKey key, const RecordWriter& value) {
  const std::vector<uint8_t> bytes = value.finish();
  begin(key, FieldType::record, bytes.size());
  fields_.insert(fields_.end(), bytes.begin(), bytes.end());
  return *this;
}

RecordWriter& RecordWriter::records(FieldKey key, std::span<const RecordWriter> values) {
  std::vector<uint8_t> payload;
  auto put = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) payload.push_back(uint8_t(v >> (8 * i)));
  };
  put(uint32_t(values.size()));
  for (const RecordWriter& value : values) {
    const std::vector<uint8_t> bytes = value.finish();
    if (bytes.size() > std::numeric_limits<uint32_t>::max())
      throw Error(ErrorCode::limitExceeded, "a record of " + describe(key) + " is over 4 GiB");
    put(uint32_t(bytes.size()));
    payload.insert(payload.end(), bytes.begin(), bytes.end());
  }
  begin(key, FieldType::records, payload.size());
  fields_.insert(fields_.end(), payload.begin(), payload.end());
  return *this;
}

RecordWriter& RecordWriter::bytes(FieldKey key, std::span<const uint8_t> value) {
  begin(key, FieldType::bytes, value.size());
  fields_.insert(fields_.end(), value.begin(), value.end());
  return *this;
}

std::vector<uint8_t> RecordWriter::finish() const {
  std::vector<uint8_t> out;
  out.reserve(4 + fields_.size());
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(count_ >> (8 * i)));
  out.insert(out.end(), fields_.begin(), fields_.end());
  return out;
}

// ---- reader -------------------------------------------------------------------------------------

RecordReader::RecordReader(std::span<const uint8_t> bytes, std::string where)
    : bytes_(bytes), where_(std::move(where)) {
  const size_t size = bytes.size();
  if (size < 4)
    fail("the record is " + std::to_string(size) + " bytes, too short for its field count");
  if (size > std::numeric_limits<uint32_t>::max())
    fail("the record is " + std::to_string(size) + " bytes; a record holds at most 4 GiB");
  const uint32_t count = loadU32(bytes.data());
  if (count > (size - 4) / kFieldHeader)
    fail("the record says it has " + std::to_string(count) + " fields, more than its " +
         std::to_string(size) + " bytes can hold");
  fields_.reserve(count);
  size_t at = 4;
  for (uint32_t i = 0; i < count; ++i) {
    if (size - at < kFieldHeader)
      fail("field " + std::to_string(i) + " of " + std::to_string(count) + " is cut off at byte " +
           std::to_string(at) + " of " + std::to_string(size));
    const uint8_t* p = bytes.data() + at;
    Field field{loadU16(p), FieldType(p[2]), uint32_t(at + kFieldHeader), loadU32(p + 4)};
    at += kFieldHeader;
    if (field.size > size - at)
      fail("field " + std::to_string(i) + " (key " + std::to_string(field.key) + ") is " +
           std::to_string(field.size) + " bytes, past the record's end (" +
           std::to_string(size - at) + " bytes left)");
    const TypeShape shape = shapeOf(field.type);
    if ((shape.exact && field.size != shape.exact) || field.size % shape.element)
      fail("field " + std::to_string(i) + " (key " + std::to_string(field.key) + ") is a " +
           toString(field.type) + " of " + std::to_string(field.size) + " bytes");
    fields_.push_back(field);
    at += field.size;
  }
  if (at != size)
    fail("the record has " + std::to_string(size - at) + " bytes after its " +
         std::to_string(count) + " fields");
  std::vector<uint16_t> keys = this->keys();
  std::sort(keys.begin(), keys.end());
  const auto twice = std::adjacent_find(keys.begin(), keys.end());
  if (twice != keys.end()) fail("the record has key " + std::to_string(*twice) + " twice");
}

std::vector<uint16_t> RecordReader::keys() const {
  std::vector<uint16_t> keys;
  keys.reserve(fields_.size());
  for (const Field& f : fields_) keys.push_back(f.key);
  return keys;
}

const RecordReader::Field* RecordReader::find(FieldKey key) const {
  for (const Field& f : fields_)
    if (f.key == key.id) return &f;
  return nullptr;
}

bool RecordReader::has(FieldKey key) const {
  return find(key) != nullptr;
}

FieldType RecordReader::type(FieldKey key) const {
  const Field* f = find(key);
  if (!f) fail(key, "is missing");
  return f->type;
}

const RecordReader::Field& RecordReader::expect(FieldKey key, FieldType type) const {
  const Field* f = find(key);
  if (!f) fail(key, "is missing");
  if (f->type != type)
    fail(key, std::string("is a ") + toString(f->type) + ", expected a " + toString(type));
  return *f;
}

void RecordReader::fail(FieldKey key, const std::string& what) const {
  fail(describe(key) + " " + what);
}

void RecordReader::fail(const std::string& what) const {
  throw Error(ErrorCode::invalidModel, where_ + ": " + what);
}

uint32_t RecordReader::u32(FieldKey key) const {
  return loadU32(bytes_.data() + expect(key, FieldType::u32).offset);
}

int32_t RecordReader::i32(FieldKey key) const {
  return int32_t(loadU32(bytes_.data() + expect(key, FieldType::i32).offset));
}

float RecordReader::f32(FieldKey key) const {
  return std::bit_cast<float>(loadU32(bytes_.data() + expect(key, FieldType::f32).offset));
}

uint64_t RecordReader::u64(FieldKey key) const {
  return loadU64(bytes_.data() + expect(key, FieldType::u64).offset);
}

int64_t RecordReader::i64(FieldKey key) const {
  return int64_t(loadU64(bytes_.data() + expect(key, FieldType::i64).offset));
}

std::string RecordReader::string(FieldKey key) const {
  const Field& f = expect(key, FieldType::string);
  return std::string(reinterpret_cast<const char*>(bytes_.data()) + f.offset, f.size);
}

template <typename T>
std::vector<T> RecordReader::array(FieldKey key, FieldType type) const {
  const Field& f = expect(key, type);
  return loadArray<T>(bytes_.subspan(f.offset, f.size));
}

std::vector<uint32_t> RecordReader::u32s(FieldKey key) const {
  return array<uint32_t>(key, FieldType::u32s);
}

std::vector<int32_t> RecordReader::i32s(FieldKey key) const {
  return array<int32_t>(key, FieldType::i32s);
}

std::vector<float> RecordReader::f32s(FieldKey key) const {
  return array<float>(key, FieldType::f32s);
}

std::vector<int64_t> RecordReader::i64s(FieldKey key) const {
  return array<int64_t>(key, FieldType::i64s);
}

uint32_t RecordReader::tensor(FieldKey key, uint32_t count) const {
  const uint32_t index = loadU32(bytes_.data() + expect(key, FieldType::tensor).offset);
  if (index >= count)
    fail(key,
         "refers to tensor " + std::to_string(index) + ", but there are " + std::to_string(count));
  return index;
}

std::vector<uint32_t> RecordReader::tensors(FieldKey key, uint32_t count) const {
  const Field& f = expect(key, FieldType::tensors);
  std::vector<uint32_t> indices = loadArray<uint32_t>(bytes_.subspan(f.offset, f.size));
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i] >= count)
      fail(key, "refers (at " + std::to_string(i) + ") to tensor " + std::to_string(indices[i]) +
                    ", but there are " + std::to_string(count));
  return indices;
}

RecordReader RecordReader::record(FieldKey key) const {
  const Field& f = expect(key, FieldType::record);
  return RecordReader(bytes_.subspan(f.offset, f.size), where_ + ", " + describe(key));
}

std::vector<RecordReader> RecordReader::records(FieldKey key) const {
  const Field& f = expect(key, FieldType::records);
  const std::span<const uint8_t> payload = bytes_.subspan(f.offset, f.size);
  if (payload.size() < 4) fail(key, "is too short for its count");
  const uint32_t count = loadU32(payload.data());
  // Each record takes its size (4 bytes) and its field count (4) at least.
  if (count > (payload.size() - 4) / 8)
    fail(key, "says it has " + std::to_string(count) + " records, more than its " +
                  std::to_string(payload.size()) + " bytes can hold");
  std::vector<RecordReader> out;
  out.reserve(count);
  size_t at = 4;
  for (uint32_t i = 0; i < count; ++i) {
    if (payload.size() - at < 4) fail(key, "record " + std::to_string(i) + " is cut off");
    const uint32_t size = loadU32(payload.data() + at);
    at += 4;
    if (size > payload.size() - at)
      fail(key, "record " + std::to_string(i) + " is " + std::to_string(size) +
                    " bytes, past the field's end");
    out.emplace_back(payload.subspan(at, size), where_ + ", " + key.name + " " + std::to_string(i));
    at += size;
  }
  if (at != payload.size())
    fail(key, "has " + std::to_string(payload.size() - at) + " bytes after its records");
  return out;
}

std::span<const uint8_t> RecordReader::bytes(FieldKey key) const {
  const Field& f = expect(key, FieldType::bytes);
  return bytes_.subspan(f.offset, f.size);
}

uint32_t RecordReader::u32(FieldKey key, uint32_t fallback) const {
  return has(key) ? u32(key) : fallback;
}

int32_t RecordReader::i32(FieldKey key, int32_t fallback) const {
  return has(key) ? i32(key) : fallback;
}

float RecordReader::f32(FieldKey key, float fallback) const {
  return has(key) ? f32(key) : fallback;
}

uint64_t RecordReader::u64(FieldKey key, uint64_t fallback) const {
  return has(key) ? u64(key) : fallback;
}

int64_t RecordReader::i64(FieldKey key, int64_t fallback) const {
  return has(key) ? i64(key) : fallback;
}

std::string RecordReader::string(FieldKey key, std::string_view fallback) const {
  return has(key) ? string(key) : std::string(fallback);
}

}  // namespace vkcnn::archive
