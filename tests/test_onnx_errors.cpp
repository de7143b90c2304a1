// ONNX import errors: unsupported operators name the node, the operator and the opset; malformed,
// truncated, corrupted or hostile files are Error(invalidModel) (never a crash, another exception
// or an unbounded allocation). Models are built with the onnx protobuf API, then broken. Longer
// fuzzing: VKCNN_ONNX_FUZZ_ITERATIONS and VKCNN_ONNX_FUZZ_SEED.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include "onnx_model_builder.h"
#include "test_support.h"
#include "vkcnn/onnx.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// A small valid model touching initializers, a Constant, a folded shape subgraph, a convolution,
// batch normalisation, pooling and a fully-connected layer.
OnnxModelBuilder validModel() {
  OnnxModelBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  b.initializer("W", {4, 3, 3, 3}, randomFloats(4 * 3 * 9, 1));
  b.initializer("B", {4}, randomFloats(4, 2));
  for (const char* name : {"gamma", "beta", "mean"}) b.initializer(name, {4}, randomFloats(4, 3));
  b.initializer("var", {4}, randomFloats(4, 4, 0.5f, 1.5f));
  b.initializer("fc", {5, 64}, randomFloats(5 * 64, 5));
  auto& c = b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  setAttribute(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, "bn");
  b.node("Relu", {"bn"}, {"r"}, "relu");
  auto& p = b.node("MaxPool", {"r"}, {"p"}, "pool");
  setAttribute(p, "kernel_shape", std::vector<int64_t>{2, 2});
  setAttribute(p, "strides", std::vector<int64_t>{2, 2});
  b.node("Shape", {"p"}, {"shape"}, "shape");
  auto& k = b.node("Constant", {}, {"zero"}, "zero");
  setTensorAttribute(k, "value", {1}, std::vector<int64_t>{0});
  auto& g = b.node("Gather", {"shape", "zero"}, {"n"}, "gather");
  setAttribute(g, "axis", int64_t(0));
  auto& m1 = b.node("Constant", {}, {"minus1"}, "minus1");
  setTensorAttribute(m1, "value", {1}, std::vector<int64_t>{-1});
  auto& cat = b.node("Concat", {"n", "minus1"}, {"target"}, "cat");
  setAttribute(cat, "axis", int64_t(0));
  b.node("Reshape", {"p", "target"}, {"f"}, "flatten");
  auto& gemm = b.node("Gemm", {"f", "fc"}, {"y"}, "gemm");
  setAttribute(gemm, "transB", int64_t(1));
  b.output("y", {1, 5});
  return b;
}

OnnxImport importBytes(const std::vector<uint8_t>& bytes) {
  OnnxImportOptions options;
  options.channelFormat = ChannelFormat::float32;
  return importOnnxModelFromMemory(context(), bytes, options);
}

