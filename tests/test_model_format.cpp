// The .vkcnn container (engine/src/archive, docs/model-format.md), on the host only: the checksum
// against XXH64's published values, typed records, a file written and read back (mapped, its
// weights aligned), and the reader given hostile files, each refused with an Error that names the
// file and what was wrong; every prefix of a file and every byte of its front, changed, is refused
// or read without a crash.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "archive/archive.h"
#include "archive/bytes.h"
#include "archive/checksum.h"
#include "platform/platform.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::archive;

namespace {

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("vkcnn-test-model-format-" + std::to_string(platform::processId()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

std::vector<uint8_t> bytesOf(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

Provenance sampleProvenance() {
  Provenance p;
  p.sourceName = "resnet.onnx";
  p.sourceFormat = "onnx";
  p.sourceSize = 123456;
  p.sourceHash = 0x0123456789abcdefull;
  p.opsets = {{"", 17}, {"com.microsoft", 1}};
  p.producer = "pytorch 2.1";
  p.compiler = "0.1.0";
  p.precision = "fp16";
  p.shapes = {{"input", {1, 3, 224, 224}}};
  p.batch = 4;
  return p;
}

constexpr FieldKey kNodeOp{1, "op"};
constexpr FieldKey kNodeWeight{2, "weight"};

// A model with three weights (one of 1000 floats, so that weights span more than one 256-byte
// slot) and a graph section of one record.
Writer sampleWriter() {
  Writer w(sampleProvenance());
  std::vector<float> big(1000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = float(i) * 0.5f - 7.0f;
  w.addWeight("conv.weight", WeightType::f32, {10, 100}, bytesOf(big));
  w.addWeight("conv.bias", WeightType::f32, {3}, bytesOf({1.0f, -2.0f, 3.5f}));
  w.addWeight("shape", WeightType::i64, {0}, {});
  RecordWriter node;
  node.string(kNodeOp, "Conv").tensor(kNodeWeight, 0);
  w.addSection(uint32_t(SectionKind::graph), node.finish());
  return w;
}

// The error that reading `bytes` gives; fails the test where it reads fine.
Error readError(std::span<const uint8_t> bytes, bool verifyChecksum = true) {
  try {
    Archive::fromBytes(bytes, "model 'hostile.vkcnn'", {verifyChecksum});
  } catch (const Error& e) {
    return e;
  }
  FAIL("the file was read without an error");
  return Error(ErrorCode::misuse, "unreachable");
}

#define CHECK_REFUSED(bytes, code_, text)                                             \
  do {                                                                                \
    const Error e_ = readError(bytes);                                                \
    INFO(std::string(e_.what()));                                                     \
    CHECK((e_.code() == (code_)));                                                    \
    CHECK(std::string(e_.what()).find("model 'hostile.vkcnn'") != std::string::npos); \
    CHECK(std::string(e_.what()).find(text) != std::string::npos);                    \
  } while (0)

// Recomputes the header's checksum after a test changed the content (so that the reader gets to
// the check the test is about).
void reseal(std::vector<uint8_t>& file) {
  const uint64_t sum = xxh64(std::span<const uint8_t>(file).subspan(24));
  for (int i = 0; i < 8; ++i) file[16 + i] = uint8_t(sum >> (8 * i));
}

void put32(std::vector<uint8_t>& file, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) file[at + i] = uint8_t(v >> (8 * i));
}
void put64(std::vector<uint8_t>& file, size_t at, uint64_t v) {
  put32(file, at, uint32_t(v));
  put32(file, at + 4, uint32_t(v >> 32));
}

// The section table's entry `i`: where its fields are.
size_t entry(size_t i) {
  return kHeaderSize + i * kSectionEntrySize;
}
constexpr size_t kKind = 0, kFlags = 4, kOffset = 8, kSize = 16, kAlignment = 24;

// A file of the caller's sections, laid out as the Writer lays its own (for files no Writer
// makes: a weight index that lies).
struct RawSection {
  uint32_t kind;
  std::vector<uint8_t> bytes;
  uint32_t alignment = 8;
};
std::vector<uint8_t> assemble(const std::vector<RawSection>& sections) {
  ByteWriter out;
  out.raw(std::string_view(kMagic, 8));
  out.u16(kFormatMajor);
  out.u16(kFormatMinor);
  out.u32(kHeaderSize);
  out.u64(0);
  out.u64(0);
  out.u64(kHeaderSize);
  out.u32(uint32_t(sections.size()));
  out.alignTo(kHeaderSize);
  for (size_t i = 0; i < sections.size() * kSectionEntrySize; ++i) out.u8(0);
  for (size_t i = 0; i < sections.size(); ++i) {
    out.alignTo(sections[i].alignment);
    const size_t offset = out.size();
    out.raw(sections[i].bytes);
    out.patchU32(entry(i) + kKind, sections[i].kind);
    out.patchU64(entry(i) + kOffset, offset);
    out.patchU64(entry(i) + kSize, sections[i].bytes.size());
    out.patchU32(entry(i) + kAlignment, sections[i].alignment);
  }
  out.patchU64(24, out.size());
  std::vector<uint8_t> file = std::move(out.bytes());
  reseal(file);
  return file;
}

// A file whose weight index is `entries` over `weights` bytes of weights.
std::vector<uint8_t> withWeightIndex(const std::vector<RecordWriter>& entries, size_t weights) {
  RecordWriter index;
  index.records({1, "weight"}, entries);
  return assemble(
      {{uint32_t(SectionKind::provenance), encodeProvenance(sampleProvenance()).finish()},
       {uint32_t(SectionKind::weightIndex), index.finish()},
       {uint32_t(SectionKind::weights), std::vector<uint8_t>(weights, 0), 4096}});
}

RecordWriter weightEntry(const char* name, uint32_t type, std::vector<int64_t> dims,
                         uint64_t offset, uint64_t size) {
  RecordWriter e;
  e.string({1, "name"}, name).u32({2, "type"}, type).u32({3, "layout"}, 0);
  e.i64s({4, "dims"}, dims).u64({5, "offset"}, offset).u64({6, "size"}, size);
  return e;
}

}  // namespace

TEST_CASE("model format: the checksum is XXH64 (seed 0)") {
  // Reference values from Debian's libxxhash 0.8.1 (XXH64) over bytes i * 31 + 7: every path of
  // the function (tail bytes, 4 and 8 bytes at a time, 32-byte stripes).
  std::vector<uint8_t> b(300);
  for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(i * 31 + 7);
  const std::pair<size_t, uint64_t> expected[] = {
      {0, 0xef46db3751d8e999},  {1, 0xa96c7f0ce858bbb7},  {3, 0x56e6957632a487f9},
      {4, 0xc60d15b1e3ff8f04},  {7, 0xafbefc3d6c6f9a8e},  {8, 0x3da5c7aa269683e0},
      {9, 0x4b17a9ba9e215c09},  {31, 0x4a74f3a1a39ad4a1}, {32, 0x8d57d6a4671cc43d},
      {33, 0x62c9fd21ed857664}, {64, 0x7bbabbc45729d17e}, {300, 0x8d2ba0cd7fece76c}};
  for (const auto& [size, hash] : expected) {
    INFO("size " << size);
    CHECK(xxh64(std::span<const uint8_t>(b).first(size)) == hash);
  }
  CHECK(xxh64(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>("abc"), 3)) ==
        0x44bc2cf5ad770999ull);
}

TEST_CASE("model format: a record's fields read back as written") {
  constexpr FieldKey kA{1, "a"}, kB{2, "b"}, kC{3, "c"}, kD{4, "d"}, kE{5, "e"}, kF{6, "f"},
      kG{7, "g"}, kH{8, "h"}, kI{9, "i"}, kJ{10, "j"}, kK{11, "k"}, kL{12, "l"}, kM{13, "m"},
      kN{14, "n"}, kO{15, "o"}, kMissing{99, "missing"};
  RecordWriter inner;
  inner.u32(kA, 7);
  std::vector<RecordWriter> list(3);
  for (uint32_t i = 0; i < 3; ++i) list[i].u32(kA, 100 + i);
  const std::vector<uint32_t> u32s{1, 2, 0xffffffffu};
  const std::vector<int32_t> i32s{-1, 0, 5};
  const std::vector<float> f32s{0.5f, -INFINITY, 1e-40f};
  const std::vector<int64_t> i64s{-(int64_t(1) << 40), 3};
  const std::vector<uint8_t> raw{9, 8, 7};
  RecordWriter w;
  w.u32(kA, 42).i32(kB, -3).f32(kC, 2.5f).u64(kD, 1ull << 50).i64(kE, -(1ll << 50));
  w.string(kF, "héllo").u32s(kG, u32s).i32s(kH, i32s).f32s(kI, f32s).i64s(kJ, i64s);
  const std::vector<uint32_t> refs{0, 4, 2};
  w.tensor(kK, 4).record(kL, inner).records(kM, list).bytes(kN, raw).tensors(kO, refs);
  const std::vector<uint8_t> bytes = w.finish();

  const RecordReader r(bytes, "record");
  CHECK(r.keys().size() == 15);
  CHECK(r.u32(kA) == 42);
  CHECK(r.i32(kB) == -3);
  CHECK(r.f32(kC) == 2.5f);
  CHECK(r.u64(kD) == 1ull << 50);
  CHECK(r.i64(kE) == -(1ll << 50));
  CHECK(r.string(kF) == "héllo");
  CHECK((r.u32s(kG) == u32s));
  CHECK((r.i32s(kH) == i32s));
  const std::vector<float> floats = r.f32s(kI);
  REQUIRE(floats.size() == 3);
  CHECK(std::memcmp(floats.data(), f32s.data(), 12) == 0);
  CHECK((r.i64s(kJ) == i64s));
  CHECK(r.tensor(kK, 5) == 4);
  CHECK(r.record(kL).u32(kA) == 7);
  const std::vector<RecordReader> records = r.records(kM);
  REQUIRE(records.size() == 3);
  CHECK(records[2].u32(kA) == 102);
  CHECK((std::vector<uint8_t>(r.bytes(kN).begin(), r.bytes(kN).end()) == raw));
  CHECK((r.tensors(kO, 5) == refs));
  // Fields a file from before they existed lacks read as the caller's default.
  CHECK(!r.has(kMissing));
  CHECK(r.u32(kMissing, 5) == 5);
  CHECK(r.string(kMissing, "none") == "none");

  auto message = [&](auto read) -> std::string {
    try {
      read();
    } catch (const Error& e) {
      CHECK((e.code() == ErrorCode::invalidModel));
      return e.what();
    }
    FAIL("no error");
    return {};
  };
  CHECK(message([&] { r.u32(kMissing); }) == "vkcnn: record: field 'missing' (key 99) is missing");
  CHECK(message([&] { r.u32(kF); }) ==
        "vkcnn: record: field 'f' (key 6) is a string, expected a u32");
  CHECK(message([&] { r.u32(kF, 1); }).find("is a string") != std::string::npos);
  CHECK(message([&] { r.tensor(kK, 4); }) ==
        "vkcnn: record: field 'k' (key 11) refers to tensor 4, but there are 4");
  CHECK(message([&] { r.tensors(kO, 4); }) ==
        "vkcnn: record: field 'o' (key 15) refers (at 1) to tensor 4, but there are 4");
  // A key written twice is the writer's mistake.
  RecordWriter twice;
  twice.u32(kA, 1);
  CHECK_THROWS_AS(twice.u32(kA, 2), Error);
}

TEST_CASE("model format: hostile records are refused") {
  auto refused = [](std::vector<uint8_t> bytes, const std::string& text) {
    try {
      RecordReader r(bytes, "model 'hostile.vkcnn': node 3");
      // Framing that passes may still hold a list that lies.
      r.records({1, "list"});
    } catch (const Error& e) {
      INFO(std::string(e.what()));
      CHECK((e.code() == ErrorCode::invalidModel));
      CHECK(std::string(e.what()).find("model 'hostile.vkcnn': node 3") != std::string::npos);
      CHECK(std::string(e.what()).find(text) != std::string::npos);
      return;
    }
    FAIL("accepted: " << text);
  };
  refused({1, 0}, "too short for its field count");
  refused({0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}, "says it has 4294967295 fields");
  // One field (key 1, u32) whose size runs past the end.
  refused({1, 0, 0, 0, 1, 0, 1, 0, 200, 0, 0, 0, 1, 2, 3, 4}, "past the record's end");
  // A u32 of 3 bytes.
  refused({1, 0, 0, 0, 1, 0, 1, 0, 3, 0, 0, 0, 1, 2, 3}, "is a u32 of 3 bytes");
  // A field count that leaves bytes over.
  refused({1, 0, 0, 0, 1, 0, 1, 0, 4, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0},
          "bytes after its 1 fields");
  // Key 1 twice.
  refused({2, 0, 0, 0, 1, 0, 1, 0, 4, 0, 0, 0, 1, 2, 3, 4, 1, 0, 1, 0, 4, 0, 0, 0, 1, 2, 3, 4},
          "key 1 twice");
  // A list of records (key 1) that says it has a billion.
  refused({1, 0, 0, 0, 1, 0, 13, 0, 8, 0, 0, 0, 0, 0xca, 0x9a, 0x3b, 0, 0, 0, 0},
          "says it has 1000000000 records");
  // A list whose only record's size runs past the field.
  refused({1, 0, 0, 0, 1, 0, 13, 0, 12, 0, 0, 0, 1, 0, 0, 0, 50, 0, 0, 0, 0, 0, 0, 0},
          "record 0 is 50 bytes, past the field's end");
}

TEST_CASE("model format: a model written and read back, mapped, its weights aligned") {
  const Writer writer = sampleWriter();
  const std::filesystem::path path = scratch("round_trip.vkcnn");
  writer.write(path.string());
  // Written aside and renamed: nothing else is left in the directory.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(path.parent_path()))
    files += e.path().filename().string().find("round_trip") != std::string::npos;
  CHECK(files == 1);
  CHECK(std::filesystem::file_size(path) == writer.build().size());

  {
    Archive a = Archive::open(path.string());
    CHECK(a.name() == "model '" + path.string() + "'");
    CHECK(a.formatMajor() == kFormatMajor);
    CHECK(a.formatMinor() == kFormatMinor);
    const Provenance& p = a.provenance();
    const Provenance q = sampleProvenance();
    CHECK(p.sourceName == q.sourceName);
    CHECK(p.sourceFormat == q.sourceFormat);
    CHECK(p.sourceSize == q.sourceSize);
    CHECK(p.sourceHash == q.sourceHash);
    REQUIRE(p.opsets.size() == 2);
    CHECK(p.opsets[1].domain == "com.microsoft");
    CHECK(p.opsets[0].version == 17);
    CHECK(p.producer == q.producer);
    CHECK(p.compiler == q.compiler);
    CHECK(p.precision == "fp16");
    REQUIRE(p.shapes.size() == 1);
    CHECK(p.shapes[0].input == "input");
    CHECK((p.shapes[0].dims == std::vector<int64_t>{1, 3, 224, 224}));
    CHECK(p.batch == 4);

    REQUIRE(a.weights().size() == 3);
    const Weight& conv = a.weights()[0];
    CHECK(conv.name == "conv.weight");
    CHECK((conv.type == WeightType::f32));
    CHECK((conv.dims == std::vector<int64_t>{10, 100}));
    REQUIRE(conv.data.size() == 4000);
    float value;
    std::memcpy(&value, conv.data.data() + 4 * 999, 4);
    CHECK(value == 999 * 0.5f - 7.0f);
    const Weight& bias = a.weights()[1];
    CHECK(bias.data.size() == 12);
    std::memcpy(&value, bias.data.data() + 8, 4);
    CHECK(value == 3.5f);
    CHECK((a.weights()[2].type == WeightType::i64));
    CHECK(a.weights()[2].data.empty());
    // The weights are used where the file is mapped: each at a 256-byte boundary of memory.
    for (const Weight& w : a.weights()) {
      INFO(w.name);
      CHECK(reinterpret_cast<uintptr_t>(w.data.data()) % kWeightAlignment == 0);
      CHECK(w.data.data() >= a.bytes().data());
      CHECK(w.data.data() + w.data.size() <= a.bytes().data() + a.bytes().size());
    }
    // The graph's section, as given.
    const auto graph = a.section(SectionKind::graph);
    REQUIRE(graph);
    const RecordReader node(*graph, "node 0");
    CHECK(node.string(kNodeOp) == "Conv");
    CHECK(node.tensor(kNodeWeight, uint32_t(a.weights().size())) == 0);
    CHECK(!a.section(fourCc("NOPE")));

    // Moved, the mapping and the weights' views go with it.
    const Archive moved = std::move(a);
    CHECK(moved.weights()[1].data.size() == 12);
    std::memcpy(&value, moved.weights()[1].data.data(), 4);
    CHECK(value == 1.0f);
  }  // (Windows deletes no file that is mapped)
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("model format: whether a model was compiled from a source as it is now") {
  const std::filesystem::path source = scratch("source.onnx"), model = scratch("source.vkcnn");
  const std::string text = "not really ONNX, but bytes to hash";
  std::ofstream(source, std::ios::binary) << text;
  const SourceDigest digest = digestFile(source.string(), "ONNX model");
  CHECK(digest.size == text.size());
  CHECK(digest.hash == xxh64(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()),
                                                      text.size())));
  Provenance p = sampleProvenance();
  p.sourceSize = digest.size;
  p.sourceHash = digest.hash;
  Writer(p).write(model.string());
  {
    const Archive a = Archive::open(model.string());
    CHECK(a.compiledFrom(source.string()));
    std::ofstream(source, std::ios::binary) << text << "!";
    CHECK(!a.compiledFrom(source.string()));
    std::filesystem::remove(source);
    CHECK_THROWS_AS(a.compiledFrom(source.string()), Error);
  }
  std::filesystem::remove_all(source.parent_path());
}

TEST_CASE("model format: the writer refuses what it cannot write, and leaves no half file") {
  Writer w(sampleProvenance());
  CHECK_THROWS_AS(w.addWeight("w", WeightType::f32, {2, 2}, std::vector<uint8_t>(15)), Error);
  CHECK_THROWS_AS(w.addWeight("w", WeightType(77), {1}, std::vector<uint8_t>(4)), Error);
  CHECK_THROWS_AS(w.addSection(uint32_t(SectionKind::weights), {}), Error);
  w.addSection(uint32_t(SectionKind::graph), {1, 0, 0, 0});
  CHECK_THROWS_AS(w.addSection(uint32_t(SectionKind::graph), {}), Error);

  // A folder that is not there is not made.
  const std::filesystem::path nowhere = scratch("no_folder") / "model.vkcnn";
  try {
    w.write(nowhere.string());
    FAIL("written into a folder that was not there");
  } catch (const Error& e) {
    CHECK((e.code() == ErrorCode::io));
    CHECK(std::string(e.what()) == "vkcnn: cannot write model '" + nowhere.string() +
                                       "': its folder '" + nowhere.parent_path().string() +
                                       "' is not there");
  }
  CHECK(!std::filesystem::exists(nowhere.parent_path()));

  // A destination that is a directory: the rename fails, the aside file is removed.
  const std::filesystem::path dir = scratch("is_a_directory.vkcnn");
  std::filesystem::create_directories(dir);
  try {
    w.write(dir.string());
    FAIL("written over a directory");
  } catch (const Error& e) {
    CHECK((e.code() == ErrorCode::io));
    CHECK(std::string(e.what()).find("cannot write model '" + dir.string() + "'") !=
          std::string::npos);
  }
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.parent_path()))
    files += e.path().filename().string().find("is_a_directory") != std::string::npos;
  CHECK(files == 1);
  std::filesystem::remove_all(dir.parent_path());
}

