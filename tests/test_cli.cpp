// The vkcnn command-line tool, run as a user runs it: on small models built here and the committed
// Fashion-MNIST model, checking exit status and output for each point of issue #13's CLI list and
// the --shape option of issue #12. Under ctest VKCNN_VALIDATION=1 reaches the tool too, so any
// validation message would also fail a run (exit status 3).
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli_support.h"
#include "onnx_model_builder.h"
#include "test_support.h"

// The samples' environment: without validation in the sanitizer build (tests/CMakeLists.txt).
#ifndef VKCNN_SAMPLE_ENVIRONMENT
#define VKCNN_SAMPLE_ENVIRONMENT ""
#endif

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// A strict JSON check (RFC 8259 grammar: no inf, nan or bare words).
struct JsonChecker {
  const std::string& s;
  size_t i = 0;
  void space() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool literal(const char* word) {
    const size_t n = std::strlen(word);
    if (s.compare(i, n, word) != 0) return false;
    i += n;
    return true;
  }
  bool string() {
    if (s[i] != '"') return false;
    for (++i; i < s.size() && s[i] != '"'; ++i)
      if (s[i] == '\\') ++i;
    return i++ < s.size();
  }
  bool number() {
    static const std::regex grammar(R"(^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
    std::smatch m;
    const std::string rest = s.substr(i, 64);
    if (!std::regex_search(rest, m, grammar)) return false;
    i += size_t(m.length(0));
    return true;
  }
  bool value() {
    space();
    if (i >= s.size()) return false;
    bool ok;
    if (s[i] == '{' || s[i] == '[') {
      const char close = s[i] == '{' ? '}' : ']';
      const bool object = s[i] == '{';
      ++i;
      space();
      if (s[i] == close) {
        ++i;
        return true;
      }
      while (true) {
        if (object) {
          space();
          if (!string()) return false;
          space();
          if (s[i++] != ':') return false;
        }
        if (!value()) return false;
        space();
        if (s[i] == close) {
          ++i;
          return true;
        }
        if (s[i++] != ',') return false;
      }
    }
    ok =
        s[i] == '"' ? string() : literal("true") || literal("false") || literal("null") || number();
    return ok;
  }
  bool valid() {
    if (!value()) return false;
    space();
    return i == s.size();
  }
};

bool validJson(const std::string& text) {
  return JsonChecker{text}.valid();
}

// The number after "key": in a JSON text (NaN if absent or not a number).
double jsonNumber(const std::string& json, const std::string& key) {
  const std::regex pattern("\"" + key + "\": (-?[0-9.eE+-]+)");
  std::smatch m;
  return std::regex_search(json, m, pattern) ? std::stod(m[1]) : NAN;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const std::string kFashion = VKCNN_FASHION_MNIST_ONNX;

// x [1, 3, 8, 8] -> Relu -> y: the picture tests read what the tool fed in.
std::string identityModel() {
  OnnxModelBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", 4);
  return save("identity.onnx", b);
}

// a + b and a * b, fixed batch 1, [1, 2, 2, 2].
std::string twoInputModel() {
  OnnxModelBuilder b(13);
  b.input("a", {1, 2, 2, 2});
  b.input("b", {1, 2, 2, 2});
  b.node("Add", {"a", "b"}, {"sum"});
  b.output("sum", 4);
  return save("two.onnx", b);
}

// x [N, 3, H, W] -> 3x3 Conv to 4 channels (padding 1) -> y: dynamic batch, height and width.
std::string dynamicModel() {
  OnnxModelBuilder b(13);
  b.input("x", {-1, 3, -1, -1}, onnx::TensorProto::FLOAT, {"N", "", "H", "W"});
  b.initializer("w", {4, 3, 3, 3}, randomFloats(4 * 27, 5));
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  setAttribute(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("y", 4);
  return save("dynamic.onnx", b);
}

}  // namespace

TEST_CASE("cli: --version, --help, ops, and unknown commands") {
  Result r = cli("--version");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("vkcnn 0."));
  r = cli("--help");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("inspect MODEL.onnx"));
  CHECK(cli("frobnicate").status == 2);
  for (const char* command : {"info", "run", "bench", "profile", "tune", "inspect", "ops"}) {
    r = cli(std::string(command) + " --help");
    CHECK_MESSAGE(r.status == 0, r.output);
    CHECK(r.has(std::string("usage: vkcnn ") + command));
  }
  r = cli("ops");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("Conv\n"));
  r = cli("ops --json -");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(validJson(r.out));
  CHECK(r.has("\"MaxPool\""));
#ifdef VKCNN_FASHION_MNIST_SAMPLE
  r = cli("--help", VKCNN_SAMPLE_ENVIRONMENT, VKCNN_FASHION_MNIST_SAMPLE);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("usage: vkcnn-fashion-mnist"));
  CHECK(r.has("--images N"));
  CHECK(cli("--images x", VKCNN_SAMPLE_ENVIRONMENT, VKCNN_FASHION_MNIST_SAMPLE).status == 2);
#endif
}

TEST_CASE("cli: info says whether validation is on; a validation message fails the command") {
  Result r = cli("info", "VKCNN_VALIDATION=1");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("validation: on"));
  // Memory: the block size chosen for the device, the budget, what is allocated.
  CHECK(std::regex_search(r.output, std::regex(R"(memory: shared blocks of \d+\.\d MiB)")));
  CHECK(r.has("no budget"));
  r = cli("info --json -", "VKCNN_VALIDATION=0");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(validJson(r.out));
  CHECK(r.has("\"validation\": false"));
  CHECK(jsonNumber(r.output, "memory_block_size") > 0);
  CHECK(jsonNumber(r.output, "memory_budget") == 0);
  CHECK(jsonNumber(r.output, "device_bytes_allocated") >= 0);
  // A message through the Context's own debug messenger (the tool's test hook sends one).
  r = cli("info", "VKCNN_VALIDATION=1 VKCNN_CLI_INJECT_VALIDATION_MESSAGE=1");
  CHECK_MESSAGE(r.status == 3, r.output);
  CHECK(r.has("the validation layer reported 1 message"));
}