// Imports `bytes`, which may be anything: returns the error code, or -1 if the import worked.
// Any exception other than vkcnn::Error fails the test.
int tryImport(const std::vector<uint8_t>& bytes) {
  // To study a crash: VKCNN_ONNX_FUZZ_DUMP=<file> keeps the model being imported.
  if (const char* dump = std::getenv("VKCNN_ONNX_FUZZ_DUMP")) {
    std::ofstream f(dump, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  try {
    importBytes(bytes);
    return -1;
  } catch (const Error& e) {
    return int(e.code());
  } catch (const std::exception& e) {
    FAIL_CHECK("not a vkcnn::Error: " << e.what());
    return -2;
  }
}

std::vector<uint8_t> bytesOf(const onnx::ModelProto& m) {
  const std::string s = m.SerializeAsString();
  return std::vector<uint8_t>(s.begin(), s.end());
}

}  // namespace

TEST_CASE("onnx errors: the valid model used below imports and runs") {
  OnnxImport imported = importBytes(validModel().bytes());
  CHECK(imported.info.outputs[0].dims == std::vector<int64_t>{1, 5});
  imported.graph.compile();
  CHECK(imported.graph.statistics().kernels == 3);  // conv + bn + relu, pool, fully connected
}

TEST_CASE("onnx errors: unsupported operators name the node, the operator and the opset") {
  OnnxModelBuilder b(13);
  b.input("x", {1, 2, 3, 3});
  b.node("Hardmax", {"x"}, {"y"}, "hardmax1");
  b.output("y", {1, 2, 3, 3});
  VKCNN_CHECK_ERROR(importBytes(b.bytes()), ErrorCode::unsupported,
                    "ONNX node 'hardmax1' (Hardmax, opset 13): operator Hardmax is not supported");
  // A custom domain's operator.
  OnnxModelBuilder c(13);
  auto* o = c.model.add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  c.input("x", {1, 2, 3, 3});
  c.node("Fancy", {"x"}, {"y"}, "fancy").set_domain("com.example");
  c.output("y", {1, 2, 3, 3});
  VKCNN_CHECK_ERROR(importBytes(c.bytes()), ErrorCode::unsupported,
                    "node 'fancy' (Fancy, opset 13): operators of domain 'com.example'");
  // A supported operator in a form the kernels lack.
  OnnxModelBuilder d(17);
  d.input("x", {2, 2, 3, 3});
  auto& t = d.node("LayerNormalization", {"x", "x"}, {"y"}, "ln");
  setAttribute(t, "stash_type", int64_t(0));
  d.output("y", {2, 2, 3, 3});
  VKCNN_CHECK_ERROR(importBytes(d.bytes()), ErrorCode::unsupported,
                    "'ln' (LayerNormalization, opset 17): LayerNormalization with stash_type != 1");
  // Newer opsets than the importer (and onnx 1.12) know.
  OnnxModelBuilder e(18);
  e.input("x", {1, 2, 3, 3});
  e.node("Relu", {"x"}, {"y"});
  e.output("y", {1, 2, 3, 3});
  VKCNN_CHECK_ERROR(importBytes(e.bytes()), ErrorCode::unsupported, "opset 18 is newer");
  // Non-float image inputs.
  OnnxModelBuilder f(13);
  f.input("x", {1, 2}, onnx::TensorProto::INT32);
  f.node("Identity", {"x"}, {"y"});
  f.model.mutable_graph()->add_output()->CopyFrom(f.model.graph().input(0));
  f.model.mutable_graph()->mutable_output(0)->set_name("y");
  VKCNN_CHECK_ERROR(importBytes(f.bytes()), ErrorCode::unsupported, "input 'x' is int32");
  // Every unsupported feature says "not supported", whatever its own words (issue 44).
  OnnxModelBuilder g(13);
  g.input("x", {1, 2, 4, 4});
  auto& pool = g.node("MaxPool", {"x"}, {"y", "indices"}, "pool");
  setAttribute(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  g.output("y", {1, 2, 2, 2});
  g.output("indices", {1, 2, 2, 2}, onnx::TensorProto::INT64);
  VKCNN_CHECK_ERROR(importBytes(g.bytes()), ErrorCode::unsupported,
                    "the MaxPool Indices output: not supported");
}

TEST_CASE("onnx errors: Pow with an integer exponent past int64 imports (fuzz_onnx found UB)") {
  // The exponent was printed through int64_t: undefined for 1e30 or infinity. Integral exponents
  // now run on the Tensor kernel (numpy's pow); the import must stay free of UB (UBSan suite).
  for (const float exponent : {1e30f, std::numeric_limits<float>::infinity()}) {
    OnnxModelBuilder b(13);
    b.input("x", {1, 2, 3, 3});
    b.initializer("e", {}, std::vector<float>{exponent});
    b.node("Pow", {"x", "e"}, {"y"}, "pow");
    b.output("y", {1, 2, 3, 3});
    CHECK_NOTHROW(importBytes(b.bytes()));
  }
}

TEST_CASE("onnx errors: not a model, missing files, truncated files") {
  VKCNN_CHECK_ERROR(importBytes({}), ErrorCode::invalidModel, "not an ONNX model");
  VKCNN_CHECK_ERROR(importBytes({0xff, 0xff, 0xff, 0xff, 0x0f}), ErrorCode::invalidModel,
                    "not an ONNX model");
  VKCNN_CHECK_ERROR(importOnnx(context(), "/nonexistent/model.onnx"), ErrorCode::io,
                    "cannot open ONNX model '/nonexistent/model.onnx'");
  VKCNN_CHECK_ERROR(inspectOnnx("/nonexistent/model.onnx"), ErrorCode::io, "cannot open");

  const std::vector<uint8_t> bytes = validModel().bytes();
  // A file on disk, cut in half: the path is in the message.
  const std::string path = writeTemporaryDatFile({}, "truncated.onnx");
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size() / 2));
  }
  VKCNN_CHECK_ERROR(importOnnx(context(), path), ErrorCode::invalidModel, path);
  std::remove(path.c_str());

  // Every prefix (in steps) is a clean invalidModel error or, rarely, a valid smaller model.
  int errors = 0;
  const size_t step = std::max<size_t>(1, bytes.size() / 400);
  for (size_t cut = 0; cut < bytes.size(); cut += step) {
    CAPTURE(cut);
    const int code = tryImport(std::vector<uint8_t>(bytes.begin(), bytes.begin() + cut));
    CHECK((code == -1 || code == int(ErrorCode::invalidModel)));
    errors += code == int(ErrorCode::invalidModel);
  }
  CHECK(errors > 0);
}

OnnxModelBuilder richModel();

TEST_CASE("onnx errors: random corruption gives vkcnn errors, never crashes") {
  int iterations = 300;
  if (const char* n = std::getenv("VKCNN_ONNX_FUZZ_ITERATIONS")) iterations = std::atoi(n);
  uint32_t seed = 1234;
  if (const char* n = std::getenv("VKCNN_ONNX_FUZZ_SEED")) seed = uint32_t(std::atoi(n));
  std::mt19937 rng(seed);
  std::map<int, int> codes;
  const std::vector<uint8_t> models[] = {validModel().bytes(), richModel().bytes()};
  for (int iteration = 0; iteration < 2 * iterations; ++iteration) {
    const std::vector<uint8_t>& bytes = models[iteration % 2];
    std::vector<uint8_t> broken = bytes;
    const int flips = 1 + int(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      const size_t at = rng() % broken.size();
      switch (rng() % 3) {
        case 0:
          broken[at] ^= uint8_t(1u << (rng() % 8));
          break;
        case 1:
          broken[at] = uint8_t(rng());
          break;
        default:
          broken[at] = 0xff;  // large varints: sizes and dims
      }
    }
    CAPTURE(iteration);
    const int code = tryImport(broken);
    CHECK(code != -2);
    codes[code]++;
  }
  // Accepted outcomes only: success, or a model-level error.
  for (const auto& [code, count] : codes) {
    CAPTURE(code);
    CHECK((code == -1 || code == int(ErrorCode::invalidModel) ||
           code == int(ErrorCode::unsupported) || code == int(ErrorCode::invalidArgument) ||
           code == int(ErrorCode::limitExceeded)));
  }
  CHECK(codes[int(ErrorCode::invalidModel)] > 0);
  for (const auto& [code, count] : codes)
    MESSAGE("corruption outcome " << std::string(code < 0 ? "imported" : toString(ErrorCode(code)))
                                  << ": " << count);
}

