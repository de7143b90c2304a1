// PyTorch exports through the importer, against PyTorch's own outputs: the files in
// tests/data/torch were written by scripts/export-test-models.py (torchvision's CNBlock and
// LayerNorm2d in a reduced ConvNeXt at opsets 17 and 13, a RetinaNet-style detection head, an
// NHWC-input classifier, a CRNN-style recogniser with a dynamic width). Each must match within
// 1e-4 relative L2 in float32 and 2e-2 in float16; the recogniser also runs through `vkcnn run`
// with --shape at another width.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "test_support.h"
#include "vkcnn/onnx.h"

using namespace vkcnn;
using namespace vkcnn::test;
namespace fs = std::filesystem;

namespace {

std::string model(const std::string& name) {
  return std::string(VKCNN_TORCH_MODELS) + "/" + name;
}

std::vector<float> readBin(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  REQUIRE_MESSAGE(f, "cannot open " << path);
  const std::streamsize bytes = f.tellg();
  std::vector<float> v(size_t(bytes) / 4);
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), bytes);
  return v;
}

double relativeL2(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    num += (double(got[k]) - want[k]) * (double(got[k]) - want[k]);
    den += double(want[k]) * want[k];
  }
  return std::sqrt(num / den);
}

struct Run {
  OnnxImport imported;
  std::vector<double> errors;  // relative L2 per output
};

// Imports `name`.onnx, runs it on `data`.in*.bin and compares with `data`.out*.bin.
Run run(const std::string& name, ChannelFormat format, const std::string& data,
        std::map<std::string, std::vector<int64_t>> shapes = {}) {
  OnnxImportOptions options;
  options.channelFormat = format;
  options.inputShapes = std::move(shapes);
  Run r{importOnnxModel(context(), model(name + ".onnx"), options), {}};
  std::vector<Image> inputs;
  for (size_t k = 0; k < r.imported.info.inputs.size(); ++k)
    inputs.push_back(makeOnnxImage(context(), r.imported.info.inputs[k],
                                   readBin(model(data + ".in" + std::to_string(k) + ".bin")),
                                   format));
  CommandBuffer cb(context());
  const std::vector<Image> outputs = r.imported.graph.encode(cb, inputs);
  cb.commit();
  cb.waitUntilCompleted();
  for (size_t k = 0; k < outputs.size(); ++k)
    r.errors.push_back(relativeL2(readOnnxImage(outputs[k], r.imported.info.outputs[k]),
                                  readBin(model(data + ".out" + std::to_string(k) + ".bin"))));
  return r;
}

void check(const std::string& name, std::map<std::string, std::vector<int64_t>> shapes = {},
           const std::string& data = {}) {
  for (const ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    const double tolerance = format == ChannelFormat::float32 ? 1e-4 : 2e-2;
    Run r = run(name, format, data.empty() ? name : data, shapes);
    for (size_t k = 0; k < r.errors.size(); ++k) {
      MESSAGE(name << " " << std::string(toString(format)) << " output " << k << ": relative L2 "
                   << r.errors[k]);
      CHECK(r.errors[k] <= tolerance);
    }
    // The values that leave the image layout live as Tensors.
    CHECK(r.imported.graph.statistics().conversions > 0);
  }
}

}  // namespace

TEST_CASE("torch: reduced ConvNeXt (CNBlock, LayerNorm2d) with LayerNormalization, opset 17") {
  check("convnext17");
}

TEST_CASE("torch: reduced ConvNeXt with LayerNorm decomposed, opset 13") {
  check("convnext13");
}

TEST_CASE("torch: detection head to [1, anchors, 4] and softmax over the classes") {
  check("detection");
  OnnxImport imported = importOnnxModel(context(), model("detection.onnx"));
  CHECK(imported.info.outputs[0].dims == std::vector<int64_t>{1, 960, 4});
  CHECK(imported.info.outputs[1].dims == std::vector<int64_t>{1, 960, 5});
}

TEST_CASE("torch: NHWC input permuted to NCHW") {
  check("nhwc");
}

TEST_CASE("torch: CRNN recogniser at a dynamic width, through the library and `vkcnn run`") {
  check("crnn", {{"x", {1, 3, 32, 64}}});
  check("crnn", {{"x", {1, 3, 32, 96}}}, "crnn_w96");
  // The tool, at width 96 set with --shape.
  const fs::path out =
      fs::temp_directory_path() / ("vkcnn-test-torch-" + std::to_string(::getpid()));
  fs::create_directories(out);
  for (const char* precision : {"--fp32", "--fp16"}) {
    const std::string result = (out / "y.bin").string();
    const std::string command = std::string(VKCNN_CLI) + " run " + model("crnn.onnx") +
                                " --input x=" + model("crnn_w96.in0.bin") +
                                " --shape x=1x3x32x96 " + precision + " --output " + result +
                                " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe);
    std::string output;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    const int status = ::pclose(pipe);
    INFO(command << "\n" << output);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    const double e = relativeL2(readBin(result), readBin(model("crnn_w96.out0.bin")));
    MESSAGE("vkcnn run " << std::string(precision) << " crnn at width 96: relative L2 " << e);
    CHECK(e <= (std::string(precision) == "--fp32" ? 1e-4 : 2e-2));
  }
  // vkcnn profile lists the values on Tensors with their shapes.
  {
    const std::string command = std::string(VKCNN_CLI) + " profile " + model("crnn.onnx") +
                                " --shape x=1x3x32x96 --iterations 1 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe);
    std::string output;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    const int status = ::pclose(pipe);
    INFO(command << "\n" << output);
    CHECK(WIFEXITED(status));
    CHECK(output.find("values on Tensors") != std::string::npos);
    CHECK(output.find("/Softmax_1 (softmax) -> tensor [1, 24, 12]") != std::string::npos);
    CHECK(output.find("/MatMul (matmul) -> tensor [1, 24, 24]") != std::string::npos);
  }
  fs::remove_all(out);
}