TEST_CASE("cli: a device out of range is a clear error, from --device or VKCNN_DEVICE") {
  writeNpy(file("fashion1.npy"), {1, 1, 28, 28}, randomFloats(784, 1, 0, 1));
  Result r = cli("run " + kFashion + " --input " + file("fashion1.npy") +
                 " --device 99999999999999999999999");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--device '99999999999999999999999' matches no device"));
  r = cli("run " + kFashion + " --input " + file("fashion1.npy"),
          "VKCNN_DEVICE=99999999999999999999999");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("VKCNN_DEVICE '99999999999999999999999' matches no device"));
  r = cli("info --device 'no such GPU'");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("matches no device"));
}

TEST_CASE("cli: --device-profile mobile clamps the limits; a bad profile is named") {
  Result r = cli("info --device-profile mobile --json -", "VKCNN_VALIDATION=0");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("\"device_profile\": \"mobile\""));
  CHECK(jsonNumber(r.output, "max_image_array_layers") == 256);
  CHECK(jsonNumber(r.output, "shared_memory_bytes") <= 16384);
  r = cli("info --json -", "VKCNN_VALIDATION=0 VKCNN_DEVICE_PROFILE=mobile");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("\"device_profile\": \"mobile\""));
  // The Fashion-MNIST classifier fits a mobile device.
  writeNpy(file("fashion_mobile.npy"), {1, 1, 28, 28}, randomFloats(784, 2, 0, 1));
  r = cli("run " + kFashion + " --input " + file("fashion_mobile.npy") +
          " --device-profile mobile");
  CHECK_MESSAGE(r.status == 0, r.output);
  r = cli("run " + kFashion + " --input " + file("fashion_mobile.npy") + " --device-profile phone");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--device-profile 'phone' is not a device profile (native or mobile)"));
  r = cli("info", "VKCNN_DEVICE_PROFILE=phone");
  CHECK_MESSAGE(r.status != 0, r.output);
  CHECK(r.has("VKCNN_DEVICE_PROFILE 'phone'"));
}

TEST_CASE("cli: the command line is checked before any work") {
  const std::string in = file("fashion1.npy");
  writeNpy(in, {1, 1, 28, 28}, randomFloats(784, 1, 0, 1));
  // A directory as the model.
  Result r = cli("run " + directory().string() + " --input " + in);
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("is a directory"));
  CHECK(cli("bench " + file("missing.onnx")).has("no such file"));
  // Options given twice, together when they exclude each other, on the wrong model.
  r = cli("run " + kFashion + " --input " + in + " --input " + in);
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--input is given twice"));
  r = cli("bench " + kFashion + " --fp16 --fp32");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--fp16 and --fp32 exclude each other"));
  r = cli("bench " + kFashion + " --accumulate fp8");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--accumulate takes fp16 or fp32, not 'fp8'"));
  r = cli("bench " + twoInputModel() + " --batch 2");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--batch 2: the model's batch is fixed at 1"));
  CHECK(cli("bench " + kFashion + " --iterations 0").status == 2);
  CHECK(cli("bench " + kFashion + " --iterations 3 --duration 1").status == 2);
  CHECK(cli("bench " + kFashion + " --top 3").has("unknown option '--top'"));
  // Output, JSON and reference paths before the run, each naming its option.
  r = cli("run " + kFashion + " --input " + in + " --output " + file("nowhere/out.npy"));
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--output " + file("nowhere/out.npy") + ": the folder"));
  CHECK_FALSE(r.has("ran on"));
  r = cli("bench " + kFashion + " --json " + directory().string());
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--json " + directory().string() + " is a directory"));
  r = cli("bench " + kFashion + " --reference " + file("missing.npy"));
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--reference " + file("missing.npy") + ": no such file"));
  // A write that fails says why.
  if (fs::exists("/dev/full")) {
    r = cli("info --json /dev/full");
    CHECK_MESSAGE(r.status == 1, r.output);
    CHECK(r.has("--json /dev/full: write failed (No space left on device)"));
  }
}

TEST_CASE("cli: only regular files are read: a FIFO as the model or an input is refused") {
  const std::string in = file("fifo-test.npy");
  writeNpy(in, {1, 1, 28, 28}, randomFloats(784, 1, 0, 1));
  const std::string fifo = file("fifo");
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // `timeout`: a regression fails here (status 124) instead of hanging the suite.
  Result r = cli("run " + fifo + " --input " + in, "timeout 60");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("the model " + fifo + " is not a regular file (a FIFO)"));
  r = cli("run " + kFashion + " --input " + fifo, "timeout 60");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--input " + fifo + " is not a regular file (a FIFO)"));
  r = cli("bench " + kFashion + " --reference " + fifo, "timeout 60");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--reference " + fifo + " is not a regular file (a FIFO)"));
  r = cli("run " + kFashion + " --input " + directory().string());
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--input " + directory().string() + " is a directory"));
  fs::remove(fifo);
}

