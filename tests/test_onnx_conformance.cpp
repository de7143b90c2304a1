// ONNX conformance: Debian's libonnx-testdata node tests, the pytorch-converted /
// pytorch-operator cases and the "simple" models run through the importer in float32 and are
// compared with each test's reference outputs as the ONNX backend tests compare them (numpy
// allclose, rtol 1e-3, atol 1e-7).
//
// tests/onnx_conformance_passing.txt lists the tests that pass: a listed test that fails is a
// regression (the test case fails); an unlisted test that passes is reported as a hint. Tests out
// of scope (operators the importer does not map, non-float data, layouts an image cannot hold)
// are skipped with a reason. VKCNN_ONNX_CONFORMANCE_WRITE=<file> writes the passing list.
//
// Weights in node tests are graph inputs: the inputs an operator needs as constants (a Conv's W, a
// Reshape's shape, ...) and every non-float input are bound through
// OnnxImportOptions::constantInputs; the others are images.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <cstring>
#include <sstream>

#include "test_support.h"
#include "vkcnn/onnx.h"

using namespace vkcnn;
using namespace vkcnn::test;
namespace fs = std::filesystem;

namespace {

// Debian's libonnx-testdata, or VKCNN_ONNX_TESTDATA (a copy carried to another machine).
fs::path dataRoot() {
  const char* env = std::getenv("VKCNN_ONNX_TESTDATA");
  return env ? fs::path(env) : fs::path("/usr/share/libonnx-testdata/data");
}

std::string readBytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Positions of inputs an operator takes as constants (weights, shapes, axes, pads, ...).
const std::map<std::string, std::set<int>>& constantPositions() {
  static const std::map<std::string, std::set<int>> table = {
      {"Conv", {1, 2}},
      {"ConvTranspose", {1, 2}},
      {"BatchNormalization", {1, 2, 3, 4}},
      {"InstanceNormalization", {1, 2}},
      {"LayerNormalization", {1, 2}},
      {"Gemm", {1, 2}},
      {"MatMul", {1}},
      {"PRelu", {1}},
      {"Clip", {1, 2}},
      {"Reshape", {1}},
      {"Slice", {1, 2, 3, 4}},
      {"Split", {1}},
      {"Squeeze", {1}},
      {"Unsqueeze", {1}},
      {"ReduceSum", {1}},
      {"ReduceMean", {1}},
      {"ReduceMax", {1}},
      {"ReduceMin", {1}},
      {"Pad", {1, 2}},
      {"Resize", {1, 2, 3}},
      {"Upsample", {1}},
      {"Expand", {1}},
      {"Tile", {1}},
      {"Dropout", {1, 2}},
      {"Pow", {1}},
      {"Gather", {1}},
  };
  return table;
}

struct Loaded {
  std::vector<int64_t> dims;
  int32_t type = 0;
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

Loaded loadTensor(const fs::path& p) {
  onnx::TensorProto t;
  const std::string bytes = readBytes(p);
  if (!t.ParseFromString(bytes)) throw std::runtime_error("cannot parse " + p.string());
  Loaded l;
  l.type = t.data_type();
  l.dims.assign(t.dims().begin(), t.dims().end());
  size_t n = 1;
  for (int64_t d : l.dims) n *= size_t(d);
  const std::string& raw = t.raw_data();
  switch (l.type) {
    case onnx::TensorProto::FLOAT:
      l.floats.resize(n);
      if (!raw.empty())
        std::memcpy(l.floats.data(), raw.data(), n * 4);
      else
        std::copy(t.float_data().begin(), t.float_data().end(), l.floats.begin());
      break;
    case onnx::TensorProto::INT64:
      l.ints.resize(n);
      if (!raw.empty())
        std::memcpy(l.ints.data(), raw.data(), n * 8);
      else
        std::copy(t.int64_data().begin(), t.int64_data().end(), l.ints.begin());
      break;
    case onnx::TensorProto::INT32:
      l.ints.resize(n);
      for (size_t k = 0; k < n; ++k) {
        int32_t v;
        if (!raw.empty())
          std::memcpy(&v, raw.data() + 4 * k, 4);
        else
          v = t.int32_data(int(k));
        l.ints[k] = v;
      }
      break;
    case onnx::TensorProto::BOOL:
      l.ints.resize(n);
      for (size_t k = 0; k < n; ++k)
        l.ints[k] = !raw.empty() ? uint8_t(raw[k]) != 0 : t.int32_data(int(k)) != 0;
      break;
    default:
      break;
  }
  return l;
}

struct Outcome {
  enum Kind { passed, failed, skipped } kind = skipped;
  std::string reason;  // skip category, or why it failed
};

// The skip category from an unsupported-error message (the importer tags them).
std::string category(const std::string& message) {
  auto has = [&](const char* s) { return message.find(s) != std::string::npos; };
  if (has("(operator)")) return "operator without a kernel";
  if (has("(data type)")) return "non-float data";
  if (has("(tensor rank)")) return "tensor rank (3-D convolution and pooling, batched MatMul)";
  if (has("(tensor layout)"))
    return "data moved across the image layout (Transpose, Concat, Expand off the channels)";
  if (has("(constant output)")) return "no image input: the output is a constant";
  if (has("batch")) return "batch axis (reduced, sliced, concatenated or broadcast)";
  if (has("empty") || has("leaves nothing")) return "empty tensors";
  return "operator form (channel max/min, tensor exponents, training mode, transA, ...)";
}

Outcome runTest(const fs::path& dir) {
  const fs::path modelPath = dir / "model.onnx";
  onnx::ModelProto model;
  if (!model.ParseFromString(readBytes(modelPath))) return {Outcome::failed, "unparsable model"};
  // Operators the importer does not know at all: skipped before the inputs are looked at.
  static const std::vector<std::string> supported = supportedOnnxOperators();
  for (const auto& node : model.graph().node()) {
    const std::string& op = node.op_type();
    if (!std::binary_search(supported.begin(), supported.end(), op) ||
        (!node.domain().empty() && node.domain() != "ai.onnx"))
      return {Outcome::skipped, category("(operator)")};
  }
  std::set<std::string> constantNames;
  for (const auto& node : model.graph().node()) {
    auto it = constantPositions().find(node.op_type());
    if (it == constantPositions().end()) continue;
    for (int k : it->second)
      if (k < node.input_size()) constantNames.insert(node.input(k));
  }
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {Outcome::skipped, "no test data"};
  for (const auto& v : model.graph().input())
    if (!v.type().has_tensor_type()) return {Outcome::skipped, "sequences and optionals"};
  for (const auto& v : model.graph().output())
    if (!v.type().has_tensor_type()) return {Outcome::skipped, "sequences and optionals"};

  for (const fs::path& set : sets) {
    OnnxImportOptions options;
    options.channelFormat = ChannelFormat::float32;
    std::map<std::string, Loaded> imageInputs;
    int k = 0;
    for (const auto& in : model.graph().input()) {
      if (initializers.count(in.name())) continue;
      const fs::path p = set / ("input_" + std::to_string(k++) + ".pb");
      if (!fs::exists(p)) return {Outcome::skipped, "missing input data"};
      Loaded l = loadTensor(p);
      const bool isFloat = l.type == onnx::TensorProto::FLOAT;
      const bool isInt = l.type == onnx::TensorProto::INT64 || l.type == onnx::TensorProto::INT32 ||
                         l.type == onnx::TensorProto::BOOL;
      if (!isFloat && !isInt) return {Outcome::skipped, "non-float data"};
      if (constantNames.count(in.name()) || !isFloat) {
        options.constantInputs[in.name()] = OnnxTensor{l.dims, l.floats, l.ints};
      } else {
        options.inputShapes[in.name()] = l.dims;
        imageInputs[in.name()] = std::move(l);
      }
    }
    std::vector<Loaded> expected;
    for (int o = 0; o < model.graph().output_size(); ++o) {
      const fs::path p = set / ("output_" + std::to_string(o) + ".pb");
      if (!fs::exists(p)) return {Outcome::skipped, "missing output data"};
      expected.push_back(loadTensor(p));
      if (expected.back().type != onnx::TensorProto::FLOAT)
        return {Outcome::skipped, "non-float data"};
    }
    try {
      OnnxImport imported = importOnnxModel(context(), modelPath.string(), options);
      std::vector<Image> inputs;
      for (const OnnxTensorInfo& info : imported.info.inputs)
        inputs.push_back(makeOnnxImage(context(), info, imageInputs.at(info.name).floats,
                                       ChannelFormat::float32));
      CommandBuffer cb(context());
      std::vector<Image> outputs = imported.graph.encode(cb, inputs);
      cb.commit();
      cb.waitUntilCompleted();
      for (size_t o = 0; o < outputs.size(); ++o) {
        const OnnxTensorInfo& info = imported.info.outputs[o];
        if (info.dims != expected[o].dims) {
          std::ostringstream s;
          s << "output " << o << " has shape [";
          for (int64_t d : info.dims) s << d << " ";
          s << "], the reference [";
          for (int64_t d : expected[o].dims) s << d << " ";
          s << "]";
          return {Outcome::failed, s.str()};
        }
        const std::vector<float> got = readOnnxImage(outputs[o], info);
        const std::vector<float>& want = expected[o].floats;
        for (size_t e = 0; e < want.size(); ++e) {
          const double a = got[e], b = want[e];
          const bool bothNaN = std::isnan(a) && std::isnan(b);
          const bool sameInf = std::isinf(a) && std::isinf(b) && (a > 0) == (b > 0);
          if (!bothNaN && !sameInf && !(std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b))) {
            std::ostringstream s;
            s << "output " << o << " element " << e << ": " << a << " vs reference " << b;
            return {Outcome::failed, s.str()};
          }
        }
      }
    } catch (const Error& e) {
      if (std::getenv("VKCNN_ONNX_CONFORMANCE_VERBOSE")) std::printf("  %s\n", e.what());
      if (e.code() == ErrorCode::unsupported) return {Outcome::skipped, category(e.what())};
      if (e.code() == ErrorCode::limitExceeded)
        return {Outcome::skipped, "beyond the device's image size"};
      return {Outcome::failed, std::string(toString(e.code())) + ": " + e.what()};
    }
  }
  return {Outcome::passed, {}};
}

std::set<std::string> listedTests() {
  // In the source tree the build names, or under tests/ of the working directory (a build copied
  // elsewhere, such as the GPU machine's).
  fs::path list = fs::path(VKCNN_CONFORMANCE_LIST);
  if (!fs::exists(list)) list = fs::path("tests") / "onnx_conformance_passing.txt";
  REQUIRE_MESSAGE(fs::exists(list), "cannot find onnx_conformance_passing.txt");
  std::set<std::string> names;
  std::ifstream f(list);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(line);
  }
  return names;
}

