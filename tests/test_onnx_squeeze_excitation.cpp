// Squeeze-and-excitation blocks as torchvision exports them (torchvision.ops.SqueezeExcitation:
// GlobalAveragePool, Conv 1x1, the inner activation, Conv 1x1, the gate, Mul(gate, x)), built with
// the onnx protobuf API: EfficientNet's (SiLU as Mul(h, Sigmoid(h)), Sigmoid), MobileNetV3's
// (Relu, HardSigmoid) and RegNetY's (Relu, Sigmoid), after a convolution with SiLU. The importer
// and the Graph fuse each into the pool and one SqueezeExcitation kernel, whose result matches
// the unfused graph's and a double-precision CPU reference, in float32 and float16.
#include <cmath>
#include <cstdlib>

#include "onnx_model_builder.h"
#include "scoped_choice.h"
#include "test_support.h"
#include "vkcnn/onnx.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

enum class Block { efficientnet, mobilenetV3, regnetY };

double sigmoid(double v) {
  return 1 / (1 + std::exp(-v));
}

struct Model {
  OnnxModelBuilder builder{13};
  std::vector<float> stemW, stemB, w1, b1, w2, b2;
};

// x [N, 3, H, W] -> Conv 3x3 (C) + SiLU -> SE (C -> R -> C) -> y.
void build(Model& m, Block block, uint32_t N, uint32_t C, uint32_t R, uint32_t H, uint32_t W) {
  OnnxModelBuilder& b = m.builder;
  m.stemW = randomFloats(size_t(C) * 3 * 9, 1, -0.4f, 0.4f);
  m.stemB = randomFloats(C, 2);
  m.w1 = randomFloats(size_t(R) * C, 3, -0.5f, 0.5f);
  m.b1 = randomFloats(R, 4);
  m.w2 = randomFloats(size_t(C) * R, 5, -0.8f, 0.8f);
  m.b2 = randomFloats(C, 6);
  b.input("input", {N, 3, H, W});
  b.initializer("stem.w", {C, 3, 3, 3}, m.stemW);
  b.initializer("stem.b", {C}, m.stemB);
  b.initializer("fc1.w", {R, C, 1, 1}, m.w1);
  b.initializer("fc1.b", {R}, m.b1);
  b.initializer("fc2.w", {C, R, 1, 1}, m.w2);
  b.initializer("fc2.b", {C}, m.b2);
  auto& stem = b.node("Conv", {"input", "stem.w", "stem.b"}, {"stem"}, "stem");
  setAttribute(stem, "kernel_shape", std::vector<int64_t>{3, 3});
  setAttribute(stem, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Sigmoid", {"stem"}, {"stem.sig"}, "stem.sigmoid");
  b.node("Mul", {"stem", "stem.sig"}, {"x"}, "stem.silu");
  b.node("GlobalAveragePool", {"x"}, {"pool"}, "se.avgpool");
  auto& fc1 = b.node("Conv", {"pool", "fc1.w", "fc1.b"}, {"h"}, "se.fc1");
  setAttribute(fc1, "kernel_shape", std::vector<int64_t>{1, 1});
  if (block == Block::efficientnet) {
    b.node("Sigmoid", {"h"}, {"h.sig"}, "se.activation.sigmoid");
    b.node("Mul", {"h", "h.sig"}, {"a"}, "se.activation");
  } else {
    b.node("Relu", {"h"}, {"a"}, "se.activation");
  }
  auto& fc2 = b.node("Conv", {"a", "fc2.w", "fc2.b"}, {"s"}, "se.fc2");
  setAttribute(fc2, "kernel_shape", std::vector<int64_t>{1, 1});
  if (block == Block::mobilenetV3) {
    auto& hs = b.node("HardSigmoid", {"s"}, {"g"}, "se.scale_activation");
    setAttribute(hs, "alpha", 1.f / 6.f);
    setAttribute(hs, "beta", 0.5f);
  } else {
    b.node("Sigmoid", {"s"}, {"g"}, "se.scale_activation");
  }
  b.node("Mul", {"g", "x"}, {"y"}, "se.mul");
  b.output("y", 4);
}

std::vector<double> reference(const Model& m, Block block, const std::vector<float>& in, uint32_t N,
                              uint32_t C, uint32_t R, uint32_t H, uint32_t W) {
  std::vector<double> x(size_t(N) * C * H * W), y(x.size());
  for (uint32_t n = 0; n < N; ++n)
    for (uint32_t o = 0; o < C; ++o)
      for (uint32_t i = 0; i < H; ++i)
        for (uint32_t j = 0; j < W; ++j) {
          double s = m.stemB[o];
          for (uint32_t c = 0; c < 3; ++c)
            for (int ki = 0; ki < 3; ++ki)
              for (int kj = 0; kj < 3; ++kj) {
                const int yi = int(i) + ki - 1, xj = int(j) + kj - 1;
                if (yi < 0 || xj < 0 || yi >= int(H) || xj >= int(W)) continue;
                s += double(m.stemW[((o * 3 + c) * 3 + ki) * 3 + kj]) *
                     in[((size_t(n) * 3 + c) * H + yi) * W + xj];
              }
          x[((size_t(n) * C + o) * H + i) * W + j] = s * sigmoid(s);
        }
  for (uint32_t n = 0; n < N; ++n) {
    std::vector<double> mean(C, 0.0), h(R);
    for (uint32_t c = 0; c < C; ++c)
      for (size_t k = 0; k < size_t(H) * W; ++k)
        mean[c] += x[(size_t(n) * C + c) * H * W + k] / (H * W);
    for (uint32_t j = 0; j < R; ++j) {
      double s = m.b1[j];
      for (uint32_t c = 0; c < C; ++c) s += double(m.w1[size_t(j) * C + c]) * mean[c];
      h[j] = block == Block::efficientnet ? s * sigmoid(s) : std::max(s, 0.0);
    }
    for (uint32_t c = 0; c < C; ++c) {
      double s = m.b2[c];
      for (uint32_t j = 0; j < R; ++j) s += double(m.w2[size_t(c) * R + j]) * h[j];
      const double g = block == Block::mobilenetV3 ? std::clamp(s / 6 + 0.5, 0.0, 1.0) : sigmoid(s);
      for (size_t k = 0; k < size_t(H) * W; ++k) {
        const size_t at = (size_t(n) * C + c) * H * W + k;
        y[at] = x[at] * g;
      }
    }
  }
  return y;
}

double relativeL2(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    num += (got[k] - want[k]) * (got[k] - want[k]);
    den += want[k] * want[k];
  }
  return std::sqrt(num / den);
}