TEST_CASE("model format: a file that cannot be opened, or is no model") {
  const std::string missing = scratch("missing.vkcnn").string();
  try {
    Archive::open(missing);
    FAIL("opened");
  } catch (const Error& e) {
    CHECK((e.code() == ErrorCode::io));
    CHECK(std::string(e.what()) == "vkcnn: cannot open model '" + missing + "': no such file");
  }
  std::filesystem::remove_all(std::filesystem::path(missing).parent_path());
  const std::vector<uint8_t> empty;
  CHECK_REFUSED(empty, ErrorCode::invalidModel, "not a vkcnn model");
  // An ONNX model (a protobuf) given where a .vkcnn is expected.
  const std::vector<uint8_t> onnx{0x08, 0x07, 0x12, 0x07, 'p', 'y', 't', 'o', 'r', 'c', 'h'};
  CHECK_REFUSED(onnx, ErrorCode::invalidModel, "not a vkcnn model");
}

TEST_CASE("model format: format versions") {
  std::vector<uint8_t> file = sampleWriter().build();
  SUBCASE("a newer minor version is read") {
    file[10] = uint8_t(kFormatMinor + 1);
    reseal(file);
    CHECK(Archive::fromBytes(file, "model 'newer.vkcnn'").formatMinor() == kFormatMinor + 1);
  }
  SUBCASE("a newer major version is refused: upgrade") {
    file[8] = uint8_t(kFormatMajor + 1);
    // Its layout may differ in anything after the version: the checksum is not looked at.
    file[16] ^= 0xff;
    CHECK_REFUSED(file, ErrorCode::unsupported,
                  "is format version 2.0, newer than this vkcnn reads (format 1.0, vkcnn ");
    CHECK_REFUSED(file, ErrorCode::unsupported, "upgrade vkcnn to load it");
  }
  SUBCASE("an older major version is refused: recompile") {
    file[8] = 0;
    CHECK_REFUSED(file, ErrorCode::unsupported,
                  "is format version 0.0, older than this vkcnn reads");
    CHECK_REFUSED(file, ErrorCode::unsupported,
                  "compile the model again from its source: vkcnn compile MODEL.onnx -o ");
  }
}

