// vkcnn compile and the commands on its .vkcnn: compiled without a device, run bit-identically to
// the ONNX model, benchmarked and inspected; what it was compiled for is fixed, and the messages
// name the options. Run as a user runs the tool (support/cli_support.h).
#include <cstring>

#include "cli_support.h"

using namespace vkcnn::test;

namespace {

const std::string kFashion = VKCNN_FASHION_MNIST_ONNX;

}  // namespace

TEST_CASE("cli: compile writes a .vkcnn without a device; run and bench take it as the .onnx") {
  const std::string compiled = file("fashion.vkcnn");
  Result r = cli("compile " + kFashion + " -o " + compiled + " --fp32 --batch 2");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("fashion.vkcnn: "));
  const std::string in = file("fashion_compiled.npy");
  writeNpy(in, {2, 1, 28, 28}, randomFloats(2 * 784, 21, 0, 1));
  r = cli("run " + kFashion + " --fp32 --input " + in + " --output " + file("from_onnx.npy"));
  CHECK_MESSAGE(r.status == 0, r.output);
  r = cli("run " + compiled + " --input " + in + " --output " + file("from_vkcnn.npy"));
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("output 'probabilities' [2, 10]"));
  // Bit-identical to the ONNX model's run.
  for (const char* output : {"probabilities", "logits"}) {
    const std::vector<float> a = readNpyData(file(std::string("from_onnx_") + output + ".npy"));
    const std::vector<float> b = readNpyData(file(std::string("from_vkcnn_") + output + ".npy"));
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  }
  r = cli("bench " + compiled + " --iterations 2 --warmup 0");
  CHECK_MESSAGE(r.status == 0, r.output);
  r = cli("inspect " + compiled);  // no GPU: the provenance, inputs, the kernels as planned
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK(r.has("compiled model, format 1.0"));
  CHECK(r.has("from fashion_mnist.onnx (onnx, "));
  CHECK(r.has("kernels ("));
  // What it was compiled for is fixed; the messages name the option.
  r = cli("run " + compiled + " --fp16 --input " + in);
  CHECK(r.status == 2);
  CHECK(r.has("--fp16: " + compiled + " was compiled for fp32"));
  r = cli("run " + compiled + " --batch 3 --input " + in);
  CHECK(r.status == 2);
  CHECK(r.has("--batch 3"));
  r = cli("compile " + kFashion);
  CHECK(r.status == 2);
  CHECK(r.has("compile needs -o MODEL.vkcnn"));
  r = cli("compile " + kFashion + " -o " + file("nowhere/x.vkcnn"));
  CHECK(r.status != 0);
  CHECK(r.has("--output"));
}

TEST_CASE("cli compile: cleanup") {
  fs::remove_all(directory());
}
