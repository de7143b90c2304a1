// Archive (archive.h): checks a .vkcnn file in the order that gives the most useful message for
// what is most likely wrong: not a .vkcnn file at all, then a format version this vkcnn does not
// read, then a file cut short, then damage (the checksum), then a table or record that no writer
// of this format makes (a hostile or buggy writer). Nothing is allocated from a count in the file
// before that count is checked against the bytes that would hold it.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include <vkcnn/version.h>

#include "archive/archive.h"
#include "archive/bytes.h"
#include "archive/checksum.h"
#include "archive/weight_index.h"
#include "vkcnn/error.h"

namespace vkcnn::archive {
namespace {

std::string kindName(uint32_t kind) {
  std::string name;
  for (int i = 0; i < 4; ++i) {
    const char c = char(kind >> (8 * i));
    if (c < 0x20 || c > 0x7e) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", kind);
      return hex;
    }
    name += c;
  }
  return "'" + name + "'";
}

std::string formatVersion(uint16_t major, uint16_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

bool isKnown(uint32_t kind) {
  for (SectionKind k : {SectionKind::provenance, SectionKind::weightIndex, SectionKind::weights,
                        SectionKind::graph})
    if (kind == uint32_t(k)) return true;
  return false;
}

}  // namespace

Archive::Archive(Archive&&) noexcept = default;
Archive& Archive::operator=(Archive&&) noexcept = default;
Archive::~Archive() = default;

Archive Archive::open(const std::string& path, const ReadOptions& options) {
  Archive a;
  a.name_ = "model '" + path + "'";
  a.path_ = path;
  a.file_ = platform::MappedFile(path, a.name_, {}, true);
  a.bytes_ = a.file_.bytes();
  a.check(options);
  return a;
}

Archive Archive::fromBytes(std::span<const uint8_t> bytes, const std::string& name,
                           const ReadOptions& options) {
  Archive a;
  a.name_ = name;
  a.bytes_ = bytes;
  a.check(options);
  return a;
}

void Archive::fail(const std::string& what) const {
  throw Error(ErrorCode::invalidModel, name_ + ": " + what);
}

bool Archive::compiledFrom(const std::string& source) const {
  const SourceDigest digest = digestFile(source, "source model '" + source + "'");
  return digest == SourceDigest{provenance_.sourceSize, provenance_.sourceHash};
}

std::optional<std::span<const uint8_t>> Archive::section(uint32_t kind) const {
  for (const SectionInfo& s : sections_)
    if (s.kind == kind) return bytes_.subspan(size_t(s.offset), size_t(s.size));
  return std::nullopt;
}

void Archive::check(const ReadOptions& options) {
  checkHeader(options);
  readSectionTable();
  for (SectionKind kind : {SectionKind::provenance, SectionKind::weightIndex, SectionKind::weights})
    if (!section(kind))
      fail("it has no " + kindName(uint32_t(kind)) + " section, which every model has");
  provenance_ =
      decodeProvenance(RecordReader(*section(SectionKind::provenance), name_ + ": provenance"));
  readWeights();
}

void Archive::checkHeader(const ReadOptions& options) {
  const size_t size = bytes_.size();
  if (size < sizeof kMagic || std::memcmp(bytes_.data(), kMagic, sizeof kMagic) != 0)
    fail(
        "not a vkcnn model (a .vkcnn file starts with \"VKCNN\\0MD\"; an ONNX model is loaded "
        "from its .onnx file)");
  if (size < 12)
    fail("truncated: " + std::to_string(size) + " bytes, shorter than its " +
         std::to_string(kHeaderSize) + "-byte header");
  major_ = loadU16(bytes_.data() + 8);
  minor_ = loadU16(bytes_.data() + 10);
  const std::string recompile =
      "vkcnn compile MODEL.onnx -o " + (path_.empty() ? std::string("MODEL.vkcnn") : path_);
  if (major_ > kFormatMajor)
    throw Error(
        ErrorCode::unsupported,
        name_ + " is format version " + formatVersion(major_, minor_) +
            ", newer than this vkcnn reads (format " + formatVersion(kFormatMajor, kFormatMinor) +
            ", vkcnn " + versionString() +
            "): upgrade vkcnn to load it, or compile the model again with this one: " + recompile);
  if (major_ < kFormatMajor)
    throw Error(ErrorCode::unsupported,
                name_ + " is format version " + formatVersion(major_, minor_) +
                    ", older than this vkcnn reads (format " +
                    formatVersion(kFormatMajor, kFormatMinor) + ", vkcnn " + versionString() +
                    "): compile the model again from its source: " + recompile);
  if (size < kHeaderSize)
    fail("truncated: " + std::to_string(size) + " bytes, shorter than its " +
         std::to_string(kHeaderSize) + "-byte header");
  const uint32_t headerSize = loadU32(bytes_.data() + 12);
  if (headerSize < kHeaderSize || headerSize % 8 || headerSize > size)
    fail("its header says it is " + std::to_string(headerSize) + " bytes (at least " +
         std::to_string(kHeaderSize) + ", a multiple of 8, within the file's " +
         std::to_string(size) + ")");
  const uint64_t fileSize = loadU64(bytes_.data() + 24);
  if (fileSize > size)
    fail("truncated: its header says " + std::to_string(fileSize) + " bytes, the file has " +
         std::to_string(size) + " (an interrupted copy or download?)");
  if (fileSize < size)
    fail("it has " + std::to_string(size) + " bytes, more than the " + std::to_string(fileSize) +
         " its header says (something was appended to it?)");
  if (options.verifyChecksum) {
    const uint64_t stored = loadU64(bytes_.data() + 16);
    const uint64_t actual = xxh64(bytes_.subspan(24));
    if (stored != actual) {
      char message[160];
      std::snprintf(message, sizeof message,
                    "wrong checksum: the header says %016llx, the content hashes to %016llx "
                    "(the file is damaged)",
                    static_cast<unsigned long long>(stored),
                    static_cast<unsigned long long>(actual));
      fail(message);
    }
  }
}

void Archive::readSectionTable() {
  const uint64_t size = bytes_.size();
  const uint32_t headerSize = loadU32(bytes_.data() + 12);
  const uint64_t table = loadU64(bytes_.data() + 32);
  const uint32_t count = loadU32(bytes_.data() + 40);
  if (table < headerSize || table % 8 || table > size)
    fail("its section table is at byte " + std::to_string(table) + ", outside the file (" +
         std::to_string(size) + " bytes, header " + std::to_string(headerSize) + ")");
  if (count > (size - table) / kSectionEntrySize)
    fail("its section table says " + std::to_string(count) + " sections, more than the " +
         std::to_string(size - table) + " bytes after it hold");
  const uint64_t tableEnd = table + uint64_t(count) * kSectionEntrySize;
  sections_.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* e = bytes_.data() + table + i * kSectionEntrySize;
    const SectionInfo s{loadU32(e), loadU32(e + 4), loadU64(e + 8), loadU64(e + 16),
                        loadU32(e + 24)};
    const std::string what = "section " + std::to_string(i) + " (" + kindName(s.kind) + ")";
    if (!s.alignment || (s.alignment & (s.alignment - 1)) || s.alignment > kMaxSectionAlignment)
      fail(what + " has an alignment of " + std::to_string(s.alignment) +
           " (a power of two up to 65536)");
    if (s.offset % s.alignment)
      fail(what + " is at byte " + std::to_string(s.offset) + ", not a multiple of its alignment " +
           std::to_string(s.alignment));
    if (s.offset < tableEnd || s.offset > size || s.size > size - s.offset)
      fail(what + ", " + std::to_string(s.size) + " bytes at byte " + std::to_string(s.offset) +
           ", is outside the file's content (bytes " + std::to_string(tableEnd) + " to " +
           std::to_string(size) + ")");
    for (const SectionInfo& other : sections_)
      if (other.kind == s.kind) fail("it has two " + kindName(s.kind) + " sections");
    if (!isKnown(s.kind) && !(s.flags & kSectionOptional))
      throw Error(ErrorCode::unsupported,
                  name_ + ": " + what +
                      " is of a kind this vkcnn does not know, and the file says it cannot be "
                      "skipped: upgrade vkcnn to load it");
    sections_.push_back(s);
  }
  std::vector<SectionInfo> sorted = sections_;
  std::sort(sorted.begin(), sorted.end(),
            [](const SectionInfo& a, const SectionInfo& b) { return a.offset < b.offset; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i - 1].offset + sorted[i - 1].size > sorted[i].offset && sorted[i].size)
      fail("its sections " + kindName(sorted[i - 1].kind) + " and " + kindName(sorted[i].kind) +
           " overlap");
}

