// Compiled models (.vkcnn) against the ONNX models they were compiled from: for models of the test
// suite covering convolutions, concatenation, squeeze-excitation, batch normalisation, residuals,
// resize, pooling and the Tensor kernels (layer normalisation, transposes, matrix products, ...),
// the model is imported from ONNX, written to a .vkcnn in memory (graph/serialize.h), read back,
// and both run on the same input: the outputs must be bit-identical. Sessions take either file the
// same way (told by the magic, not the name).
#include <cstring>
#include <filesystem>
#include <fstream>

#include "archive/archive.h"
#include "graph/serialize.h"
#include "onnx_model_builder.h"
#include "test_support.h"
#include "vkcnn/onnx.h"
#include "vkcnn/session.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f, "cannot open " << path);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The .vkcnn of `onnx` imported with `options`.
std::vector<uint8_t> compile(std::span<const uint8_t> onnx, const OnnxImportOptions& options) {
  OnnxImport imported = importOnnxModelFromMemory(context(), onnx, options);
  archive::Provenance p;
  p.sourceName = "model.onnx";
  p.sourceFormat = "onnx";
  p.compiler = "test";
  p.precision = options.channelFormat == ChannelFormat::float32 ? "fp32" : "fp16";
  archive::Writer writer(p);
  detail::writeGraph(imported.graph, writer, &imported.info);
  return writer.build();
}

std::vector<std::vector<float>> runOnce(OnnxImport& m, const std::vector<std::vector<float>>& in,
                                        ChannelFormat format) {
  std::vector<Image> inputs;
  for (size_t k = 0; k < in.size(); ++k)
    inputs.push_back(makeOnnxImage(context(), m.info.inputs[k], in[k], format));
  CommandBuffer cb(context());
  const std::vector<Image> outputs = m.graph.encode(cb, inputs);
  cb.commit();
  cb.waitUntilCompleted();
  std::vector<std::vector<float>> result;
  for (size_t k = 0; k < outputs.size(); ++k)
    result.push_back(readOnnxImage(outputs[k], m.info.outputs[k]));
  return result;
}

// Imports, compiles, reads back, runs both; outputs bit-identical.
void checkIdentical(const std::string& name, std::span<const uint8_t> onnx,
                    OnnxImportOptions options = {}) {
  for (const ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(name);
    CAPTURE(toString(format));
    options.channelFormat = format;
    OnnxImport direct = importOnnxModelFromMemory(context(), onnx, options);
    const std::vector<uint8_t> file = compile(onnx, options);
    const archive::Archive archive = archive::Archive::fromBytes(file, name + ".vkcnn");
    OnnxImport loaded = detail::readModel(context(), archive);
    REQUIRE(loaded.info.inputs.size() == direct.info.inputs.size());
    std::vector<std::vector<float>> in;
    for (size_t k = 0; k < direct.info.inputs.size(); ++k) {
      size_t count = 1;
      for (int64_t d : direct.info.inputs[k].dims) count *= size_t(d);
      CHECK(loaded.info.inputs[k].dims == direct.info.inputs[k].dims);
      in.push_back(randomFloats(count, uint32_t(7 + k)));
    }
    const auto want = runOnce(direct, in, format);
    const auto got = runOnce(loaded, in, format);
    CHECK(loaded.graph.statistics().kernels == direct.graph.statistics().kernels);
    CHECK(loaded.graph.describe() == direct.graph.describe());
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      CAPTURE(k);
      REQUIRE(got[k].size() == want[k].size());
      CHECK(std::memcmp(got[k].data(), want[k].data(), got[k].size() * sizeof(float)) == 0);
    }
  }
}

