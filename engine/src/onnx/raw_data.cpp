// The ONNX wire-format scanner that takes large raw_data out of a model: see raw_data.h.
//
// It follows protobuf's reading of a message exactly where it changes bytes: a field whose number
// matches but whose wire type does not is an unknown field to protobuf and is copied untouched; a
// repeated scalar (data_type) is its last occurrence; a bytes field given twice (raw_data) is its
// last occurrence; a message field given twice (ModelProto.graph) is merged, so initializers of a
// second graph field continue the first's numbering.
#include "onnx/raw_data.h"

#include <string_view>

#include "onnx/onnx_tensor.h"
#include "vulkan/overrides.h"

namespace vkcnn::detail::onnx_import {
namespace {

// The scanner's verdict that it cannot follow the bytes (protobuf will tell the caller why).
struct Malformed {
  size_t offset;
  std::string what;
};

struct Field {
  uint32_t number = 0, wireType = 0;
  const uint8_t* start = nullptr;    // the tag
  const uint8_t* payload = nullptr;  // after the tag (and the length, for wire type 2)
  const uint8_t* end = nullptr;      // after the field
  uint64_t varint = 0;               // wire type 0's value
};

class Scanner {
 public:
  explicit Scanner(std::span<const uint8_t> bytes) : base_(bytes.data()) {}

  // The fields of the message in [p, end), one at a time.
  bool next(const uint8_t*& p, const uint8_t* end, Field& f, const char* message) {
    if (p == end) return false;
    f.start = p;
    uint64_t tag = 0;
    if (!varint(p, end, tag) || tag > 0xffffffffu)
      fail(f.start, std::string("a field tag of ") + message + " is truncated or too long");
    f.number = uint32_t(tag >> 3);
    f.wireType = uint32_t(tag & 7);
    if (f.number == 0) fail(f.start, std::string("a field of ") + message + " has number 0");
    const std::string field = "field " + std::to_string(f.number) + " of " + message;
    switch (f.wireType) {
      case 0:
        if (!varint(p, end, f.varint)) fail(f.start, field + ": the varint is truncated");
        f.payload = p;
        break;
      case 1:
      case 5: {
        const size_t n = f.wireType == 1 ? 8 : 4;
        if (size_t(end - p) < n) fail(f.start, field + ": the fixed-size value is truncated");
        f.payload = p;
        p += n;
        break;
      }
      case 2: {
        uint64_t length = 0;
        if (!varint(p, end, length)) fail(f.start, field + ": the length is truncated");
        if (length > uint64_t(end - p))
          fail(f.start, field + ": " + std::to_string(length) + " bytes run past the end of " +
                            message + " (" + std::to_string(end - p) + " left)");
        f.payload = p;
        p += length;
        break;
      }
      default:  // groups (3, 4; deprecated, unused by ONNX) and invalid wire types
        fail(f.start, field + " has wire type " + std::to_string(f.wireType) +
                          ", which the scanner does not follow");
    }
    f.end = p;
    return true;
  }

  [[noreturn]] void fail(const uint8_t* at, std::string what) {
    throw Malformed{size_t(at - base_), std::move(what)};
  }

  const uint8_t* base() const { return base_; }

 private:
  static bool varint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end) return false;
      const uint8_t b = *p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }

  const uint8_t* base_;
};

void appendVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(uint8_t(v) | 0x80));
    v >>= 7;
  }
  out.push_back(char(uint8_t(v)));
}

void appendBytes(std::string& out, const uint8_t* begin, const uint8_t* end) {
  out.append(reinterpret_cast<const char*>(begin), size_t(end - begin));
}

// A length-delimited field with a new payload: the original tag, the new length.
void appendMessage(std::string& out, const Field& f, const std::string& payload) {
  uint64_t tag = (uint64_t(f.number) << 3) | 2;
  appendVarint(out, tag);
  appendVarint(out, payload.size());
  out += payload;
}

// Two passes: the first (`writing` false) only finds whether anything is stripped, so that a model
// with nothing to strip is not copied.
struct Stripper {
  Scanner scan;
  StrippedModel& result;
  bool writing = false;

  void copy(std::string& out, const Field& f) {
    if (writing) appendBytes(out, f.start, f.end);
  }

  // The tensor rewritten without its raw_data into `out`, or false (copy it as it is).
  bool tensor(const Field& t, std::string& out) {
    const uint8_t* p = t.payload;
    Field f;
    std::optional<int32_t> type;
    const Field* lastRaw = nullptr;
    Field raw;
    bool external = false;
    while (scan.next(p, t.end, f, "an initializer (TensorProto)")) {
      if (f.number == 2 && f.wireType == 0) type = int32_t(uint32_t(f.varint));  // int32 cast
      if (f.number == 13 || f.number == 14) external = true;  // external_data, data_location
      if (f.number == 9 && f.wireType == 2) {
        raw = f;
        lastRaw = &raw;
      }
    }
    if (!lastRaw || external || !type || !isFloatType(*type)) return false;
    if (size_t(raw.end - raw.payload) < kStripRawDataBytes) return false;
    result.initializerData.back() = std::span<const uint8_t>(raw.payload, raw.end);
    if (!writing) return true;
    p = t.payload;
    while (scan.next(p, t.end, f, "an initializer (TensorProto)"))
      if (!(f.number == 9 && f.wireType == 2)) copy(out, f);
    out += std::string_view("\x4a\x01\x00", 3);  // raw_data (9, length-delimited): 1 byte
    return true;
  }

  // The graph rewritten into `out`; whether any initializer was stripped.
  bool graph(const Field& g, std::string& out) {
    bool changed = false;
    const uint8_t* p = g.payload;
    Field f;
    std::string rewritten;
    while (scan.next(p, g.end, f, "the graph (GraphProto)")) {
      if (f.number == 5 && f.wireType == 2) {
        result.initializerData.emplace_back();
        rewritten.clear();
        if (tensor(f, rewritten)) {
          if (writing) appendMessage(out, f, rewritten);
          changed = true;
          continue;
        }
      }
      copy(out, f);
    }
    return changed;
  }

  void model(std::span<const uint8_t> bytes) {
    const uint8_t* p = bytes.data();
    const uint8_t* end = p + bytes.size();
    Field f;
    std::string rewritten;
    bool changed = false;
    while (scan.next(p, end, f, "the model (ModelProto)")) {
      if (f.number == 7 && f.wireType == 2) {
        rewritten.clear();
        if (graph(f, rewritten)) {
          if (writing) appendMessage(result.bytes, f, rewritten);
          changed = true;
          continue;
        }
      }
      copy(result.bytes, f);
    }
    result.stripped = changed;
  }
};

}  // namespace

StrippedModel stripInitializerData(std::span<const uint8_t> model) {
  StrippedModel result;
  // The kill switch (to measure, or should the scanner ever disagree with protobuf).
  if (!processOverrides().stripRawData) return result;
  Stripper s{Scanner(model), result};
  try {
    s.model(model);
    if (result.stripped) {
      result.initializerData.clear();
      s.writing = true;
      s.model(model);
    }
  } catch (const Malformed& m) {
    result = StrippedModel();
    result.malformed = "byte " + std::to_string(m.offset) + ": " + m.what;
  }
  if (!result.stripped) {
    result.bytes.clear();
    result.bytes.shrink_to_fit();
    result.initializerData.clear();
  }
  return result;
}

}  // namespace vkcnn::detail::onnx_import