struct Result {
  GraphStatistics statistics;
  std::vector<float> y;
};

Result run(const Model& m, ChannelFormat format, const std::vector<float>& input) {
  OnnxImportOptions options;
  options.channelFormat = format;
  OnnxImport imported = importOnnxModelFromMemory(context(), m.builder.bytes(), options);
  Image x = makeOnnxImage(context(), imported.info.inputs[0], input, ChannelFormat::float32);
  CommandBuffer cb(context());
  std::vector<Image> out = imported.graph.encode(cb, {x});
  cb.commit();
  cb.waitUntilCompleted();
  return {imported.graph.statistics(), readOnnxImage(out[0], imported.info.outputs[0])};
}

}  // namespace

TEST_CASE("onnx: torchvision squeeze-and-excitation blocks are fused and match unfused") {
  struct Shape {
    uint32_t N, C, R, H, W;
  };
  for (Block block : {Block::efficientnet, Block::mobilenetV3, Block::regnetY})
    for (const Shape& s : {Shape{1, 16, 4, 12, 10}, Shape{2, 37, 9, 5, 7}})
      for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
        CAPTURE(int(block));
        CAPTURE(s.C);
        CAPTURE(format);
        Model m;
        build(m, block, s.N, s.C, s.R, s.H, s.W);
        const std::vector<float> input = randomFloats(size_t(s.N) * 3 * s.H * s.W, 42);
        const std::vector<double> want = reference(m, block, input, s.N, s.C, s.R, s.H, s.W);
        const double limit = format == ChannelFormat::float32 ? 1e-5 : 5e-3;

        const Result fused = run(m, format, input);
        CHECK(fused.statistics.fusedSqueezeExcitations == 1);
        // The stem's SiLU and (EfficientNet) the block's own.
        CHECK(fused.statistics.fusedSilus == (block == Block::efficientnet ? 2u : 1u));
        CHECK(fused.statistics.kernels == 3);  // stem + SiLU, the pool, the excitation
        CHECK(relativeL2(fused.y, want) <= limit);

        Result plain;
        {
          ScopedFusion restore;
          forceFusion(&detail::Overrides::fuseSqueezeExcitation, false);
          plain = run(m, format, input);
        }
        CHECK(plain.statistics.fusedSqueezeExcitations == 0);
        CHECK(plain.statistics.kernels == 5);  // stem, pool, fc1 (+SiLU), fc2 + gate, mul
        CHECK(relativeL2(plain.y, want) <= limit);
        CHECK(relativeL2(fused.y, std::vector<double>(plain.y.begin(), plain.y.end())) <= limit);
      }
}