// A small network of the Image kernels the torch exports do not have: a convolution with batch
// normalisation and ReLU (folded, fused), max pooling, a squeeze-excitation block (fused), a
// residual add (fused), a concatenation (written in place), a nearest resize and average pooling.
std::vector<uint8_t> imageKernelsModel() {
  OnnxModelBuilder b(13);
  const int64_t C = 8, R = 4;
  b.input("input", {1, 3, 16, 16});
  b.initializer("stem.w", {C, 3, 3, 3}, randomFloats(size_t(C) * 27, 1, -0.4f, 0.4f));
  b.initializer("stem.b", {C}, randomFloats(C, 2));
  for (const char* p : {"bn.scale", "bn.bias", "bn.mean"})
    b.initializer(p, {C}, randomFloats(C, 3, -0.5f, 0.5f));
  b.initializer("bn.var", {C}, randomFloats(C, 4, 0.5f, 1.5f));
  b.initializer("fc1.w", {R, C, 1, 1}, randomFloats(size_t(R) * C, 5, -0.5f, 0.5f));
  b.initializer("fc1.b", {R}, randomFloats(R, 6));
  b.initializer("fc2.w", {C, R, 1, 1}, randomFloats(size_t(C) * R, 7, -0.8f, 0.8f));
  b.initializer("fc2.b", {C}, randomFloats(C, 8));
  b.initializer("side.w", {C, C, 1, 1}, randomFloats(size_t(C) * C, 9, -0.3f, 0.3f));
  b.initializer("scales", {4}, std::vector<float>{1, 1, 2, 2});
  auto& stem = b.node("Conv", {"input", "stem.w", "stem.b"}, {"stem"}, "stem");
  setAttribute(stem, "kernel_shape", std::vector<int64_t>{3, 3});
  setAttribute(stem, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("BatchNormalization", {"stem", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"bn"}, "bn");
  b.node("Relu", {"bn"}, {"x"}, "relu");
  auto& pool = b.node("MaxPool", {"x"}, {"p"}, "pool");
  setAttribute(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  setAttribute(pool, "strides", std::vector<int64_t>{2, 2});
  b.node("GlobalAveragePool", {"p"}, {"g"}, "se.pool");
  auto& fc1 = b.node("Conv", {"g", "fc1.w", "fc1.b"}, {"h"}, "se.fc1");
  setAttribute(fc1, "kernel_shape", std::vector<int64_t>{1, 1});
  b.node("Relu", {"h"}, {"a"}, "se.relu");
  auto& fc2 = b.node("Conv", {"a", "fc2.w", "fc2.b"}, {"s"}, "se.fc2");
  setAttribute(fc2, "kernel_shape", std::vector<int64_t>{1, 1});
  b.node("Sigmoid", {"s"}, {"gate"}, "se.gate");
  b.node("Mul", {"gate", "p"}, {"se"}, "se.mul");
  auto& side = b.node("Conv", {"se", "side.w"}, {"side"}, "side");
  setAttribute(side, "kernel_shape", std::vector<int64_t>{1, 1});
  b.node("Add", {"side", "p"}, {"res"}, "residual");
  auto& cat = b.node("Concat", {"res", "se"}, {"cat"}, "concat");
  setAttribute(cat, "axis", int64_t(1));
  auto& up = b.node("Resize", {"cat", "", "scales"}, {"up"}, "up");
  setAttribute(up, "mode", std::string("nearest"));
  auto& avg = b.node("AveragePool", {"up"}, {"y"}, "avg");
  setAttribute(avg, "kernel_shape", std::vector<int64_t>{3, 3});
  setAttribute(avg, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("y", {1, 2 * C, 16, 16});
  return b.bytes();
}

std::string torchModel(const std::string& name) {
  return std::string(VKCNN_TORCH_MODELS) + "/" + name;
}

}  // namespace

TEST_CASE(
    "compiled: Image kernels (conv, batch norm, SE, residual, concat, resize) bit-identical") {
  const std::vector<uint8_t> onnx = imageKernelsModel();
  checkIdentical("image_kernels", onnx);
}

TEST_CASE("compiled: the PyTorch exports and Fashion-MNIST are bit-identical from .vkcnn") {
  for (const char* name : {"convnext13", "convnext17", "detection", "nhwc"})
    checkIdentical(name, readFile(torchModel(std::string(name) + ".onnx")));
  OnnxImportOptions crnn;
  crnn.inputShapes["x"] = {1, 3, 32, 64};
  checkIdentical("crnn", readFile(torchModel("crnn.onnx")), crnn);
  checkIdentical("fashion_mnist", readFile(VKCNN_FASHION_MNIST_ONNX));
}

TEST_CASE("compiled: a Session loads a .vkcnn by its magic, whatever its name") {
  const std::vector<uint8_t> onnx = readFile(VKCNN_FASHION_MNIST_ONNX);
  OnnxImportOptions o;
  o.channelFormat = ChannelFormat::float32;
  const std::vector<uint8_t> file = compile(onnx, o);
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "vkcnn_test_compiled.onnx";  // the wrong name
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
  }
  SessionOptions options;
  options.precision = ChannelFormat::float32;
  Session fromOnnx = Session::fromMemory(context(), onnx, options);
  Session fromFile(context(), path.string(), options);
  Session fromBytes = Session::fromMemory(context(), file, options);
  REQUIRE(fromFile.inputs().size() == 1);
  CHECK((fromFile.precision() == ChannelFormat::float32));
  CHECK(fromFile.inputs()[0].shape == fromOnnx.inputs()[0].shape);
  std::map<std::string, HostTensor> in;
  in[fromOnnx.inputs()[0].name] =
      HostTensor{fromOnnx.inputs()[0].shape, randomFloats(fromOnnx.inputs()[0].elementCount, 3)};
  const auto want = fromOnnx.run(in);
  for (Session* s : {&fromFile, &fromBytes}) {
    const auto got = s->run(in);
    REQUIRE(got.size() == want.size());
    for (const auto& [name, tensor] : want) {
      CAPTURE(name);
      REQUIRE(got.at(name).data.size() == tensor.data.size());
      CHECK(std::memcmp(got.at(name).data.data(), tensor.data.data(),
                        tensor.data.size() * sizeof(float)) == 0);
    }
  }
  // A batch other than the compiled one is refused, naming it.
  SessionOptions batch = options;
  batch.batch = 4;
  CHECK_THROWS_WITH_AS(Session(context(), path.string(), batch),
                       doctest::Contains("batch is fixed at 1"), Error);
  std::filesystem::remove(path);
}
