// Writer (archive.h): lays the file out as docs/model-format.md says. The header and the section
// table come first, then the records (provenance, weight index, the caller's sections), then the
// weights, on a page of their own; the checksum is computed last, over everything after it.
#include <algorithm>
#include <filesystem>
#include <string_view>

#include "archive/archive.h"
#include "archive/bytes.h"
#include "archive/checksum.h"
#include "archive/weight_index.h"
#include "vkcnn/error.h"
#include "vulkan/cache_file.h"

namespace vkcnn::archive {

Writer::Writer(Provenance provenance) : provenance_(std::move(provenance)) {}

uint32_t Writer::addWeight(std::string name, WeightType type, std::vector<int64_t> dims,
                           std::vector<uint8_t> data, uint32_t layout) {
  if (!elementSize(type))
    throw Error(ErrorCode::invalidArgument, "weight '" + name + "' has an unknown type (" +
                                                std::to_string(uint32_t(type)) + ")");
  if (layout == 0) {
    const std::optional<uint64_t> expected = weight_index::denseSize(type, dims);
    if (!expected || *expected != data.size())
      throw Error(ErrorCode::invalidArgument,
                  "weight '" + name + "' has " + std::to_string(data.size()) +
                      " bytes, which its dims and type (" + toString(type) + ") do not give");
  }
  if (blobs_.size() >= std::numeric_limits<uint32_t>::max())
    throw Error(ErrorCode::limitExceeded, "a model holds at most 2^32 - 1 weights");
  blobs_.push_back({std::move(name), type, layout, std::move(dims), std::move(data)});
  return uint32_t(blobs_.size() - 1);
}

void Writer::addSection(uint32_t kind, std::vector<uint8_t> bytes, bool optional,
                        uint32_t alignment) {
  for (SectionKind own : {SectionKind::provenance, SectionKind::weightIndex, SectionKind::weights})
    if (kind == uint32_t(own))
      throw Error(ErrorCode::misuse, "the model writer writes its own provenance and weights");
  for (const Section& s : sections_)
    if (s.kind == kind) throw Error(ErrorCode::misuse, "a model section kind added twice");
  if (alignment == 0 || (alignment & (alignment - 1)) || alignment > kMaxSectionAlignment)
    throw Error(ErrorCode::invalidArgument,
                "a section's alignment must be a power of two up to 65536, not " +
                    std::to_string(alignment));
  sections_.push_back({kind, optional ? kSectionOptional : 0u, alignment, std::move(bytes)});
}

std::vector<uint8_t> Writer::build() const {
  // The weights' places in their section first: the index records them.
  std::vector<uint64_t> offsets(blobs_.size());
  uint64_t weightsSize = 0;
  std::vector<RecordWriter> entries(blobs_.size());
  for (size_t i = 0; i < blobs_.size(); ++i) {
    const Blob& b = blobs_[i];
    weightsSize = (weightsSize + kWeightAlignment - 1) & ~uint64_t(kWeightAlignment - 1);
    offsets[i] = weightsSize;
    weightsSize += b.data.size();
    entries[i]
        .string(weight_index::kName, b.name)
        .u32(weight_index::kType, uint32_t(b.type))
        .u32(weight_index::kLayout, b.layout)
        .i64s(weight_index::kDims, b.dims)
        .u64(weight_index::kOffset, offsets[i])
        .u64(weight_index::kSize, b.data.size());
  }
  RecordWriter index;
  index.records(weight_index::kWeights, entries);

  std::vector<Section> sections;
  sections.push_back(
      {uint32_t(SectionKind::provenance), 0, 8, encodeProvenance(provenance_).finish()});
  sections.push_back({uint32_t(SectionKind::weightIndex), 0, 8, index.finish()});
  for (const Section& s : sections_) sections.push_back({s.kind, s.flags, s.alignment, {}});
  // The weights last, where their pages end the file.
  sections.push_back({uint32_t(SectionKind::weights), 0, kWeightsSectionAlignment, {}});

  ByteWriter out;
  out.raw(std::string_view(kMagic, sizeof kMagic));
  out.u16(kFormatMajor);
  out.u16(kFormatMinor);
  out.u32(kHeaderSize);
  out.u64(0);  // checksum, patched last
  out.u64(0);  // file size, patched
  out.u64(kHeaderSize);
  out.u32(uint32_t(sections.size()));
  out.u32(0);
  out.alignTo(kHeaderSize);
  const size_t table = out.size();
  for (size_t i = 0; i < sections.size() * kSectionEntrySize; ++i) out.u8(0);

  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    out.alignTo(s.alignment);
    const size_t offset = out.size();
    if (s.kind == uint32_t(SectionKind::weights)) {
      out.bytes().reserve(offset + weightsSize);
      for (size_t b = 0; b < blobs_.size(); ++b) {
        out.bytes().resize(offset + offsets[b]);
        out.raw(blobs_[b].data);
      }
    } else if (i >= 2 && i < 2 + sections_.size()) {
      out.raw(sections_[i - 2].bytes);
    } else {
      out.raw(s.bytes);
    }
    const size_t at = table + i * kSectionEntrySize;
    out.patchU32(at, s.kind);
    out.patchU32(at + 4, s.flags);
    out.patchU64(at + 8, offset);
    out.patchU64(at + 16, out.size() - offset);
    out.patchU32(at + 24, s.alignment);
  }
  out.patchU64(24, out.size());
  out.patchU64(16, xxh64(std::span<const uint8_t>(out.bytes()).subspan(24)));
  return std::move(out.bytes());
}

void Writer::write(const std::string& path) const {
  // writeFileAside would make a missing folder, as the cache's own; a model's destination is the
  // caller's, and a folder that is not there is more likely a mistyped path.
  const std::string folder = std::filesystem::path(path).parent_path().string();
  if (!folder.empty() && platform::fileType(folder) != platform::FileType::directory)
    throw Error(ErrorCode::io,
                "cannot write model '" + path + "': its folder '" + folder + "' is not there");
  const std::vector<uint8_t> bytes = build();
  const std::string problem = detail::writeFileAside(
      path, {std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())});
  if (!problem.empty()) throw Error(ErrorCode::io, "cannot write model '" + path + "': " + problem);
}

}  // namespace vkcnn::archive