void Archive::readWeights() {
  namespace wi = weight_index;
  const std::span<const uint8_t> data = *section(SectionKind::weights);
  for (const SectionInfo& s : sections_)
    if (s.kind == uint32_t(SectionKind::weights) && s.alignment < kWeightAlignment)
      fail("its weights section is aligned to " + std::to_string(s.alignment) +
           " bytes, less than the " + std::to_string(kWeightAlignment) + " weights need");
  const RecordReader index(*section(SectionKind::weightIndex), name_ + ": weight index");
  const std::vector<RecordReader> entries = index.records(wi::kWeights);
  weights_.reserve(entries.size());
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // offset, size
  for (const RecordReader& e : entries) {
    Weight w;
    w.name = e.string(wi::kName);
    w.type = WeightType(e.u32(wi::kType));
    if (!elementSize(w.type))
      e.fail(wi::kType, "is " + std::to_string(uint32_t(w.type)) + ", no weight type");
    w.layout = e.u32(wi::kLayout);
    w.dims = e.i64s(wi::kDims);
    const uint64_t offset = e.u64(wi::kOffset), size = e.u64(wi::kSize);
    if (offset % kWeightAlignment)
      e.fail(wi::kOffset, "is " + std::to_string(offset) + ", not a multiple of " +
                              std::to_string(kWeightAlignment));
    if (offset > data.size() || size > data.size() - offset)
      e.fail("its " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
             " go past the weights section's " + std::to_string(data.size()) + " bytes");
    if (w.layout == 0) {
      const std::optional<uint64_t> dense = wi::denseSize(w.type, w.dims);
      if (!dense || *dense != size)
        e.fail(wi::kSize, "is " + std::to_string(size) +
                              " bytes, which the weight's dims and type (" + toString(w.type) +
                              ") do not give");
    }
    w.data = data.subspan(size_t(offset), size_t(size));
    ranges.push_back({offset, size});
    weights_.push_back(std::move(w));
  }
  std::vector<size_t> order(ranges.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return ranges[a].first < ranges[b].first; });
  for (size_t i = 1; i < order.size(); ++i) {
    const auto& [offset, size] = ranges[order[i - 1]];
    if (offset + size > ranges[order[i]].first && ranges[order[i]].second)
      fail("its weights '" + weights_[order[i - 1]].name + "' and '" + weights_[order[i]].name +
           "' overlap");
  }
}

}  // namespace vkcnn::archive