// Many operators and both parameter forms (attributes, constant inputs), for the mutations below.
OnnxModelBuilder richModel() {
  OnnxModelBuilder b(13);
  b.input("x", {1, 8, 6, 6});
  b.initializer("W", {8, 4, 3, 3}, randomFloats(8 * 4 * 9, 30));
  b.initializer("Wt", {8, 2, 2, 2}, randomFloats(8 * 2 * 4, 31));
  b.initializerInt64("starts", {2}, {1, 0});
  b.initializerInt64("ends", {2}, {7, 5});
  b.initializerInt64("axes", {2}, {1, 3});
  b.initializerInt64("steps", {2}, {1, 1});
  b.initializerInt64("split", {2}, {2, 4});
  b.initializerInt64("shuffle", {5}, {1, 2, 3, 6, 5});
  b.initializerInt64("back", {4}, {1, 6, 6, 5});
  b.initializerInt64("flat", {2}, {0, -1});
  b.initializerInt64("sq", {2}, {2, 3});
  b.initializer("k", {6, 1, 1}, randomFloats(6, 32));
  b.initializer("fc", {3, 180}, randomFloats(3 * 180, 33));
  b.initializer("lo", {}, {-1.f});
  b.initializer("scale", {6}, randomFloats(6, 34));
  b.initializer("bias", {6}, randomFloats(6, 35));
  auto& c = b.node("Conv", {"x", "W"}, {"c"}, "conv");
  setAttribute(c, "group", int64_t(2));
  setAttribute(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  setAttribute(c, "strides", std::vector<int64_t>{1, 1});
  setAttribute(c, "dilations", std::vector<int64_t>{1, 1});
  setAttribute(c, "kernel_shape", std::vector<int64_t>{3, 3});
  b.node("Slice", {"c", "starts", "ends", "axes", "steps"}, {"s"}, "slice");  // [1, 6, 6, 5]
  auto& sp = b.node("Split", {"s", "split"}, {"a", "bb"}, "split");
  setAttribute(sp, "axis", int64_t(1));
  auto& cat = b.node("Concat", {"bb", "a"}, {"cat"}, "concat");
  setAttribute(cat, "axis", int64_t(1));
  b.node("Reshape", {"cat", "shuffle"}, {"r1"}, "r1");
  auto& t = b.node("Transpose", {"r1"}, {"t"}, "transpose");
  setAttribute(t, "perm", std::vector<int64_t>{0, 2, 1, 3, 4});
  b.node("Reshape", {"t", "back"}, {"r2"}, "r2");
  b.node("Mul", {"r2", "k"}, {"m"}, "mul");
  b.node("Clip", {"m", "lo"}, {"clip"}, "clip");
  auto& lrn = b.node("LRN", {"clip"}, {"lrn"}, "lrn");
  setAttribute(lrn, "size", int64_t(3));
  auto& in = b.node("InstanceNormalization", {"lrn", "scale", "bias"}, {"in"}, "instnorm");
  setAttribute(in, "epsilon", 1e-5f);
  auto& ap = b.node("AveragePool", {"in"}, {"ap"}, "avgpool");
  setAttribute(ap, "kernel_shape", std::vector<int64_t>{2, 2});
  setAttribute(ap, "strides", std::vector<int64_t>{1, 1});
  setAttribute(ap, "pads", std::vector<int64_t>{0, 0, 1, 1});
  auto& sm = b.node("Softmax", {"ap"}, {"sm"}, "softmax");
  setAttribute(sm, "axis", int64_t(1));
  auto& rm = b.node("ReduceMean", {"sm"}, {"rm"}, "reducemean");
  setAttribute(rm, "axes", std::vector<int64_t>{2, 3});
  setAttribute(rm, "keepdims", int64_t(1));
  b.node("Squeeze", {"rm", "sq"}, {"sqz"}, "squeeze");
  b.node("Unsqueeze", {"sqz", "sq"}, {"usq"}, "unsqueeze");
  b.node("Reshape", {"sm", "flat"}, {"f"}, "flatten");
  auto& g = b.node("Gemm", {"f", "fc"}, {"y"}, "gemm");
  setAttribute(g, "transB", int64_t(1));
  auto& ct = b.node("ConvTranspose", {"x", "Wt"}, {"ct"}, "deconv");
  setAttribute(ct, "strides", std::vector<int64_t>{2, 2});
  setAttribute(ct, "group", int64_t(2));
  auto& d2s = b.node("DepthToSpace", {"ct"}, {"d2s"}, "d2s");
  setAttribute(d2s, "blocksize", int64_t(2));
  setAttribute(d2s, "mode", std::string("CRD"));
  b.output("y", {1, 3});
  b.output("usq", {1, 6, 1, 1});
  b.output("d2s", {1, 1, 24, 24});
  return b;
}

TEST_CASE("onnx errors: extreme values in attributes, dims and shapes give vkcnn errors") {
  // Structured corruption: integers somewhere (attributes, tensor dims, int64 constants, input
  // dims) become extreme values. The outcome must be an import or a vkcnn::Error. More
  // iterations: VKCNN_ONNX_FUZZ_ITERATIONS.
  const int64_t extremes[] = {0,
                              -1,
                              -2,
                              1,
                              2,
                              3,
                              7,
                              65535,
                              2147483647,
                              2147483648,
                              int64_t(1) << 40,
                              std::numeric_limits<int64_t>::max(),
                              std::numeric_limits<int64_t>::min()};
  int iterations = 800;
  if (const char* n = std::getenv("VKCNN_ONNX_FUZZ_ITERATIONS")) iterations = std::atoi(n);
  for (const OnnxModelBuilder& base : {validModel(), richModel()}) {
    try {
      importBytes(base.bytes());
    } catch (const Error& e) {
      FAIL_CHECK("the base model does not import: " << std::string(e.what()));
    }
    uint32_t seed = 99;
    if (const char* n = std::getenv("VKCNN_ONNX_FUZZ_SEED")) seed = uint32_t(std::atoi(n));
    std::mt19937 rng(seed);
    std::map<int, int> codes;
    for (int iteration = 0; iteration < iterations; ++iteration) {
      onnx::ModelProto m = base.model;
      auto* g = m.mutable_graph();
      std::vector<google::protobuf::RepeatedField<int64_t>*> lists;
      std::vector<onnx::AttributeProto*> ints;
      for (auto& n : *g->mutable_node())
        for (auto& a : *n.mutable_attribute()) {
          if (a.type() == onnx::AttributeProto::INT) ints.push_back(&a);
          if (a.type() == onnx::AttributeProto::INTS) lists.push_back(a.mutable_ints());
          if (a.has_t()) lists.push_back(a.mutable_t()->mutable_int64_data());
          if (a.has_t()) lists.push_back(a.mutable_t()->mutable_dims());
        }
      for (auto& t : *g->mutable_initializer()) {
        lists.push_back(t.mutable_dims());
        if (t.int64_data_size()) lists.push_back(t.mutable_int64_data());
      }
      const int mutations = 1 + int(rng() % 3);
      for (int k = 0; k < mutations; ++k) {
        const int64_t value = extremes[rng() % std::size(extremes)];
        const size_t pick = rng() % (lists.size() + 2);
        if (pick < lists.size()) {
          if (lists[pick]->size()) lists[pick]->Set(int(rng() % lists[pick]->size()), value);
        } else if (pick == lists.size()) {
          auto* shape = g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
          shape->mutable_dim(int(rng() % shape->dim_size()))->set_dim_value(value);
        } else if (!ints.empty()) {
          ints[rng() % ints.size()]->set_i(value);
        }
      }
      CAPTURE(iteration);
      const int code = tryImport(bytesOf(m));
      codes[code]++;
    }
    for (const auto& [code, count] : codes) {
      CAPTURE(code);
      CHECK((code == -1 || code == int(ErrorCode::invalidModel) ||
             code == int(ErrorCode::unsupported) || code == int(ErrorCode::invalidArgument) ||
             code == int(ErrorCode::limitExceeded)));
      MESSAGE("extreme value outcome "
              << std::string(code < 0 ? "imported" : toString(ErrorCode(code))) << ": " << count);
    }
  }
}

TEST_CASE("onnx errors: tensors whose data does not match their declared size") {
  auto withWeights = [](auto&& edit) {
    OnnxModelBuilder b = validModel();
    onnx::TensorProto& w = *b.model.mutable_graph()->mutable_initializer(0);
    edit(w);
    return b.bytes();
  };
  VKCNN_CHECK_ERROR(importBytes(withWeights([](onnx::TensorProto& w) {
                      w.mutable_raw_data()->resize(w.raw_data().size() - 4);
                    })),
                    ErrorCode::invalidModel, "needs 432 bytes of raw_data, 428 given");
  VKCNN_CHECK_ERROR(importBytes(withWeights([](onnx::TensorProto& w) {
                      w.clear_raw_data();
                      for (int k = 0; k < 100; ++k) w.add_float_data(1.f);
                    })),
                    ErrorCode::invalidModel, "declares 108 elements but float_data holds 100");
  VKCNN_CHECK_ERROR(importBytes(withWeights([](onnx::TensorProto& w) { w.clear_raw_data(); })),
                    ErrorCode::invalidModel, "declares 108 elements but the tensor holds no data");
  VKCNN_CHECK_ERROR(importBytes(withWeights([](onnx::TensorProto& w) {
                      w.add_float_data(1.f);  // and raw_data too
                    })),
                    ErrorCode::invalidModel, "holds data in both float_data and raw_data");
  VKCNN_CHECK_ERROR(importBytes(withWeights([](onnx::TensorProto& w) { w.set_data_type(99); })),
                    ErrorCode::invalidModel, "element type 99 is not a known ONNX type");
  // Huge declared sizes: rejected from the dims alone, before any allocation.
  VKCNN_CHECK_ERROR(
      importBytes(withWeights([](onnx::TensorProto& w) { w.set_dims(0, int64_t(1) << 40); })),
      ErrorCode::invalidModel, "exceeds the limit of 2147483647 elements");
  VKCNN_CHECK_ERROR(importBytes(withWeights([](onnx::TensorProto& w) {
                      w.set_dims(0, int64_t(1) << 20);
                      w.set_dims(1, int64_t(1) << 20);
                    })),
                    ErrorCode::invalidModel, "has more than 2147483647 elements");
  VKCNN_CHECK_ERROR(importBytes(withWeights([](onnx::TensorProto& w) { w.set_dims(2, -3); })),
                    ErrorCode::invalidModel, "dimension -3 of shape [4, 3, -3, 3] is negative");
  // Products that overflow int64 on the way.
  VKCNN_CHECK_ERROR(importBytes(withWeights([](onnx::TensorProto& w) {
                      for (int k = 0; k < 4; ++k) w.set_dims(k, 2147483647);
                    })),
                    ErrorCode::invalidModel, "more than 2147483647 elements");
  // External data.
  VKCNN_CHECK_ERROR(importBytes(withWeights([](onnx::TensorProto& w) {
                      w.clear_raw_data();
                      w.set_data_location(onnx::TensorProto::EXTERNAL);
                      auto* e = w.add_external_data();
                      e->set_key("location");
                      e->set_value("/etc/passwd");
                    })),
                    ErrorCode::invalidModel, "external data");
  // A Constant node's tensor is checked the same way.
  OnnxModelBuilder c = validModel();
  for (auto& node : *c.model.mutable_graph()->mutable_node())
    if (node.op_type() == "Constant") node.mutable_attribute(0)->mutable_t()->add_dims(7);
  VKCNN_CHECK_ERROR(importBytes(c.bytes()), ErrorCode::invalidModel,
                    "declares 7 elements but int64_data holds 1");
}

TEST_CASE("onnx errors: absurd dimensions, cycles, dangling names, bad attributes") {
  // An input of absurd size.
  OnnxModelBuilder a = validModel();
  a.model.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(2)
      ->set_dim_value(int64_t(1) << 45);
  VKCNN_CHECK_ERROR(importBytes(a.bytes()), ErrorCode::invalidModel, "exceeds the limit");
  // An input whose size alone is too many elements.
  OnnxModelBuilder big(13);
  big.input("x", {1, 65536, 65536, 65536});
  big.node("Relu", {"x"}, {"y"});
  big.output("y", 4);
  VKCNN_CHECK_ERROR(importBytes(big.bytes()), ErrorCode::invalidModel, "more than 2147483647");
  // A cycle: two nodes reading each other's outputs (more in test_onnx_sort.cpp).
  OnnxModelBuilder cyc(13);
  cyc.input("x", {1, 2, 3, 3});
  cyc.node("Add", {"x", "b"}, {"a"}, "first");
  cyc.node("Relu", {"a"}, {"b"}, "second");
  cyc.output("b", {1, 2, 3, 3});
  VKCNN_CHECK_ERROR(importBytes(cyc.bytes()), ErrorCode::invalidModel,
                    "'second' (Relu) -> 'first' (Add) -> 'second' (Relu)");
  // A node reading its own output.
  OnnxModelBuilder self(13);
  self.input("x", {1, 2, 3, 3});
  self.node("Relu", {"y"}, {"y"}, "self");
  self.output("y", {1, 2, 3, 3});
  VKCNN_CHECK_ERROR(importBytes(self.bytes()), ErrorCode::invalidModel,
                    "'self' (Relu) -> 'self' (Relu)");
  // A graph output that names the input with another shape (fuzzing found onnx's inference
  // crashing on it).
  OnnxModelBuilder renamed = validModel();
  renamed.model.mutable_graph()->mutable_output(0)->set_name("x");
  VKCNN_CHECK_ERROR(importBytes(renamed.bytes()), ErrorCode::invalidModel,
                    "value 'x': the model declares [1, 5] but the model computes [1, 3, 8, 8]");
  // A name nothing produces.
  OnnxModelBuilder dangling(13);
  dangling.input("x", {1, 2, 3, 3});
  dangling.node("Relu", {"ghost"}, {"y"});
  dangling.output("y", {1, 2, 3, 3});
  VKCNN_CHECK_ERROR(importBytes(dangling.bytes()), ErrorCode::invalidModel, "ghost");
  // Attributes of the wrong type.
  OnnxModelBuilder attr = validModel();
  auto* strides = attr.model.mutable_graph()->mutable_node(0)->add_attribute();
  strides->set_name("strides");
  strides->set_type(onnx::AttributeProto::FLOAT);
  strides->set_f(2.f);
  VKCNN_CHECK_ERROR(importBytes(attr.bytes()), ErrorCode::invalidModel, "strides");
  // Weights that do not fit the input's channels.
  OnnxModelBuilder w(13);
  w.input("x", {1, 2, 5, 5});
  w.initializer("W", {4, 3, 3, 3}, randomFloats(108, 9));
  w.node("Conv", {"x", "W"}, {"y"}, "conv");
  w.output("y", 4);
  VKCNN_CHECK_ERROR(importBytes(w.bytes()), ErrorCode::invalidModel, "");
  // No graph, and no opset for the default domain.
  onnx::ModelProto empty;
  empty.set_ir_version(8);
  VKCNN_CHECK_ERROR(importBytes(bytesOf(empty)), ErrorCode::invalidModel, "");
}

TEST_CASE("onnx errors: constants the evaluator would make too large, and bad indices") {
  // ConstantOfShape / Expand / Tile / Range results are bounded (the file does not bound them).
  auto shapeModel = [](const std::string& op, const std::vector<int64_t>& shape) {
    OnnxModelBuilder b(13);
    b.input("x", {1, 2, 3, 3});
    b.initializerInt64("shape", {int64_t(shape.size())}, shape);
    if (op == "ConstantOfShape") {
      b.node("ConstantOfShape", {"shape"}, {"big"}, "fill");
    } else if (op == "Expand") {
      b.initializer("one", {1}, {1.f});
      b.node("Expand", {"one", "shape"}, {"big"}, "expand");
    } else {
      b.initializer("one", {1}, {1.f});
      b.node("Tile", {"one", "shape"}, {"big"}, "tile");
    }
    b.node("Shape", {"big"}, {"s"});
    b.node("Relu", {"x"}, {"y"});
    b.output("y", 4);
    return b.bytes();
  };
  VKCNN_CHECK_ERROR(importBytes(shapeModel("ConstantOfShape", {8192, 8192})),
                    ErrorCode::invalidModel, "beyond the importer's limit");
  VKCNN_CHECK_ERROR(importBytes(shapeModel("ConstantOfShape", {1 << 20, 1 << 20})),
                    ErrorCode::invalidModel, "more than 2147483647 elements");
  VKCNN_CHECK_ERROR(importBytes(shapeModel("Expand", {4096, 8192})), ErrorCode::invalidModel,
                    "beyond the importer's limit");
  VKCNN_CHECK_ERROR(importBytes(shapeModel("Tile", {int64_t(1) << 40})), ErrorCode::invalidModel,
                    "");
  OnnxModelBuilder r(13);
  r.input("x", {1, 2, 3, 3});
  r.initializer("start", {}, {0.f});
  r.initializer("limit", {}, {1e12f});
  r.initializer("delta", {}, {1.f});
  r.node("Range", {"start", "limit", "delta"}, {"big"}, "range");
  r.node("Shape", {"big"}, {"s"});
  r.node("Relu", {"x"}, {"y"});
  r.output("y", 4);
  VKCNN_CHECK_ERROR(importBytes(r.bytes()), ErrorCode::invalidModel, "exceed the importer's limit");

  // One constant concatenated with itself many times.
  OnnxModelBuilder cat(13);
  cat.input("x", {1, 2, 3, 3});
  cat.initializer("block", {1024, 1024}, std::vector<float>(1024 * 1024, 1.f));
  auto& many = cat.node("Concat", std::vector<std::string>(64, "block"), {"big"}, "repeat");
  setAttribute(many, "axis", int64_t(0));
  cat.node("Shape", {"big"}, {"s"});
  cat.node("Relu", {"x"}, {"y"});
  cat.output("y", 4);
  VKCNN_CHECK_ERROR(importBytes(cat.bytes()), ErrorCode::invalidModel,
                    "node 'repeat' (Concat, opset 13): Concat: the computed constant");
  // Many folds, each within its own bound: their sum is bounded too.
  OnnxModelBuilder chain(13);
  chain.input("x", {1, 2, 3, 3});
  chain.initializerInt64("shape", {1}, {int64_t(1) << 23});
  for (int k = 0; k < 12; ++k) {
    chain.node("ConstantOfShape", {"shape"}, {"c" + std::to_string(k)});
    chain.node("Shape", {"c" + std::to_string(k)}, {"s" + std::to_string(k)});
  }
  chain.node("Relu", {"x"}, {"y"});
  chain.output("y", 4);
  VKCNN_CHECK_ERROR(importBytes(chain.bytes()), ErrorCode::invalidModel,
                    "the constants computed at import exceed");

  // Gather with an index out of range.
  OnnxModelBuilder g(13);
  g.input("x", {1, 2, 3, 3});
  g.initializerInt64("index", {}, {7});
  g.node("Shape", {"x"}, {"shape"});
  g.node("Gather", {"shape", "index"}, {"n"}, "gather");
  g.node("Relu", {"x"}, {"y"});
  g.output("y", 4);
  VKCNN_CHECK_ERROR(importBytes(g.bytes()), ErrorCode::invalidModel,
                    "node 'gather' (Gather, opset 13): Gather: index 7 is out of range");
  // Gather of image data with an index past int64's double range (fuzz_onnx found UB).
  OnnxModelBuilder gi(13);
  gi.input("x", {1, 2, 3, 3});
  gi.initializerInt64("index", {1}, {INT64_MAX});
  setAttribute(gi.node("Gather", {"x", "index"}, {"y"}, "gatherx"), "axis", int64_t(2));
  gi.output("y", 4);
  VKCNN_CHECK_ERROR(importBytes(gi.bytes()), ErrorCode::invalidModel,
                    "node 'gatherx' (Gather, opset 13): Gather index 9223372036854775807 is "
                    "outside an axis of 3");
  // Reshape to a different element count; Split sizes that do not add up.
  OnnxModelBuilder rs(13);
  rs.input("x", {1, 2, 3, 3});
  rs.initializerInt64("shape", {2}, {1, 17});
  rs.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  rs.output("y", 2);
  VKCNN_CHECK_ERROR(importBytes(rs.bytes()), ErrorCode::invalidModel, "");
  OnnxModelBuilder sp(13);
  sp.input("x", {1, 6, 3, 3});
  sp.initializerInt64("split", {2}, {2, 5});
  auto& s = sp.node("Split", {"x", "split"}, {"a", "b"}, "split");
  setAttribute(s, "axis", int64_t(1));
  sp.output("a", 4);
  VKCNN_CHECK_ERROR(importBytes(sp.bytes()), ErrorCode::invalidModel, "");
}

TEST_CASE("onnx errors: hostile shapes on the Tensor path are clear errors") {
  // Rank 9: a Reshape (a view) is fine until a Tensor kernel would hold it.
  OnnxModelBuilder r9(13);
  r9.input("x", {1, 2, 3, 4});
  r9.initializerInt64("shape", {9}, {1, 1, 1, 1, 1, 1, 2, 3, 4});
  r9.node("Reshape", {"x", "shape"}, {"r"});
  auto& t9 = r9.node("Transpose", {"r"}, {"y"}, "transpose9");
  setAttribute(t9, "perm", std::vector<int64_t>{8, 7, 6, 5, 4, 3, 2, 1, 0});
  r9.output("y", 9);
  VKCNN_CHECK_ERROR(importBytes(r9.bytes()), ErrorCode::unsupported,
                    "node 'transpose9' (Transpose, opset 13): the tensor [1, 1, 1, 1, 1, 1, 2, "
                    "3, 4] has rank 9 (Tensors have rank 1 to 8)");
  // A rank-9 input is refused at once.
  OnnxModelBuilder i9(13);
  i9.input("x", {1, 1, 1, 1, 1, 1, 2, 3, 4});
  i9.node("Relu", {"x"}, {"y"});
  i9.output("y", 9);
  VKCNN_CHECK_ERROR(importBytes(i9.bytes()), ErrorCode::unsupported, "input 'x' has rank 9");
  // A zero-size axis: Expand to an empty shape.
  OnnxModelBuilder z(13);
  z.input("x", {1, 2, 3, 4});
  z.initializerInt64("shape", {4}, {0, 2, 3, 4});
  z.node("Expand", {"x", "shape"}, {"y"}, "expand0");
  z.output("y", 4);
  VKCNN_CHECK_ERROR(importBytes(z.bytes()), ErrorCode::unsupported,
                    "node 'expand0' (Expand, opset 13): an empty constant [0, 1, 1, 1]");
  // An element count past what a Tensor addresses (and past int64 on the way).
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{65536, 65536, 3, 4}, std::vector<int64_t>{1 << 30, 1 << 30, 3, 4},
        std::vector<int64_t>{int64_t(1) << 40, int64_t(1) << 40, 3, 4}}) {
    CAPTURE(shape[0]);
    OnnxModelBuilder big(13);
    big.input("x", {1, 1, 3, 4});
    big.initializerInt64("shape", {4}, shape);
    big.node("Expand", {"x", "shape"}, {"y"}, "expandbig");
    big.output("y", 4);
    try {
      importBytes(big.bytes());
      FAIL("an Expand to " << shape[0] << "x" << shape[1] << "x3x4 imported");
    } catch (const Error& e) {
      INFO(e.what());
      CHECK((e.code() == ErrorCode::invalidModel || e.code() == ErrorCode::limitExceeded));
      CHECK(std::string(e.what()).find("node 'expandbig' (Expand, opset 13)") != std::string::npos);
    }
  }
  // A perm that is not a permutation.
  for (const std::vector<int64_t>& perm :
       {std::vector<int64_t>{0, 0, 1, 2}, std::vector<int64_t>{0, 1, 2, 4},
        std::vector<int64_t>{0, 1, 2}, std::vector<int64_t>{0, -1, 2, 3}}) {
    OnnxModelBuilder p(13);
    p.input("x", {1, 2, 3, 4});
    setAttribute(p.node("Transpose", {"x"}, {"y"}, "badperm"), "perm", perm);
    p.output("y", 4);
    VKCNN_CHECK_ERROR(importBytes(p.bytes()), ErrorCode::invalidModel,
                      "node 'badperm' (Transpose, opset 13): Transpose perm");
  }
}

