// The .vkcnn compiled model format (docs/model-format.md): what `vkcnn compile` writes and what the
// core library loads without ONNX. A file is a header, a table of sections and the sections:
// the provenance (what the file was compiled from, and how), the weights' index, the weights
// themselves (aligned so that a mapping of the file is used in place) and the graph's nodes
// (written by the Graph: this layer stores its section as bytes, encoded with archive/record.h).
//
// Writer builds the whole file in memory and writes it beside its destination, then renames it
// over, so a compile that fails never leaves half a file. Archive maps a file (or takes bytes an
// application holds) and checks all of it before anything is used: every failure is a
// vkcnn::Error naming the file and what was wrong with it, whatever the bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "archive/record.h"
#include "platform/platform.h"
#include "vkcnn/export.h"

namespace vkcnn::archive {

// ---- the format's constants (docs/model-format.md says what each promises) ----------------------

inline constexpr char kMagic[8] = {'V', 'K', 'C', 'N', 'N', '\0', 'M', 'D'};
// A reader reads every file of its major version, whatever the minor (newer minors add only
// optional sections and record fields); another major is refused.
inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 0;
inline constexpr uint32_t kHeaderSize = 64;
inline constexpr uint32_t kSectionEntrySize = 32;
// Every weight starts at a multiple of 256 bytes of the file, and the weights section at a page
// (docs/model-format.md#alignment says why).
inline constexpr uint32_t kWeightAlignment = 256;
inline constexpr uint32_t kWeightsSectionAlignment = 4096;
// The largest alignment a section may ask for (a 64 KiB page, Windows' mapping granularity).
inline constexpr uint32_t kMaxSectionAlignment = 65536;

constexpr uint32_t fourCc(const char (&name)[5]) {
  return uint32_t(uint8_t(name[0])) | (uint32_t(uint8_t(name[1])) << 8) |
         (uint32_t(uint8_t(name[2])) << 16) | (uint32_t(uint8_t(name[3])) << 24);
}

// Section kinds: four characters, so that a hex dump shows them. The file keeps these numbers.
enum class SectionKind : uint32_t {
  provenance = fourCc("PROV"),
  weightIndex = fourCc("WIDX"),
  weights = fourCc("WDAT"),
  graph = fourCc("GRPH"),
};
// Section flag: a reader that does not know the section's kind skips it (otherwise it refuses
// the file).
inline constexpr uint32_t kSectionOptional = 1;

// A weight's element type. The file keeps these numbers.
enum class WeightType : uint32_t { f32 = 1, f16 = 2, i32 = 3, i64 = 4, u8 = 5, i8 = 6 };
VKCNN_API const char* toString(WeightType type);
// Bytes per element; 0 for a number that is no WeightType.
VKCNN_API uint32_t elementSize(WeightType type);

// ---- what the file says about itself
// --------------------------------------------------------------

struct Opset {
  std::string domain;  // "" for the default ONNX domain
  int64_t version = 0;
};

struct InputShape {
  std::string input;
  std::vector<int64_t> dims;
};

struct Provenance {
  // The source model: its file name (no directories), format ("onnx"), size and XXH64 (seed 0)
  // of its bytes (archive/checksum.h), its opsets and the program that made it.
  std::string sourceName;
  std::string sourceFormat;
  uint64_t sourceSize = 0;
  uint64_t sourceHash = 0;
  std::vector<Opset> opsets;
  std::string producer;
  // The vkcnn that compiled it (VKCNN_VERSION_STRING) and the options it was given.
  std::string compiler;
  std::string precision;           // "fp16" or "fp32"
  std::vector<InputShape> shapes;  // --shape NAME=..., in the order given
  uint32_t batch = 0;              // --batch; 0: as the model says
};

// A source file's size and XXH64, as the provenance records them: what `compile` writes, and what
// tells whether a .vkcnn is stale (compare with its provenance). The file is mapped, with
// MappedFile's checks and messages (`name`: "ONNX model 'a.onnx'").
struct SourceDigest {
  uint64_t size = 0;
  uint64_t hash = 0;
  bool operator==(const SourceDigest&) const = default;
};
VKCNN_API SourceDigest digestFile(const std::string& path, const std::string& name);

VKCNN_API RecordWriter encodeProvenance(const Provenance& provenance);
VKCNN_API Provenance decodeProvenance(const RecordReader& record);

// A weight as loaded: `data` points into the file (its mapping, or the caller's bytes), at an
// offset of the file that is a multiple of kWeightAlignment.
struct Weight {
  std::string name;
  WeightType type = WeightType::f32;
  // 0: the elements in row-major order of `dims`; other values name a packed layout of the
  // engine's (defined by the Graph's serialization), whose size `dims` does not determine.
  uint32_t layout = 0;
  std::vector<int64_t> dims;
  std::span<const uint8_t> data;
};

// ---- writing
// --------------------------------------------------------------------------------------

class VKCNN_API Writer {
 public:
  explicit Writer(Provenance provenance);

