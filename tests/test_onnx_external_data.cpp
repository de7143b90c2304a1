// ONNX external data (TensorProto.external_data): weights in side files next to the model, read by
// importOnnxModel(path) relative to the model's directory with offset and length honoured, or from
// memory with OnnxImportOptions::externalDataDirectory. A model importing the same weights embedded
// is the reference: the outputs must match bit for bit. Every way the side file can be wrong (gone,
// short, outside the directory by .., an absolute path or a symbolic link; no directory at all) is
// a clear invalidModel error naming the tensor and the file.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "onnx_model_builder.h"
#include "test_support.h"
#include "vkcnn/onnx.h"
#include "vkcnn/session.h"

using namespace vkcnn;
using namespace vkcnn::test;
namespace fs = std::filesystem;

namespace {

// Conv -> Relu -> Gemm with every weight an initializer, plus a Constant scale (an attribute
// tensor).
OnnxModelBuilder model() {
  OnnxModelBuilder b(13);
  b.input("x", {1, 3, 6, 6});
  b.initializer("W", {4, 3, 3, 3}, randomFloats(4 * 3 * 9, 1));
  b.initializer("B", {4}, randomFloats(4, 2));
  b.initializer("fc", {5, 144}, randomFloats(5 * 144, 3));
  b.initializer("fcb", {5}, randomFloats(5, 4));
  auto& c = b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  setAttribute(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  auto& s = b.node("Constant", {}, {"shape"}, "shape");
  setTensorAttribute(s, "value", {2}, std::vector<int64_t>{1, 144});
  b.node("Reshape", {"r", "shape"}, {"f"}, "flatten");
  auto& gemm = b.node("Gemm", {"f", "fc", "fcb"}, {"y"}, "gemm");
  setAttribute(gemm, "transB", int64_t(1));
  b.output("y", {1, 5});
  return b;
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("vkcnn-test-external-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path / "model");
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void writeFile(const fs::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
  REQUIRE(f.good());
}

void setExternal(onnx::TensorProto& t, const std::string& location, int64_t offset,
                 int64_t length) {
  t.clear_raw_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* e = t.add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
}

onnx::TensorProto& initializerNamed(OnnxModelBuilder& b, const std::string& name) {
  for (auto& t : *b.model.mutable_graph()->mutable_initializer())
    if (t.name() == name) return t;
  FAIL("no initializer " << name);
  throw 0;
}

// The model with W, B and fc in `weights.bin` (B after 7 padding bytes, fc to the end of the file
// with no length), fcb in `sub/bias.bin`, and the Constant's tensor in `shape.bin`. Returns the
// weights.bin it wrote.
std::string externalise(OnnxModelBuilder& b, const fs::path& dir) {
  std::string weights;
  auto place = [&](const std::string& name, size_t padding, bool withLength) {
    onnx::TensorProto& t = initializerNamed(b, name);
    weights.append(padding, '\x5a');
    const std::string raw = t.raw_data();
    const int64_t offset = int64_t(weights.size());
    weights += raw;
    setExternal(t, "weights.bin", offset, withLength ? int64_t(raw.size()) : -1);
  };
  place("W", 0, true);
  place("B", 7, true);
  place("fc", 16, false);
  writeFile(dir / "weights.bin", weights);
  onnx::TensorProto& fcb = initializerNamed(b, "fcb");
  fs::create_directories(dir / "sub");
  writeFile(dir / "sub" / "bias.bin", fcb.raw_data());
  setExternal(fcb, "sub/bias.bin", -1, -1);
  for (auto& node : *b.model.mutable_graph()->mutable_node())
    if (node.op_type() == "Constant") {
      onnx::TensorProto& t = *node.mutable_attribute(0)->mutable_t();
      std::string raw(16, '\0');
      for (int k = 0; k < 2; ++k) std::memcpy(raw.data() + 8 * k, &t.int64_data()[k], 8);
      t.clear_int64_data();
      writeFile(dir / "shape.bin", raw);
      setExternal(t, "shape.bin", 0, 16);
    }
  return weights;
}

void save(const OnnxModelBuilder& b, const fs::path& path) {
  const std::vector<uint8_t> bytes = b.bytes();
  writeFile(path, std::string(bytes.begin(), bytes.end()));
}

OnnxImportOptions options() {
  OnnxImportOptions o;
  o.channelFormat = ChannelFormat::float32;
  return o;
}

}  // namespace

TEST_CASE("onnx external data: weights in side files give the embedded model's outputs") {
  TempDir tmp;
  const fs::path dir = tmp.path / "model";
  const std::vector<float> input = randomFloats(3 * 36, 9);
  OnnxModelBuilder embedded = model();
  const std::vector<float> want =
      runOnnxImport(importOnnxModelFromMemory(context(), embedded.bytes(), options()), input);
  REQUIRE(want.size() == 5);
  double norm = 0;
  for (float v : want) norm += double(v) * v;
  CHECK(norm > 0);  // the comparison below means something

  OnnxModelBuilder external = model();
  externalise(external, dir);
  save(external, dir / "model.onnx");

  // From the file: relative to the model's directory.
  CHECK(runOnnxImport(importOnnxModel(context(), (dir / "model.onnx").string(), options()),
                      input) == want);
  // From memory with the directory given.
  OnnxImportOptions o = options();
  o.externalDataDirectory = dir.string();
  CHECK(runOnnxImport(importOnnxModelFromMemory(context(), external.bytes(), o), input) == want);
  // inspectOnnx reads it too.
  CHECK(inspectOnnx((dir / "model.onnx").string()).outputs[0].dims == std::vector<int64_t>{1, 5});
  // A relative model path with no directory part looks in the working directory.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  CHECK(runOnnxImport(importOnnxModel(context(), "model.onnx", options()), input) == want);
  fs::current_path(cwd);
  // A Session (and so the CLI) loading the file finds the side files beside it; from memory it
  // needs SessionOptions::externalDataDirectory.
  SessionOptions so;
  so.precision = ChannelFormat::float32;
  const auto sessionOutput = [&](Session& session) {
    const SessionTensorInfo& in = session.inputs().at(0);
    std::map<std::string, HostTensor> outputs =
        session.run({{in.name, HostTensor{in.shape, input}}});
    return outputs.at(session.outputs().at(0).name).data;
  };
  Session fromFile(context(), (dir / "model.onnx").string(), so);
  const std::vector<float> got = sessionOutput(fromFile);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
  VKCNN_CHECK_ERROR(Session::fromMemory(context(), external.bytes(), so), ErrorCode::invalidModel,
                    "externalDataDirectory");
  so.externalDataDirectory = dir.string();
  Session fromMemory = Session::fromMemory(context(), external.bytes(), so);
  CHECK(sessionOutput(fromMemory) == got);
}

TEST_CASE("onnx external data: bad side files are clear errors naming the tensor and the file") {
  TempDir tmp;
  const fs::path dir = tmp.path / "model";
  const std::string path = (dir / "model.onnx").string();
  OnnxModelBuilder base = model();
  const std::string weights = externalise(base, dir);
  writeFile(tmp.path / "outside.bin", weights);

  // From memory without a directory.
  VKCNN_CHECK_ERROR(importOnnxModelFromMemory(context(), base.bytes(), options()),
                    ErrorCode::invalidModel,
                    "initializer 'W': tensor data stored outside the model in 'weights.bin' "
                    "(external data) needs the model's directory");

  auto variant = [&](const std::function<void(onnx::TensorProto&)>& edit) {
    OnnxModelBuilder b = base;
    edit(initializerNamed(b, "W"));
    save(b, path);
  };
  auto location = [](onnx::TensorProto& t, const std::string& file) {
    for (auto& e : *t.mutable_external_data())
      if (e.key() == "location") e.set_value(file);
  };
  auto entry = [](onnx::TensorProto& t, const std::string& key, const std::string& value) {
    for (auto& e : *t.mutable_external_data())
      if (e.key() == key) e.set_value(value);
  };

  variant([&](onnx::TensorProto& t) { location(t, "missing.bin"); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "initializer 'W': external data file 'missing.bin' does not exist in the "
                    "model's directory");
  variant([&](onnx::TensorProto& t) { location(t, "../outside.bin"); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "initializer 'W': external data file '../outside.bin' leads outside the "
                    "model's directory");
  variant([&](onnx::TensorProto& t) { location(t, "sub/../../outside.bin"); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "leads outside the model's directory");
  variant([&](onnx::TensorProto& t) { location(t, (tmp.path / "outside.bin").string()); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "is an absolute path; it must be relative to the model's directory");
  fs::create_symlink(tmp.path / "outside.bin", dir / "link.bin");
  variant([&](onnx::TensorProto& t) { location(t, "link.bin"); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "'link.bin' leads outside the model's directory (through a symbolic link)");
  variant([&](onnx::TensorProto& t) { location(t, "sub"); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "external data file 'sub' does not exist");
  // Offset and length past the end of the file.
  variant([&](onnx::TensorProto& t) { entry(t, "offset", std::to_string(weights.size() - 8)); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "initializer 'W': external data file 'weights.bin' is too short: 432 bytes "
                    "at offset " +
                        std::to_string(weights.size() - 8) + " wanted, the file has " +
                        std::to_string(weights.size()));
  variant([&](onnx::TensorProto& t) { entry(t, "offset", std::to_string(weights.size() + 1)); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "external data offset " + std::to_string(weights.size() + 1) +
                        " is past the end of 'weights.bin'");
  // A length that does not match the shape.
  variant([&](onnx::TensorProto& t) { entry(t, "length", "428"); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "initializer 'W': shape [4, 3, 3, 3] of float32 needs 432 bytes of raw_data, "
                    "428 given");
  variant([&](onnx::TensorProto& t) { entry(t, "offset", "-4"); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "external data offset '-4' is not a non-negative integer");
  variant([&](onnx::TensorProto& t) { entry(t, "length", "12abc"); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "external data length '12abc' is not a non-negative integer");
  variant([&](onnx::TensorProto& t) { t.mutable_external_data(0)->set_key("where"); });
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "initializer 'W': external data without a 'location'");
  // The file shrank after the model was written: the bias in sub/ is now short.
  save(base, path);
  writeFile(dir / "sub" / "bias.bin", "abc");
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel,
                    "initializer 'fcb': shape [5] of float32 needs 20 bytes of raw_data, 3 given");
  // The model path is named in every error from a file.
  VKCNN_CHECK_ERROR(importOnnxModel(context(), path, options()), ErrorCode::invalidModel, path);
}