TEST_CASE("model format: a file cut short, grown or damaged is refused") {
  const std::vector<uint8_t> file = sampleWriter().build();
  REQUIRE(Archive::fromBytes(file, "model 'good.vkcnn'").weights().size() == 3);
  SUBCASE("truncated") {
    for (size_t size : {size_t(10), size_t(40), file.size() / 2, file.size() - 1}) {
      INFO("cut to " << size);
      CHECK_REFUSED(std::span<const uint8_t>(file).first(size), ErrorCode::invalidModel,
                    "truncated");
    }
  }
  SUBCASE("grown") {
    std::vector<uint8_t> longer = file;
    longer.push_back(0);
    CHECK_REFUSED(longer, ErrorCode::invalidModel, "more than the");
  }
  SUBCASE("a weight's byte changed: wrong checksum") {
    std::vector<uint8_t> damaged = file;
    damaged[damaged.size() - 5] ^= 1;
    CHECK_REFUSED(damaged, ErrorCode::invalidModel, "wrong checksum");
    CHECK_REFUSED(damaged, ErrorCode::invalidModel, "the file is damaged");
  }
  SUBCASE("the checksum itself changed") {
    std::vector<uint8_t> damaged = file;
    damaged[20] ^= 0x80;
    CHECK_REFUSED(damaged, ErrorCode::invalidModel, "wrong checksum");
  }
}

