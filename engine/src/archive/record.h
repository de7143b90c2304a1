// Typed records: how the .vkcnn format stores a descriptor (the provenance, each weight's entry,
// and the Graph's nodes), so that writing or reading a descriptor struct is one line per field:
//
//   constexpr FieldKey kStride{3, "stride"};
//   writer.u32s(kStride, d.stride);           d.stride = reader.u32s(kStride);
//
// A record is a list of fields, each tagged with its key and type and carrying its own size, so a
// reader skips fields it does not know (a file from a newer minor version) and a missing field
// reads as the caller's default where it gives one. Byte layout: docs/model-format.md#records.
//
// The reader treats its bytes as hostile: the framing of every field is checked when the record is
// opened (each field inside the record, sizes that fit the type, no key twice), before anything is
// allocated from a count in the file; a field's type is checked when it is read. Failures are
// Error(invalidModel) naming the record (`where`, e.g. "model 'a.vkcnn': node 12") and the field.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vkcnn/export.h"

namespace vkcnn::archive {

// A field's key (unique within its record; the number is what the file keeps) and its name (what
// messages say).
struct FieldKey {
  uint16_t id;
  const char* name;
};

// The file keeps these numbers: never renumber one, only add.
enum class FieldType : uint8_t {
  u32 = 1,
  i32 = 2,
  f32 = 3,
  u64 = 4,
  i64 = 5,
  string = 6,  // UTF-8, no terminator
  u32s = 7,    // arrays: the payload is the elements, back to back
  i32s = 8,
  f32s = 9,
  i64s = 10,
  tensor = 11,   // a u32 index of a tensor (a weight, or a node's value) in the graph
  record = 12,   // a nested record
  records = 13,  // u32 count, then each: u32 size and a record of that size
  bytes = 14,    // opaque bytes
  tensors = 15,  // u32 indices of tensors (a node's inputs or outputs)
};
VKCNN_API const char* toString(FieldType type);

class VKCNN_API RecordWriter {
 public:
  RecordWriter& u32(FieldKey key, uint32_t value);
  RecordWriter& i32(FieldKey key, int32_t value);
  RecordWriter& f32(FieldKey key, float value);
  RecordWriter& u64(FieldKey key, uint64_t value);
  RecordWriter& i64(FieldKey key, int64_t value);
  RecordWriter& string(FieldKey key, std::string_view value);
  RecordWriter& u32s(FieldKey key, std::span<const uint32_t> values);
  RecordWriter& i32s(FieldKey key, std::span<const int32_t> values);
  RecordWriter& f32s(FieldKey key, std::span<const float> values);
  RecordWriter& i64s(FieldKey key, std::span<const int64_t> values);
  RecordWriter& tensor(FieldKey key, uint32_t index);
  RecordWriter& tensors(FieldKey key, std::span<const uint32_t> indices);
  RecordWriter& record(FieldKey key, const RecordWriter& value);
  RecordWriter& records(FieldKey key, std::span<const RecordWriter> values);
  RecordWriter& bytes(FieldKey key, std::span<const uint8_t> value);

  // The record's bytes: the field count, then the fields in the order written.
  std::vector<uint8_t> finish() const;

 private:
  // Starts a field of `size` payload bytes; Error(misuse) for a key written twice,
  // Error(limitExceeded) for a payload over 4 GiB.
  void begin(FieldKey key, FieldType type, size_t size);
  void put32(uint32_t v);
  void put64(uint64_t v);
  // A fixed-size field of `type`: its key and size, then the value's bits.
  RecordWriter& word32(FieldKey key, FieldType type, uint32_t bits);
  RecordWriter& word64(FieldKey key, FieldType type, uint64_t bits);

  uint32_t count_ = 0;
  std::vector<uint16_t> keys_;
  std::vector<uint8_t> fields_;
};

class VKCNN_API RecordReader {
 public:
  // Checks the framing of `bytes` (which must outlive the reader and what it returns).
  RecordReader(std::span<const uint8_t> bytes, std::string where);

  bool has(FieldKey key) const;
  // The fields' keys in file order (what a generic walker, the fuzzer or `inspect`, goes through).
  std::vector<uint16_t> keys() const;
  FieldType type(FieldKey key) const;

  // Required fields: Error(invalidModel) when missing or of another type.
  uint32_t u32(FieldKey key) const;
  int32_t i32(FieldKey key) const;
  float f32(FieldKey key) const;
  uint64_t u64(FieldKey key) const;
  int64_t i64(FieldKey key) const;
  std::string string(FieldKey key) const;
  std::vector<uint32_t> u32s(FieldKey key) const;
  std::vector<int32_t> i32s(FieldKey key) const;
  std::vector<float> f32s(FieldKey key) const;
  std::vector<int64_t> i64s(FieldKey key) const;
  // A tensor index, checked against the `count` tensors the graph has.
  uint32_t tensor(FieldKey key, uint32_t count) const;
  std::vector<uint32_t> tensors(FieldKey key, uint32_t count) const;
  RecordReader record(FieldKey key) const;
  // Each record's messages name it "WHERE, NAME I": a list's key is named for one of its records
  // ({2, "node"}: "model 'a.vkcnn': graph, node 12: field 'stride' ...").
  std::vector<RecordReader> records(FieldKey key) const;
  std::span<const uint8_t> bytes(FieldKey key) const;

  // Optional fields: `fallback` when missing (a file from before the field existed); a field that
  // is there with another type is still an error.
  uint32_t u32(FieldKey key, uint32_t fallback) const;
  int32_t i32(FieldKey key, int32_t fallback) const;
  float f32(FieldKey key, float fallback) const;
  uint64_t u64(FieldKey key, uint64_t fallback) const;
  int64_t i64(FieldKey key, int64_t fallback) const;
  std::string string(FieldKey key, std::string_view fallback) const;

  const std::string& where() const { return where_; }
  // Error(invalidModel) "WHERE: field 'NAME': WHAT", for checks of a value's meaning by the
  // record's decoder (a stride of 0, an unknown enumerator).
  [[noreturn]] void fail(FieldKey key, const std::string& what) const;
  [[noreturn]] void fail(const std::string& what) const;

 private:
  struct Field {
    uint16_t key;
    FieldType type;
    uint32_t offset;  // of the payload, in bytes_
    uint32_t size;
  };
  const Field* find(FieldKey key) const;
  // The payload of `key`, which must have `type`.
  const Field& expect(FieldKey key, FieldType type) const;
  // The payload of `key`, an array field of `type`, as its elements.
  template <typename T>
  std::vector<T> array(FieldKey key, FieldType type) const;

  std::span<const uint8_t> bytes_;
  std::string where_;
  std::vector<Field> fields_;
};

}  // namespace vkcnn::archive