TEST_CASE("cli: run with --opt=value, outputs, labels with softmax probabilities, JSON") {
  const std::string in = file("fashion2.npy");
  writeNpy(in, {2, 1, 28, 28}, randomFloats(2 * 784, 2, 0, 1));
  // The .npy sets the dynamic batch (2).
  Result r = cli("run " + kFashion + " --input=" + in + " --top=1 --output=" + file("f.npy") +
                 " --json=" + file("run.json"));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("output 'probabilities' [2, 10]"));
  CHECK(r.has("image 1  #1  class"));
  CHECK_FALSE(r.has("#2"));
  CHECK(readNpyData(file("f_probabilities.npy")).size() == 20);
  CHECK(readNpyData(file("f_logits.npy")).size() == 20);
  const std::string json = slurp(file("run.json"));
  CHECK(validJson(json));
  CHECK(jsonNumber(json, "batch") == 2);

  // Logits [1, 3] = 1, 2, 3: softmax 9.00%, 24.47%, 66.52%.
  OnnxModelBuilder b(13);
  b.input("x", {1, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", 2);
  const std::string model = save("logits.onnx", b);
  writeNpy(file("logits.npy"), {1, 3}, {1, 2, 3});
  {
    std::ofstream labels(file("labels.txt"));
    labels << "dog\nbird\ncat\n";
  }
  r = cli("run " + model + " --input " + file("logits.npy") + " --labels " + file("labels.txt") +
          " --fp32");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("#1  class 2   66.52%  cat"));
  CHECK(r.has("#2  class 1   24.47%  bird"));
  CHECK(r.has("#3  class 0    9.00%  dog"));
  r = cli("run " + model + " --input " + file("logits.npy") + " --labels " + file("labels.txt") +
          " --json -");
  CHECK_MESSAGE(r.status == 0, r.output);
  const std::string runJson = r.out.substr(0, r.out.find('\n'));
  CHECK(validJson(runJson));
  CHECK(r.has("\"label\": \"cat\""));
}

TEST_CASE("cli: outputs whose names make the same file name each get a file of their own") {
  OnnxModelBuilder b(13);
  b.input("x", {1, 3});
  b.node("Relu", {"x"}, {"a/b"});
  b.node("Sigmoid", {"x"}, {"a_b"});
  b.output("a/b", 2);
  b.output("a_b", 2);
  const std::string model = save("colliding.onnx", b);
  writeNpy(file("x3.npy"), {1, 3}, {-1, 0, 2});
  Result r =
      cli("run " + model + " --input " + file("x3.npy") + " --fp32 --output " + file("out.npy"));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("written to " + file("out_a_b.npy")));
  CHECK(r.has("written to " + file("out_a_b_2.npy")));
  const std::vector<float> relu = readNpyData(file("out_a_b.npy"));
  const std::vector<float> sigmoid = readNpyData(file("out_a_b_2.npy"));
  REQUIRE(relu.size() == 3);
  REQUIRE(sigmoid.size() == 3);
  CHECK(relu[0] == 0);
  CHECK(sigmoid[0] == doctest::Approx(1 / (1 + std::exp(1.0))).epsilon(1e-6));
}

TEST_CASE("cli: an output that is all zero in float16 gets a warning that suggests --fp32") {
  OnnxModelBuilder b(13);
  b.input("x", {1, 3});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", 2);
  const std::string model = save("tiny.onnx", b);
  writeNpy(file("tiny.npy"), {1, 3}, {1e-9f, 2e-9f, 3e-9f});  // below float16's smallest
  Result r = cli("run " + model + " --input " + file("tiny.npy"));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("output 'y' is all zero in float16"));
  CHECK(r.has("--fp32"));
  r = cli("run " + model + " --input " + file("tiny.npy") + " --fp32");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK_FALSE(r.has("all zero"));
  CHECK(r.has("3e-09"));
}

TEST_CASE("cli: a model with several inputs takes --input NAME=FILE") {
  const std::string model = twoInputModel();
  const std::vector<float> a = randomFloats(8, 3), bValues = randomFloats(8, 4);
  writeNpy(file("a.npy"), {1, 2, 2, 2}, a);
  writeNpy(file("b.npy"), {1, 2, 2, 2}, bValues);
  Result r = cli("run " + model + " --input a=" + file("a.npy") + " --input b=" + file("b.npy") +
                 " --fp32 --output " + file("sum.npy"));
  CHECK_MESSAGE(r.status == 0, r.output);
  const std::vector<float> sum = readNpyData(file("sum.npy"));
  REQUIRE(sum.size() == 8);
  for (size_t i = 0; i < 8; ++i) CHECK(sum[i] == doctest::Approx(a[i] + bValues[i]).epsilon(1e-6));
  r = cli("run " + model + " --input " + file("a.npy"));
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("give each with --input NAME=FILE"));
  r = cli("run " + model + " --input a=" + file("a.npy"));
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("input 'b' has no file: give --input b=FILE"));
  r = cli("run " + model + " --input c=" + file("a.npy") + " --input b=" + file("b.npy"));
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("the model has no input 'c' (inputs: 'a', 'b')"));
  r = cli("run " + model + " --input a=" + file("a.npy") + " --input a=" + file("b.npy"));
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--input is given twice for input 'a'"));
}