  // Adds a weight (its bytes are moved in) and returns its index: what nodes refer to it by
  // (RecordWriter::tensor). Error(invalidArgument) when a dense weight's size does not match its
  // dims and type.
  uint32_t addWeight(std::string name, WeightType type, std::vector<int64_t> dims,
                     std::vector<uint8_t> data, uint32_t layout = 0);
  // Adds a section of the caller's (the graph's nodes: SectionKind::graph). Error(misuse) for a
  // kind written twice or one the Writer writes itself (provenance, weights).
  void addSection(uint32_t kind, std::vector<uint8_t> bytes, bool optional = false,
                  uint32_t alignment = 8);

  // The whole file.
  std::vector<uint8_t> build() const;
  // build(), written beside `path` and renamed over it. Error(io) naming the file, where nothing
  // at `path` has changed (a folder that is not there included: none is made).
  void write(const std::string& path) const;

 private:
  struct Section {
    uint32_t kind;
    uint32_t flags;
    uint32_t alignment;
    std::vector<uint8_t> bytes;
  };
  struct Blob {
    std::string name;
    WeightType type;
    uint32_t layout;
    std::vector<int64_t> dims;
    std::vector<uint8_t> data;
  };
  Provenance provenance_;
  std::vector<Blob> blobs_;
  std::vector<Section> sections_;
};

// ---- reading
// --------------------------------------------------------------------------------------

struct ReadOptions {
  // Hash the content and compare with the header's checksum: reads every byte of the file once
  // (13 ms per 100 MiB on a busy 2-core machine). Off only where something else has vouched for the
  // bytes.
  bool verifyChecksum = true;
};

struct SectionInfo {
  uint32_t kind;
  uint32_t flags;
  uint64_t offset;
  uint64_t size;
  uint32_t alignment;
};

class VKCNN_API Archive {
 public:
  // Maps `path` and checks it; messages name it as "model 'PATH'". Error(io) when it cannot be
  // read, Error(invalidModel) when it is not a valid file, Error(unsupported) for a format version
  // this vkcnn does not read.
  static Archive open(const std::string& path, const ReadOptions& options = {});
  // Checks `bytes` (which must outlive the Archive), named `name` in messages.
  static Archive fromBytes(std::span<const uint8_t> bytes, const std::string& name,
                           const ReadOptions& options = {});

  Archive(Archive&&) noexcept;
  Archive& operator=(Archive&&) noexcept;
  ~Archive();

  const std::string& name() const { return name_; }
  uint16_t formatMajor() const { return major_; }
  uint16_t formatMinor() const { return minor_; }
  std::span<const uint8_t> bytes() const { return bytes_; }
  const std::vector<SectionInfo>& sections() const { return sections_; }
  const Provenance& provenance() const { return provenance_; }
  const std::vector<Weight>& weights() const { return weights_; }
  // Whether the file was compiled from `source` as it is now (its size and hash match the
  // provenance's; Error(io) when `source` cannot be read).
  bool compiledFrom(const std::string& source) const;
  // The bytes of the section of `kind`, where the file has one.
  std::optional<std::span<const uint8_t>> section(uint32_t kind) const;
  std::optional<std::span<const uint8_t>> section(SectionKind kind) const {
    return section(uint32_t(kind));
  }
  // Error(invalidModel) "NAME: WHAT", for checks of the sections' meaning by their decoders.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  Archive() = default;
  void check(const ReadOptions& options);
  void checkHeader(const ReadOptions& options);
  void readSectionTable();
  void readWeights();

  platform::MappedFile file_;
  std::span<const uint8_t> bytes_;
  std::string name_;
  std::string path_;  // empty for bytes given by the caller
  uint16_t major_ = 0, minor_ = 0;
  std::vector<SectionInfo> sections_;
  Provenance provenance_;
  std::vector<Weight> weights_;
};

}  // namespace vkcnn::archive