TEST_CASE("model format: a section table that lies is refused") {
  std::vector<uint8_t> file = sampleWriter().build();
  // The Writer's order: provenance, weight index, graph, weights.
  REQUIRE(loadU32(file.data() + 40) == 4);
  REQUIRE(loadU32(file.data() + entry(3) + kKind) == uint32_t(SectionKind::weights));
  SUBCASE("a huge section count") {
    put32(file, 40, 0x10000000);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "says 268435456 sections, more than the");
  }
  SUBCASE("the table outside the file") {
    put64(file, 32, uint64_t(1) << 62);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "section table is at byte");
  }
  SUBCASE("a section past the end") {
    put64(file, entry(3) + kSize, file.size());
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel,
                  "section 3 ('WDAT'), 8448 bytes at byte 4096, is outside the file's content "
                  "(bytes 192 to 8448)");
  }
  SUBCASE("an offset and size that wrap around 2^64") {
    put64(file, entry(1) + kOffset, 4096);
    put64(file, entry(1) + kSize, ~uint64_t(0) - 100);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "is outside the file's content");
  }
  SUBCASE("a section over the table") {
    put64(file, entry(0) + kOffset, kHeaderSize);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "is outside the file's content");
  }
  SUBCASE("overlapping sections") {
    put64(file, entry(1) + kOffset, loadU64(file.data() + entry(0) + kOffset));
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "overlap");
  }
  SUBCASE("a misaligned section") {
    put64(file, entry(3) + kOffset, loadU64(file.data() + entry(3) + kOffset) + 4);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "not a multiple of its alignment 4096");
  }
  SUBCASE("an alignment that is no power of two") {
    put32(file, entry(0) + kAlignment, 24);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "has an alignment of 24");
  }
  SUBCASE("weights aligned to less than they need") {
    put32(file, entry(3) + kAlignment, 64);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "weights section is aligned to 64 bytes");
  }
  SUBCASE("a section kind twice") {
    put32(file, entry(2) + kKind, uint32_t(SectionKind::provenance));
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "two 'PROV' sections");
  }
  SUBCASE("an unknown section that may be skipped is skipped") {
    put32(file, entry(2) + kKind, fourCc("ZZZZ"));
    put32(file, entry(2) + kFlags, kSectionOptional);
    reseal(file);
    const Archive a = Archive::fromBytes(file, "model 'future.vkcnn'");
    CHECK(a.weights().size() == 3);
    CHECK(!a.section(SectionKind::graph));
  }
  SUBCASE("an unknown section that may not be skipped is refused") {
    put32(file, entry(2) + kKind, 0x01020304);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::unsupported,
                  "section 2 (0x01020304) is of a kind this vkcnn "
                  "does not know");
  }
  SUBCASE("a required section missing") {
    put32(file, entry(0) + kKind, fourCc("ZZZZ"));
    put32(file, entry(0) + kFlags, kSectionOptional);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "it has no 'PROV' section");
  }
  SUBCASE("a provenance that lies") {
    const size_t at = size_t(loadU64(file.data() + entry(0) + kOffset));
    put32(file, at, 1000000);
    reseal(file);
    CHECK_REFUSED(file, ErrorCode::invalidModel, "hostile.vkcnn': provenance: the record says");
  }
}