namespace {

// Weights of at least 1 KiB, which the model scanner takes out of the protobuf message and the
// importer reads from the caller's bytes (onnx/raw_data.h); `asFloatData`: the same values in
// float_data, which protobuf keeps (the reference).
OnnxModelBuilder largeWeights(bool asFloatData) {
  OnnxModelBuilder b(13);
  b.input("x", {1, 16, 5, 5});
  b.initializer("W", {24, 16, 3, 3}, randomFloats(24 * 16 * 9, 41));
  b.initializer("B", {24}, randomFloats(24, 42));
  b.initializerInt64("flat", {2}, {0, -1});
  b.initializer("fc", {7, 600}, randomFloats(7 * 600, 43));
  if (asFloatData)
    for (auto& t : *b.model.mutable_graph()->mutable_initializer()) {
      if (t.data_type() != onnx::TensorProto::FLOAT) continue;
      std::vector<float> v(t.raw_data().size() / 4);
      std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
      t.clear_raw_data();
      for (float f : v) t.add_float_data(f);
    }
  auto& c = b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  setAttribute(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Reshape", {"r", "flat"}, {"f"}, "flatten");
  auto& gemm = b.node("Gemm", {"f", "fc"}, {"y"}, "gemm");
  setAttribute(gemm, "transB", int64_t(1));
  b.output("y", {1, 7});
  return b;
}

void appendVarint(std::string& s, uint64_t v) {
  for (; v >= 0x80; v >>= 7) s.push_back(char(uint8_t(v) | 0x80));
  s.push_back(char(v));
}
// A length-delimited protobuf field.
std::string field(uint32_t number, const std::string& payload) {
  std::string s;
  appendVarint(s, (uint64_t(number) << 3) | 2);
  appendVarint(s, payload.size());
  return s + payload;
}

}  // namespace

TEST_CASE("onnx errors: large weights read from the model's bytes, not protobuf's copy") {
  const std::vector<float> input = randomFloats(16 * 25, 44);
  const std::vector<float> want = runOnnxImport(importBytes(largeWeights(true).bytes()), input);
  REQUIRE(want.size() == 7);
  double norm = 0;
  for (float v : want) norm += double(v) * v;
  CHECK(norm > 0);
  const OnnxModelBuilder raw = largeWeights(false);
  CHECK(runOnnxImport(importBytes(raw.bytes()), input) == want);

  // protobuf's reading of repeated fields: a second ModelProto.graph is merged into the first
  // (its initializers come after the first's) and a tensor's last raw_data is its value. Here the
  // fully-connected weights come in a second graph field, first as zeros, then their values.
  {
    OnnxModelBuilder b = largeWeights(false);
    auto* inits = b.model.mutable_graph()->mutable_initializer();
    const onnx::TensorProto fc = inits->Get(3);
    inits->RemoveLast();
    onnx::TensorProto zeros = fc;
    zeros.set_raw_data(std::string(fc.raw_data().size(), '\0'));
    onnx::TensorProto valuesOnly;
    valuesOnly.set_raw_data(fc.raw_data());
    const std::string tensor = zeros.SerializeAsString() + valuesOnly.SerializeAsString();
    const std::string bytes = b.model.SerializeAsString() + field(7, field(5, tensor));
    CHECK(runOnnxImport(importBytes(std::vector<uint8_t>(bytes.begin(), bytes.end())), input) ==
          want);
  }
  // The sizes are checked against the bytes the scanner found.
  {
    OnnxModelBuilder b = largeWeights(false);
    auto* fc = b.model.mutable_graph()->mutable_initializer(3);
    fc->mutable_raw_data()->resize(fc->raw_data().size() - 4);
    VKCNN_CHECK_ERROR(importBytes(b.bytes()), ErrorCode::invalidModel,
                      "needs 16800 bytes of raw_data, 16796 given");
    fc->add_float_data(1.f);
    VKCNN_CHECK_ERROR(importBytes(b.bytes()), ErrorCode::invalidModel,
                      "holds data in both float_data and raw_data");
  }
  // A file cut inside the weights: protobuf's verdict, and where the scanner found it.
  const std::vector<uint8_t> bytes = raw.bytes();
  const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + bytes.size() - 1000);
  VKCNN_CHECK_ERROR(importBytes(cut), ErrorCode::invalidModel, "truncated or corrupt; at byte ");
  VKCNN_CHECK_ERROR(inspectOnnxFromMemory(cut), ErrorCode::invalidModel, "bytes run past the end");
}