TEST_CASE("cli: --shape and .npy inputs set dynamic dimensions; messages name the option") {
  const std::string model = dynamicModel();
  Result r = cli("run " + model + " --input " + file("none.npy"));
  CHECK_MESSAGE(r.status == 2, r.output);  // the missing file first
  r = cli("profile " + model);
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(
      r.has("input 'x' [N, 3, H, W] has dynamic dimensions: give its shape with --shape "
            "x=1x3xSIZExSIZE"));
  r = cli("profile " + model + " --shape x=1x3x6x10 --iterations 1 --json -");
  CHECK_MESSAGE(r.status == 0, r.output);
  INFO(r.output);
  CHECK(validJson(r.out.substr(0, r.out.find('\n'))));
  r = cli("profile " + model + " --shape x=1x3x6x10 --iterations 1 --levels");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("dispatches side by side"));
  CHECK(r.has("levels,"));
  r = cli("bench " + model + " --shape x=2x3x5x7 --iterations 2 --warmup 0");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("batch 2"));
  r = cli("bench " + model + " --shape x=1x4x5x7");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--shape x=1x4x5x7: dimension 1 of input 'x' [N, 3, H, W] is 3 in the model, not 4"));
  r = cli("bench " + model + " --shape y=1x3x5x7");
  CHECK(r.has("--shape y=1x3x5x7: the model has no input 'y' (inputs: 'x')"));
  CHECK(cli("bench " + model + " --shape x=1x3x5").has("has rank 3"));
  CHECK(cli("bench " + model + " --shape x=1x3xAx5").has("'A' is not a size"));
  CHECK(cli("bench " + model + " --shape x=1x3x5x5 --shape x=1x3x5x5").has("given twice"));
  r = cli("bench " + model + " --shape x=1x3x5x7 --batch 2");
  CHECK_MESSAGE(r.status == 2, r.output);
  CHECK(r.has("--batch 2 disagrees with the shape [1, 3, 5, 7]"));
  // A .npy fixes every dynamic dimension from its own shape.
  writeNpy(file("x.npy"), {1, 3, 4, 5}, randomFloats(60, 6));
  r = cli("run " + model + " --input " + file("x.npy") + " --output " + file("y.npy"));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("output 'y' [1, 4, 4, 5]"));
  CHECK(readNpyData(file("y.npy")).size() == 80);
  // inspect: FLOPs once the sizes are known (2 x 4 x 27 multiply-adds per pixel).
  r = cli("inspect " + model);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("x                        [N, 3, H, W]"));
  CHECK(r.has("FLOPs: unknown (give the dynamic inputs' sizes with --shape"));
  r = cli("inspect " + model + " --shape x=1x3x8x8");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("(13824)"));
  r = cli("inspect " + model + " --shape x=1x3x8x8 --json -");
  CHECK(validJson(r.out.substr(0, r.out.find('\n'))));
  CHECK(jsonNumber(r.output, "flops") == 13824);
}

TEST_CASE("cli: tune keeps each convolution shape's fastest configuration; profile names it") {
  const std::string model = dynamicModel();
  const std::string environment = "VKCNN_PIPELINE_CACHE_DIR=" + file("tune-cache");
  Result r = cli("tune " + model + " --shape x=2x3x40x40 --iterations 1", environment);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("convolution-tuning-"));
  // Two or more rounds with the portable GEMM tiles (lavapipe); more where the
  // matrix-unit tiles are candidates too.
  CHECK(std::regex_search(r.output, std::regex("1 shapes tuned over ([2-9]|[1-9][0-9]+) rounds")));
  r = cli("tune " + model + " --shape x=2x3x40x40 --iterations 1", environment);
  CHECK(r.has("(1 entries)"));  // read back: nothing left to tune
  CHECK(r.has("0 shapes tuned"));
  r = cli("profile " + model + " --shape x=2x3x40x40 --iterations 1", environment);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("configuration"));
  CHECK(std::regex_search(r.output, std::regex("gemm_(large|small)|[0-9]+x[0-9]+")));
}

TEST_CASE("cli: profile keeps whole kernel names, a long one wrapped in its column") {
  const std::string name =
      "an_output_named_at_length/past_the_kernel_column,so_that_it_wraps_onto/more_lines";
  OnnxModelBuilder b(13);
  b.input("x", {1, 3, 4, 4});
  b.node("Relu", {"x"}, {name});
  b.output(name, 4);
  Result r = cli("profile " + save("long_name.onnx", b) + " --iterations 1");
  CHECK_MESSAGE(r.status == 0, r.output);
  // The kernel column (52 characters from column 5) of the kernel's row and the lines under it.
  std::istringstream lines(r.out);
  std::string line, kernel;
  int continued = 0;
  bool inRow = false;
  while (std::getline(lines, line)) {
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
      std::string piece = line.substr(5, 52);
      piece.erase(piece.find_last_not_of(' ') + 1);
      kernel += piece;
      inRow = true;
    } else if (inRow && line.rfind("     ", 0) == 0 && line.size() > 5 && line[5] != ' ') {
      CHECK(line.size() - 5 <= 52);
      kernel += line.substr(5);
      ++continued;
    } else {
      inRow = false;
    }
  }
  INFO(r.output);
  CHECK(kernel.find(name) != std::string::npos);
  CHECK(continued >= 1);
}

TEST_CASE("cli: inspect lists operators, support, parameters and FLOPs") {
  Result r = cli("inspect " + kFashion);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("opset 13"));
  CHECK(r.has("input                    [batch, 1, 28, 28]   float32"));
  CHECK(r.has("probabilities"));
  CHECK(r.has("Conv                          2  yes"));
  CHECK(r.has("parameters: 114.31 k (114314)"));
  // Two convolutions and two fully-connected layers at batch 1.
  CHECK(r.has("(5846784) in 4 convolutions and matrix products at input [1, 1, 28, 28]"));
  r = cli("inspect " + kFashion + " --batch 4 --json -");
  CHECK(validJson(r.out.substr(0, r.out.find('\n'))));
  CHECK(jsonNumber(r.output, "flops") == 4 * 5846784.0);
  CHECK(jsonNumber(r.output, "parameters") == 114314);

  OnnxModelBuilder b(13);
  b.input("x", {1, 3, 4, 4});
  b.node("Sin", {"x"}, {"s"});
  b.node("Relu", {"s"}, {"y"});
  b.output("y", 4);
  r = cli("inspect " + save("sin.onnx", b));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("Sin                           1  NO"));
  CHECK(r.has("1 nodes use operators vkcnn does not support"));
}