TEST_CASE("model format: a weight index that lies is refused") {
  const uint32_t f32 = uint32_t(WeightType::f32);
  CHECK(Archive::fromBytes(
            withWeightIndex({weightEntry("a", f32, {4}, 0, 16), weightEntry("b", f32, {2}, 256, 8)},
                            512),
            "model 'ok.vkcnn'")
            .weights()
            .size() == 2);
  CHECK_REFUSED(withWeightIndex({weightEntry("a", f32, {4}, 4, 16)}, 512), ErrorCode::invalidModel,
                "weight index, weight 0: field 'offset' (key 5) is 4, not a multiple of 256");
  CHECK_REFUSED(withWeightIndex({weightEntry("a", f32, {4}, 256, 512)}, 512),
                ErrorCode::invalidModel, "go past the weights section's 512 bytes");
  CHECK_REFUSED(withWeightIndex({weightEntry("a", f32, {4}, 256, ~uint64_t(0))}, 512),
                ErrorCode::invalidModel, "go past the weights section's 512 bytes");
  CHECK_REFUSED(withWeightIndex({weightEntry("a", f32, {4}, 0, 12)}, 512), ErrorCode::invalidModel,
                "is 12 bytes, which the weight's dims and type (f32) do not give");
  CHECK_REFUSED(withWeightIndex({weightEntry("a", f32, {-4}, 0, 16)}, 512), ErrorCode::invalidModel,
                "do not give");
  CHECK_REFUSED(withWeightIndex({weightEntry("a", f32, {int64_t(1) << 62, 8}, 0, 16)}, 512),
                ErrorCode::invalidModel, "do not give");
  CHECK_REFUSED(withWeightIndex({weightEntry("a", 99, {4}, 0, 16)}, 512), ErrorCode::invalidModel,
                "field 'type' (key 2) is 99, no weight type");
  CHECK_REFUSED(
      withWeightIndex({weightEntry("a", f32, {64}, 0, 256), weightEntry("b", f32, {64}, 0, 256)},
                      512),
      ErrorCode::invalidModel, "its weights 'a' and 'b' overlap");
}

TEST_CASE("model format: every prefix, and every changed byte of the front, is safe") {
  const std::vector<uint8_t> file = sampleWriter().build();
  // Every prefix but the whole file is refused.
  for (size_t size = 0; size < file.size(); ++size) {
    try {
      Archive::fromBytes(std::span<const uint8_t>(file).first(size), "model 'cut.vkcnn'");
      FAIL("a prefix of " << size << " bytes was read");
    } catch (const Error&) {
    }
  }
  // The header, the table and the records, each byte changed, with the checksum either checked
  // (refused) or not (the reader's own checks): an Error or a file that reads, never a crash.
  const size_t front = size_t(loadU64(file.data() + entry(3) + kOffset));
  for (size_t i = 0; i < front; ++i)
    for (uint8_t flip : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      std::vector<uint8_t> changed = file;
      changed[i] ^= flip;
      for (bool verify : {true, false}) {
        try {
          Archive::fromBytes(changed, "model 'flipped.vkcnn'", {verify});
          // Read: only where the change touched no byte that anything checks (padding, reserved
          // fields, a name's letters), and never with the checksum on (it covers everything
          // from byte 24).
          CHECK((!verify || i < 24));
        } catch (const Error&) {
        }
      }
    }
}