// Runs every test of the three suites, prints the summary, and fails for listed tests that do
// not pass.
void runSuites() {
  REQUIRE_MESSAGE(fs::is_directory(dataRoot() / "node"),
                  "libonnx-testdata is not at " << dataRoot().string()
                                                << " (scripts/install-deps.sh installs it)");
  const std::set<std::string> listed = listedTests();
  const char* filter = std::getenv("VKCNN_ONNX_CONFORMANCE_FILTER");
  const bool verbose = std::getenv("VKCNN_ONNX_CONFORMANCE_VERBOSE") != nullptr;
  std::map<std::string, int> skipped;
  std::vector<std::string> passedNames, regressions, hints, failures;
  size_t listedHere = 0, total = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(dataRoot() / suite))
      if (e.is_directory()) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    size_t suitePassed = 0, suiteTotal = 0;
    for (const fs::path& dir : dirs) {
      const std::string name = suite + "/" + dir.filename().string();
      if (filter && name.find(filter) == std::string::npos) continue;
      if (verbose) std::printf("%s\n", name.c_str());
      std::fflush(stdout);
      const bool isListed = listed.count(name) != 0;
      listedHere += isListed;
      ++suiteTotal;
      Outcome r = runTest(dir);
      if (verbose && r.kind != Outcome::passed)
        std::printf("  -> %s: %s\n", r.kind == Outcome::skipped ? "skipped" : "FAILED",
                    r.reason.c_str());
      if (r.kind == Outcome::passed) {
        passedNames.push_back(name);
        ++suitePassed;
        if (!isListed) hints.push_back(name);
      } else {
        if (isListed) regressions.push_back(name + ": " + r.reason);
        if (r.kind == Outcome::skipped)
          skipped[r.reason]++;
        else
          failures.push_back(name + ": " + r.reason);
      }
    }
    std::printf("  %-18s %4zu of %4zu pass\n", suite.c_str(), suitePassed, suiteTotal);
    total += suiteTotal;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "ONNX conformance: %zu of %zu tests pass (%zu listed as passing), %zu failed, %.1f s\n",
      passedNames.size(), total, listedHere, failures.size(), seconds);
  for (const auto& [reason, count] : skipped)
    std::printf("  skipped %4d  %s\n", count, reason.c_str());
  for (const auto& f : failures) std::printf("  FAILED  %s\n", f.c_str());
  for (const auto& h : hints)
    std::printf("  hint: %s passes but is not in onnx_conformance_passing.txt\n", h.c_str());
  if (const char* out = std::getenv("VKCNN_ONNX_CONFORMANCE_WRITE")) {
    std::ofstream f(out, std::ios::app);
    for (const auto& n : passedNames) f << n << "\n";
  }
  for (const auto& r : regressions) FAIL_CHECK("listed conformance test no longer passes: " << r);
  // Listed names that no test directory has any more are stale.
  if (!filter)
    for (const auto& name : listed)
      if (!fs::exists(dataRoot() / name))
        FAIL_CHECK("listed conformance test does not exist: " << name);
}

}  // namespace

TEST_CASE("onnx conformance: libonnx-testdata node, pytorch-converted, pytorch-operator, simple") {
  runSuites();
}
