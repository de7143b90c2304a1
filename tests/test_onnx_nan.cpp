// End to end: a NaN pixel through an imported ONNX model (Conv + Relu + MaxPool + Flatten + Gemm)
// gives NaN in every output it reaches, as PyTorch and onnxruntime do, in float32 and float16;
// the outputs it does not reach are those of the same input without the NaN. Before the NaN fixes
// (glsl/nan.glsl) a driver whose max() returns the non-NaN operand (NVIDIA's) gave relu(NaN) = 0
// and finite logits; the kernels' own NaN tests are in their families' files.
#include <cmath>

#include "onnx_model_builder.h"
#include "test_support.h"
#include "vkcnn/onnx.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// x [1, 3, 8, 8] -> Conv 3x3 pad 1 (4 channels) -> Relu -> MaxPool 2x2 -> p [1, 4, 4, 4]
// -> Flatten -> Gemm -> y [1, 5]. Outputs p and y.
OnnxModelBuilder model() {
  OnnxModelBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  addConvReluPool(b, "x", 3, randomFloats(4 * 3 * 9, 1), randomFloats(4, 2), "p");
  b.initializer("fc", {5, 64}, randomFloats(5 * 64, 3));
  b.node("Flatten", {"p"}, {"f"}, "flatten");
  auto& gemm = b.node("Gemm", {"f", "fc"}, {"y"}, "gemm");
  setAttribute(gemm, "transB", int64_t(1));
  b.output("p", {1, 4, 4, 4});
  b.output("y", {1, 5});
  return b;
}

std::vector<std::vector<float>> run(OnnxImport& imported, const std::vector<float>& input) {
  Image in = makeOnnxImage(context(), imported.info.inputs[0], input, ChannelFormat::float32);
  CommandBuffer cb(context());
  std::vector<Image> out = imported.graph.encode(cb, {in});
  cb.commit();
  cb.waitUntilCompleted();
  std::vector<std::vector<float>> values;
  for (size_t k = 0; k < out.size(); ++k)
    values.push_back(readOnnxImage(out[k], imported.info.outputs[k]));
  return values;
}

}  // namespace

TEST_CASE("onnx nan: a NaN pixel reaches every output it feeds, float32 and float16") {
  const std::vector<uint8_t> bytes = model().bytes();
  const std::vector<float> clean = randomFloats(3 * 8 * 8, 9, -1, 1);
  std::vector<float> poisoned = clean;
  poisoned[1 * 8 + 1] = NAN;  // channel 0, row 1, column 1
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    OnnxImportOptions options;
    options.channelFormat = format;
    OnnxImport imported = importOnnxModelFromMemory(context(), bytes, options);
    const auto want = run(imported, clean);
    const auto got = run(imported, poisoned);
    REQUIRE(got.size() == 2);
    // The NaN feeds convolution outputs of rows and columns 0..2 in every channel (a Winograd
    // tile of 2x2 outputs spreads it to 0..3), so pooled positions (0..1, 0..1): exactly those.
    for (uint32_t c = 0; c < 4; ++c)
      for (uint32_t y = 0; y < 4; ++y)
        for (uint32_t x = 0; x < 4; ++x) {
          const size_t i = (size_t(c) * 4 + y) * 4 + x;
          CAPTURE(c);
          CAPTURE(y);
          CAPTURE(x);
          if (y < 2 && x < 2)
            CHECK(std::isnan(got[0][i]));
          else
            CHECK(got[0][i] == want[0][i]);
        }
    // Every logit reads every pooled value.
    for (float v : got[1]) CHECK(std::isnan(v));
    for (float v : want[1]) CHECK(std::isfinite(v));
  }
}
