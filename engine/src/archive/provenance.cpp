// The provenance section's record and the weight types' names (archive.h). Keys are the file's:
// never renumber one, only add (docs/model-format.md#provenance lists them).
#include "archive/archive.h"
#include "archive/checksum.h"

namespace vkcnn::archive {
namespace {

constexpr FieldKey kSourceName{1, "source name"};
constexpr FieldKey kSourceFormat{2, "source format"};
constexpr FieldKey kSourceSize{3, "source size"};
constexpr FieldKey kSourceHash{4, "source hash"};
constexpr FieldKey kOpsets{5, "opset"};
constexpr FieldKey kProducer{6, "producer"};
constexpr FieldKey kCompiler{7, "compiler"};
constexpr FieldKey kPrecision{8, "precision"};
constexpr FieldKey kShapes{9, "shape"};
constexpr FieldKey kBatch{10, "batch"};

constexpr FieldKey kOpsetDomain{1, "domain"};
constexpr FieldKey kOpsetVersion{2, "version"};
constexpr FieldKey kShapeInput{1, "input"};
constexpr FieldKey kShapeDims{2, "dims"};

}  // namespace

const char* toString(WeightType type) {
  switch (type) {
    case WeightType::f32:
      return "f32";
    case WeightType::f16:
      return "f16";
    case WeightType::i32:
      return "i32";
    case WeightType::i64:
      return "i64";
    case WeightType::u8:
      return "u8";
    case WeightType::i8:
      return "i8";
  }
  return "unknown";
}

uint32_t elementSize(WeightType type) {
  switch (type) {
    case WeightType::f32:
    case WeightType::i32:
      return 4;
    case WeightType::f16:
      return 2;
    case WeightType::i64:
      return 8;
    case WeightType::u8:
    case WeightType::i8:
      return 1;
  }
  return 0;
}

SourceDigest digestFile(const std::string& path, const std::string& name) {
  const platform::MappedFile file(path, name, {}, /*sequential=*/true);
  return {file.size(), xxh64(file.bytes())};
}

RecordWriter encodeProvenance(const Provenance& p) {
  std::vector<RecordWriter> opsets(p.opsets.size()), shapes(p.shapes.size());
  for (size_t i = 0; i < p.opsets.size(); ++i)
    opsets[i].string(kOpsetDomain, p.opsets[i].domain).i64(kOpsetVersion, p.opsets[i].version);
  for (size_t i = 0; i < p.shapes.size(); ++i)
    shapes[i].string(kShapeInput, p.shapes[i].input).i64s(kShapeDims, p.shapes[i].dims);
  RecordWriter w;
  w.string(kSourceName, p.sourceName)
      .string(kSourceFormat, p.sourceFormat)
      .u64(kSourceSize, p.sourceSize)
      .u64(kSourceHash, p.sourceHash)
      .records(kOpsets, opsets)
      .string(kProducer, p.producer)
      .string(kCompiler, p.compiler)
      .string(kPrecision, p.precision)
      .records(kShapes, shapes)
      .u32(kBatch, p.batch);
  return w;
}

Provenance decodeProvenance(const RecordReader& r) {
  Provenance p;
  p.sourceName = r.string(kSourceName);
  p.sourceFormat = r.string(kSourceFormat);
  p.sourceSize = r.u64(kSourceSize);
  p.sourceHash = r.u64(kSourceHash);
  for (const RecordReader& o : r.records(kOpsets))
    p.opsets.push_back({o.string(kOpsetDomain), o.i64(kOpsetVersion)});
  p.producer = r.string(kProducer, "");
  p.compiler = r.string(kCompiler);
  p.precision = r.string(kPrecision);
  if (p.precision != "fp16" && p.precision != "fp32")
    r.fail(kPrecision, "is '" + p.precision + "', expected fp16 or fp32");
  for (const RecordReader& s : r.records(kShapes)) {
    InputShape shape{s.string(kShapeInput), s.i64s(kShapeDims)};
    for (int64_t d : shape.dims)
      if (d < 0) s.fail(kShapeDims, "has a negative dimension (" + std::to_string(d) + ")");
    p.shapes.push_back(std::move(shape));
  }
  p.batch = r.u32(kBatch, 0);
  return p;
}

}  // namespace vkcnn::archive