TEST_CASE("cli: profile --trace writes Chrome trace events, one per dispatch, for Perfetto") {
  const std::string trace = file("fashion_trace.json");
  Result r = cli("profile " + kFashion + " --iterations 2 --trace " + trace);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const std::string text = slurp(trace);
  CHECK(validJson(text.substr(0, text.find_last_not_of('\n') + 1)));
  REQUIRE(text.rfind("{\"traceEvents\": [", 0) == 0);
  // Every complete event has a name, a start and a non-negative duration in microseconds, on the
  // queue's track; the dispatches carry their index and median in args.
  const std::regex event(
      R"re(\{"name": "([^"]*)", "ph": "X", "pid": 1, "tid": 1, "cat": "(\w+)", "ts": (-?[0-9.eE+-]+), "dur": (-?[0-9.eE+-]+))re");
  int dispatches = 0;
  double lastStart = -1;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), event);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    CHECK(!m[1].str().empty());
    CHECK(std::stod(m[3]) >= 0);
    CHECK(std::stod(m[4]) >= 0);
    if (m[2] == "dispatch") {
      ++dispatches;
      CHECK(std::stod(m[3]) >= lastStart);  // in order on the one queue
      lastStart = std::stod(m[3]);
    }
  }
  // Fashion-MNIST: two convolutions, two pools, two fully-connected layers at least.
  CHECK(dispatches >= 4);
  CHECK(text.find("\"median_ms\": ") != std::string::npos);
  CHECK(text.find("\"thread_name\"") != std::string::npos);
  // A second process: a run timed at the barriers, one event per level.
  CHECK(text.find("\"barrier levels (a run of its own)\"") != std::string::npos);
  const std::regex level(
      R"re(\{"name": "level [0-9]+ \([0-9]+ dispatches\)", "ph": "X", "pid": 2)re");
  CHECK(std::distance(std::sregex_iterator(text.begin(), text.end(), level),
                      std::sregex_iterator()) >= 4);
  // The text table is still printed, and --levels traces the levels.
  CHECK(r.has("total kernel time"));
  r = cli("profile " + kFashion + " --iterations 1 --levels --trace -");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(validJson(r.out.substr(0, r.out.find_last_not_of('\n') + 1)));
  CHECK(r.out.find("\"cat\": \"level\"") != std::string::npos);

  r = cli("profile " + kFashion + " --trace " + file("no_such_folder/trace.json"));
  CHECK(r.status == 2);
  CHECK(r.has("--trace"));
  CHECK(r.has("does not exist"));
  r = cli("profile " + kFashion + " --trace - --json -");
  CHECK(r.status == 2);
  CHECK(r.has("--trace"));
}