TEST_CASE("onnx errors: weights with one reader are moved, shared ones copied") {
  // 1x1 convolutions and a transposed Gemm take their weights as they are: moved out of the
  // constant when the node is its only reader. Two convolutions sharing one weight tensor (and a
  // Gemm reading the same B twice) must each get all of it: the same outputs as separate copies.
  auto build = [](bool shared) {
    OnnxModelBuilder b(13);
    b.input("x", {1, 16, 3, 3});
    const std::vector<float> w = randomFloats(16 * 16, 51), fc = randomFloats(16 * 16, 52);
    b.initializer("w1", {16, 16, 1, 1}, w);
    if (!shared) b.initializer("w2", {16, 16, 1, 1}, w);
    b.initializer("fc1", {16, 16}, fc);
    if (!shared) b.initializer("fc2", {16, 16}, fc);
    b.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
    b.node("Conv", {"c1", shared ? "w1" : "w2"}, {"c2"}, "conv2");
    b.node("GlobalAveragePool", {"c2"}, {"p"}, "pool");
    b.node("Flatten", {"p"}, {"f"}, "flatten");
    auto& g1 = b.node("Gemm", {"f", "fc1"}, {"g1"}, "gemm1");
    setAttribute(g1, "transB", int64_t(1));
    auto& g2 = b.node("Gemm", {"g1", shared ? "fc1" : "fc2"}, {"y"}, "gemm2");
    setAttribute(g2, "transB", int64_t(1));
    b.output("y", {1, 16});
    return b.bytes();
  };
  const std::vector<float> input = randomFloats(16 * 9, 53);
  const std::vector<float> want = runOnnxImport(importBytes(build(false)), input);
  REQUIRE(want.size() == 16);
  double norm = 0;
  for (float v : want) norm += double(v) * v;
  CHECK(norm > 0);
  CHECK(runOnnxImport(importBytes(build(true)), input) == want);
}

TEST_CASE("onnx errors: a Pad amount beyond int64 (given as a float) is an error, not a cast") {
  // fuzz_onnx found 1.7e38 read as a pad: the conversion to int64 was undefined behaviour.
  OnnxModelBuilder b(13);
  b.input("x", {1, 2, 3, 3});
  b.initializer("pads", {8}, {0, 0, 1.7e38f, 0, 0, 0, 0, 0});
  b.node("Pad", {"x", "pads"}, {"y"}, "pad1");
  b.output("y", {1, 2, 3, 3});
  VKCNN_CHECK_ERROR(
      importBytes(b.bytes()), ErrorCode::invalidModel,
      "ONNX node 'pad1' (Pad, opset 13): Pad value 9223372036854775807 is out of range");
}