TEST_CASE("cli: inspect --dot draws the optimised graph, which Graphviz renders") {
  const std::string dot = file("fashion.dot");
  Result r = cli("inspect " + kFashion + " --batch 2 --dot " + dot);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("operators (nodes, supported by vkcnn)"));  // the usual report too
  const std::string text = slurp(dot);
  CHECK(text.rfind("digraph vkcnn {", 0) == 0);
  CHECK(text.find("input input") != std::string::npos);
  CHECK(text.find("output probabilities") != std::string::npos);
  CHECK(text.find("fused: convolution") != std::string::npos);  // its ReLU folded in
  CHECK(text.find("batch 2") != std::string::npos);
  CHECK(text.find("temporaries: ") != std::string::npos);
  CHECK(text.find(" -> ") != std::string::npos);
  // Debian's graphviz (scripts/install-deps.sh) renders it.
  const std::string svg = file("fashion.svg");
  REQUIRE(std::system(("dot -Tsvg '" + dot + "' -o '" + svg + "'").c_str()) == 0);
  const std::string picture = slurp(svg);
  CHECK(picture.find("<svg") != std::string::npos);
  CHECK(picture.find("</svg>") != std::string::npos);
  CHECK(picture.find("class=\"edge\"") != std::string::npos);

  // A residual add fused into a convolution (the other branch points at it), a concatenation,
  // and a transpose, whose Tensor is drawn apart from the Images: every kernel has an edge.
  OnnxModelBuilder b(13);
  b.input("x", {1, 4, 6, 6});
  b.initializer("wa", {4, 4, 1, 1}, randomFloats(16, 7));
  b.initializer("wb", {4, 4, 3, 3}, randomFloats(144, 8));
  b.node("Conv", {"x", "wa"}, {"a"});
  b.node("Relu", {"a"}, {"ra"});
  setAttribute(b.node("Conv", {"x", "wb"}, {"cb"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Add", {"cb", "ra"}, {"sum"});
  setAttribute(b.node("Concat", {"sum", "x"}, {"cat"}), "axis", int64_t(1));
  setAttribute(b.node("Transpose", {"cat"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
  b.output("y", 4);
  r = cli("inspect " + save("branches.onnx", b) + " --dot " + dot);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const std::string branches = slurp(dot);
  INFO(branches);
  CHECK(branches.find("+ residual") != std::string::npos);
  CHECK(branches.find("shape=box3d, style=\"filled\"") != std::string::npos);  // a Tensor
  const std::regex drawnNode(R"(\n  (k[0-9]+) \[)");
  for (auto it = std::sregex_iterator(branches.begin(), branches.end(), drawnNode);
       it != std::sregex_iterator(); ++it) {
    INFO((*it)[1].str());
    CHECK(branches.find("\"" + (*it)[1].str() + "\"") != std::string::npos);
  }
  REQUIRE(std::system(("dot -Tsvg '" + dot + "' -o '" + svg + "'").c_str()) == 0);

  r = cli("inspect " + kFashion + " --dot " + file("no_such_folder/graph.dot"));
  CHECK(r.status == 2);
  CHECK(r.has("--dot"));
}

TEST_CASE("cli: bench figures are sound: p90 >= median, exact integers, valid JSON") {
  for (int iterations : {2, 3, 5}) {
    Result r = cli("bench " + kFashion + " --warmup 0 --iterations " + std::to_string(iterations) +
                   " --json " + file("bench.json"));
    REQUIRE_MESSAGE(r.status == 0, r.output);
    const std::string json = slurp(file("bench.json"));
    CHECK(validJson(json));
    CHECK(jsonNumber(json, "resident_p90_ms") >= jsonNumber(json, "resident_median_ms"));
    CHECK(jsonNumber(json, "end_to_end_p90_ms") >= jsonNumber(json, "end_to_end_median_ms"));
    CHECK(jsonNumber(json, "resident_runs") == iterations);
    // The recording's CPU time: positive, and printed beside the dispatches.
    CHECK(jsonNumber(json, "encode_ms") > 0);
    CHECK(r.has(" barriers, encoded in "));
    // Byte counts as whole numbers, never 6.71089e+07.
    CHECK(std::regex_search(json, std::regex("\"device_bytes\": [0-9]+[,}]")));
    CHECK(std::regex_search(json, std::regex("\"peak_temporary_bytes\": [0-9]+[,}]")));
  }
  // A reference of the wrong size is an error before the runs.
  writeNpy(file("ref11.npy"), {1, 11}, std::vector<float>(11, 0.1f));
  Result r = cli("bench " + kFashion + " --reference " + file("ref11.npy"));
  CHECK_MESSAGE(r.status == 1, r.output);
  CHECK(r.has("--reference " + file("ref11.npy") +
              " holds [1, 11] (11 values) but output "
              "'probabilities' is [1, 10] (10)"));
  CHECK_FALSE(r.has("GPU-resident"));

  // An output of NaN (0 / 0) against a reference: null in the JSON, exit status 1.
  OnnxModelBuilder b(13);
  b.input("x", {1, 2, 2, 2});
  b.node("Div", {"x", "x"}, {"y"});
  b.output("y", 4);
  const std::string model = save("div.onnx", b);
  writeNpy(file("zeros.npy"), {1, 2, 2, 2}, std::vector<float>(8, 0.0f));
  writeNpy(file("ones.npy"), {1, 2, 2, 2}, std::vector<float>(8, 1.0f));
  r = cli("bench " + model + " --input " + file("zeros.npy") + " --reference " + file("ones.npy") +
          " --iterations 2 --json " + file("nan.json"));
  CHECK_MESSAGE(r.status == 1, r.output);
  CHECK(r.has("relative L2 vs reference: not finite"));
  const std::string json = slurp(file("nan.json"));
  CHECK(validJson(json));
  CHECK(json.find("\"relative_l2\": null") != std::string::npos);
  // float16 accumulators asked of float32 storage: ignored, the same exact result.
  r = cli("bench " + model + " --input " + file("ones.npy") + " --reference " + file("ones.npy") +
          " --iterations 2 --fp32 --accumulate fp16 --json -");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(jsonNumber(r.output, "relative_l2") == 0);
  CHECK(r.has("\"accumulate\": \"fp16\""));
  // Memory use: the Context's device memory and the temporary pool's peak.
  CHECK(jsonNumber(r.output, "device_bytes") > 0);
  CHECK(jsonNumber(r.output, "peak_temporary_bytes") >= 0);
  CHECK(jsonNumber(r.output, "intermediate_tensor_bytes") >= 0);
}

TEST_CASE("cli: bench --cold, and a batch split into chunks from one load") {
  Result r = cli("bench " + kFashion + " --cold --iterations 2 --warmup 0 --json -");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(jsonNumber(r.output, "cold_no_cache_ms") > 0);
  CHECK(jsonNumber(r.output, "cold_with_cache_ms") > 0);
  // Phase by phase; the first start finds no cache, the second reads the one the first wrote.
  for (const char* phase : {"context", "read", "parse", "check", "import", "shape_inference",
                            "optimize", "pack", "upload", "images", "pipelines"})
    CHECK(jsonNumber(r.output, std::string("cold_no_cache_") + phase + "_ms") >= 0);
  CHECK(jsonNumber(r.output, "cold_no_cache_load_ms") > 0);
  CHECK(jsonNumber(r.output, "cold_no_cache_first_run_ms") > 0);
  CHECK(jsonNumber(r.output, "cold_no_cache_load_ms") +
            jsonNumber(r.output, "cold_no_cache_first_run_ms") <=
        jsonNumber(r.output, "cold_no_cache_ms"));
  CHECK(jsonNumber(r.output, "cold_no_cache_pipeline_cache_loaded") == 0);
  CHECK(jsonNumber(r.output, "cold_no_cache_pipelines_created") > 0);
  CHECK(jsonNumber(r.output, "cold_with_cache_pipeline_cache_loaded") == 1);
  CHECK(jsonNumber(r.output, "cold_no_cache_upload_bytes") > 0);
  // --cold-only with a kept --cache-dir: a second process reads what the first wrote.
  const std::string cache = file("bench-cache");
  fs::remove_all(cache);
  for (int process = 0; process < 2; ++process) {
    r = cli("bench " + kFashion + " --cold-only --cache-dir " + cache + " --json -");
    CHECK_MESSAGE(r.status == 0, r.output);
    CHECK(jsonNumber(r.output, "cold_pipeline_cache_loaded") == process);
    CHECK(jsonNumber(r.output, "cold_first_run_ms") > 0);
    CHECK(std::isnan(jsonNumber(r.output, "resident_median_ms")));
  }
  r = cli("bench " + kFashion + " --cold-only");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("weight packing"));
  CHECK(r.has("of it pipelines"));
  CHECK(cli("bench " + kFashion + " --cold-only --iterations 3").status == 2);
  CHECK(cli("bench " + kFashion + " --cache-dir " + cache).status == 2);
  // 600 channels take 150 array layers per image: a batch of 30 does not fit one Image.
  OnnxModelBuilder b(13);
  b.input("x", {-1, 3, 2, 2}, onnx::TensorProto::FLOAT, {"N"});
  b.initializer("w", {600, 3, 1, 1}, randomFloats(1800, 9));
  b.node("Conv", {"x", "w"}, {"y"});
  b.output("y", 4);
  const std::string model = save("wide.onnx", b);
  r = cli("bench " + model + " --batch 30 --iterations 2 --warmup 0");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(std::regex_search(
      r.output,
      std::regex(
          R"(\(\d+ chunks of \d+ images: each input and output Image holds at most \d+ array layers\))")));
  writeNpy(file("wide.npy"), {30, 3, 2, 2}, randomFloats(360, 10));
  r = cli("run " + model + " --input " + file("wide.npy") + " --top 1 --output " +
          file("wide_out.npy"));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(readNpyData(file("wide_out.npy")).size() == 30 * 600 * 4);
}

TEST_CASE("cli: bench --duration bounds the whole command and shows progress") {
  const auto start = std::chrono::steady_clock::now();
  Result r = cli("bench " + kFashion + " --duration 4 --json " + file("d.json"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_MESSAGE(r.status == 0, r.output);
  const std::string json = slurp(file("d.json"));
  // The load, the warm-up and every kind of run within the 4 seconds (a run of each kind may
  // overshoot; process start and exit are outside the command's own clock).
  CHECK(jsonNumber(json, "bench_s") <= 4.6);
  CHECK(jsonNumber(json, "bench_s") >= 3.5);
  CHECK(seconds < 4.6 + 5);
  CHECK(jsonNumber(json, "resident_runs") >= 2);
  CHECK(jsonNumber(json, "gpu_runs") >= 1);
  // The default warm-up: 10 runs at most, within a tenth of the budget.
  CHECK(jsonNumber(json, "warmup_runs") >= 1);
  CHECK(jsonNumber(json, "warmup_runs") <= 10);
  CHECK(jsonNumber(json, "warmup_ms") <= 450);
  // A timed phase over a second reports progress, then how long it took.
  if (jsonNumber(json, "resident_runs") * jsonNumber(json, "resident_mean_ms") > 1100) {
    CHECK(r.has("vkcnn: GPU-resident runs... "));
    CHECK(r.has("vkcnn: GPU-resident runs: done in 1."));
  }
}

TEST_CASE("cli: bench prints latency percentiles and throughput, in text and JSON") {
  Result r = cli("bench " + kFashion + " --batch 4 --warmup-duration 0.2 --iterations 7 --json " +
                 file("p.json"));
  CHECK_MESSAGE(r.status == 0, r.output);
  for (const char* column : {"min", "mean", "median", "p90", "p95", "p99", "max", "runs",
                             "inferences/s", "images/s", "GPU-resident", "end-to-end", "GPU time"})
    CHECK_MESSAGE(r.has(column), column);
  CHECK(r.has(" warm-up runs in "));
  const std::string json = slurp(file("p.json"));
  CHECK(validJson(json));
  CHECK(jsonNumber(json, "warmup_runs") >= 1);
  for (const std::string kind : {"resident", "end_to_end", "gpu"}) {
    INFO(kind);
    const double min = jsonNumber(json, kind + "_min_ms"), max = jsonNumber(json, kind + "_max_ms");
    double previous = min;
    for (const char* p : {"_median_ms", "_p90_ms", "_p95_ms", "_p99_ms", "_max_ms"}) {
      CHECK(jsonNumber(json, kind + p) >= previous);
      previous = jsonNumber(json, kind + p);
    }
    CHECK(min > 0);
    CHECK(jsonNumber(json, kind + "_mean_ms") >= min);
    CHECK(jsonNumber(json, kind + "_mean_ms") <= max);
  }
  CHECK(jsonNumber(json, "resident_runs") == 7);
  CHECK(jsonNumber(json, "end_to_end_runs") == 7);
  // Throughput: one inference of the whole batch at a time.
  for (const std::string kind : {"resident", "end_to_end"}) {
    const double perSecond = jsonNumber(json, kind + "_inferences_per_s");
    CHECK(perSecond == doctest::Approx(1000 / jsonNumber(json, kind + "_mean_ms")).epsilon(1e-6));
    CHECK(jsonNumber(json, kind + "_images_per_s") == doctest::Approx(4 * perSecond).epsilon(1e-6));
  }
  // --warmup 0: no warm-up at all.
  r = cli("bench " + kFashion + " --warmup 0 --iterations 1 --json -");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(jsonNumber(r.output, "warmup_runs") == 0);
  CHECK(jsonNumber(r.output, "resident_p99_ms") == jsonNumber(r.output, "resident_min_ms"));
}

TEST_CASE("cli: bench's timing options refuse bad values, naming the option") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--warmup -1", "--warmup needs a whole number from 0"},
      {"--warmup x", "--warmup needs a whole number"},
      {"--warmup-duration -0.5", "--warmup-duration needs a number of at least 0, not '-0.5'"},
      {"--warmup-duration soon", "--warmup-duration needs a number"},
      {"--warmup-duration inf", "--warmup-duration needs a number"},
      {"--duration 0", "--duration needs a number of at least 0.001, not '0'"},
      {"--duration -3", "--duration needs a number"},
      {"--duration 1s", "--duration needs a number"},
      {"--iterations 0", "--iterations needs a whole number from 1"},
      {"--warmup 3 --warmup-duration 1", "--warmup and --warmup-duration exclude each other"},
      {"--iterations 3 --duration 1", "--iterations and --duration exclude each other"},
      {"--cold-only --warmup-duration 1", "--cold-only times the cold starts alone"},
      {"--warmup", "--warmup needs a value"},
  };
  for (const auto& [options, message] : cases) {
    Result r = cli("bench " + kFashion + " " + options);
    INFO(options, ": ", r.output);
    CHECK(r.status == 2);
    CHECK(r.has(message));
    CHECK_FALSE(r.has("GPU-resident"));
  }
}

TEST_CASE("cli: pictures are resized on the shorter side and centre-cropped, as torchvision") {
  // 40 x 20: red columns 0-9, green 10-29, blue 30-39. Resized to 18 x 9 (shorter side 9 =
  // 8 x 256/224) and cropped to the middle 8 x 8, whose filter taps all fall in the green band.
  const int w = 40, h = 20;
  std::vector<uint8_t> pixels(size_t(w) * h * 3, 0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      pixels[(size_t(y) * w + x) * 3 + (x < 10 ? 0 : x < 30 ? 1 : 2)] = 255;
  REQUIRE(stbi_write_png(file("bands.png").c_str(), w, h, 3, pixels.data(), w * 3));
  const std::string model = identityModel();
  Result r = cli("run " + model + " --input " + file("bands.png") +
                 " --no-normalize --fp32 --output " + file("crop.npy"));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  std::vector<float> crop = readNpyData(file("crop.npy"));
  REQUIRE(crop.size() == 192);
  for (size_t i = 0; i < 64; ++i) {
    CHECK(crop[i] == 0.0f);        // red
    CHECK(crop[64 + i] == 1.0f);   // green
    CHECK(crop[128 + i] == 0.0f);  // blue
  }
  // --stretch squeezes the whole picture in: red on the left, blue on the right.
  r = cli("run " + model + " --input " + file("bands.png") + " --no-normalize --fp32 --stretch " +
          "--output " + file("stretch.npy"));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  crop = readNpyData(file("stretch.npy"));
  CHECK(crop[0] == 1.0f);        // red at (0, 0)
  CHECK(crop[128 + 7] == 1.0f);  // blue at (0, 7)
  // --resize 8: 16 x 8, cropped at column 4: the filter reaches the red band at the left edge.
  r = cli("run " + model + " --input " + file("bands.png") + " --no-normalize --fp32 --resize 8 " +
          "--output " + file("resize8.npy"));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  crop = readNpyData(file("resize8.npy"));
  CHECK(crop[0] > 0.0f);
  CHECK(crop[0] < 0.5f);
  CHECK(crop[4] == 0.0f);
  // ImageNet normalisation by default: green (1 - 0.456) / 0.224.
  r = cli("run " + model + " --input " + file("bands.png") + " --fp32 --output " +
          file("normalized.npy"));
  REQUIRE_MESSAGE(r.status == 0, r.output);
  crop = readNpyData(file("normalized.npy"));
  CHECK(crop[64] == doctest::Approx((1 - 0.456) / 0.224).epsilon(1e-5));
  CHECK(cli("run " + model + " --input " + file("bands.png") + " --stretch --resize 9").status ==
        2);
}

#ifdef VKCNN_ONNX_CLASSIFY_SAMPLE
TEST_CASE("cli: the classification sample runs on Session") {
  std::vector<uint8_t> pixels(40 * 30);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t(i * 7);
  REQUIRE(stbi_write_png(file("grey.png").c_str(), 40, 30, 1, pixels.data(), 40));
  Result r =
      cli(kFashion + " " + file("grey.png"), VKCNN_SAMPLE_ENVIRONMENT, VKCNN_ONNX_CLASSIFY_SAMPLE);
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("  1. class "));
  CHECK(r.has("  5. class "));
  r = cli(kFashion + " " + file("missing.png"), VKCNN_SAMPLE_ENVIRONMENT,
          VKCNN_ONNX_CLASSIFY_SAMPLE);
  CHECK_MESSAGE(r.status == 1, r.output);
  CHECK(r.has("missing.png"));
  CHECK(cli("--help", VKCNN_SAMPLE_ENVIRONMENT, VKCNN_ONNX_CLASSIFY_SAMPLE).status == 0);
}
#endif

// The README's "A first run": the commands it shows, run as it shows them (with this test's
// paths), must print what it says.
TEST_CASE("cli: the README's first run") {
  const fs::path root = fs::path(kFashion).parent_path().parent_path().parent_path().parent_path();
  const std::string readme = slurp((root / "README.md").string());
  REQUIRE(readme.find("scripts/fashion-mnist-images.py /tmp/fashion.npy 4") != std::string::npos);
  REQUIRE(readme.find("build/engine/vkcnn run samples/fashion_mnist/weights/fashion_mnist.onnx") !=
          std::string::npos);
  REQUIRE(
      readme.find("--input /tmp/fashion.npy --labels samples/fashion_mnist/labels.txt --top 1") !=
      std::string::npos);
  Result r =
      cli(file("fashion.npy") + " 4", "", (root / "scripts" / "fashion-mnist-images.py").string());
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("image 0  class 9  Ankle boot"));
  r = cli("run " + kFashion + " --input " + file("fashion.npy") + " --labels " +
          (root / "samples" / "fashion_mnist" / "labels.txt").string() + " --top 1");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("output 'probabilities' [4, 10]"));
  for (const char* line : {"image 0  #1  class 9", "image 1  #1  class 2", "image 2  #1  class 1",
                           "image 3  #1  class 1"})
    CHECK(r.has(line));
  for (const char* label : {"%  Ankle boot\n", "%  Pullover\n", "%  Trouser\n"}) {
    CHECK(readme.find(label) != std::string::npos);
    CHECK(r.has(label));
  }
}

TEST_CASE("cli: cleanup") {
  fs::remove_all(directory());
}
