// ONNX import: small models built with the onnx protobuf API, imported, run on the device and
// compared with double-precision CPU references. Covers the attribute and input forms of the
// opsets, fusions (statistics), Flatten + Gemm weight ordering, dynamic dimensions with shape
// subgraphs, and the reshape/transpose patterns that map onto kernels.
#include <algorithm>
#include <cmath>

#include "onnx_model_builder.h"
#include "reference.h"
#include "test_support.h"
#include "vkcnn/onnx.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// ---- CPU references (NCHW, double) ----------------------------------------------------------

struct ConvParams {
  uint32_t m = 1, kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, groups = 1;
  uint32_t top = 0, left = 0, bottom = 0, right = 0;
};

// ONNX Conv: weights [M][C/g][kH][kW] (reference.h).
Tensor conv(const Tensor& x, const std::vector<float>& w, const std::vector<float>& b,
            const ConvParams& p) {
  ReferenceConvolution c;
  c.kernelWidth = p.kw, c.kernelHeight = p.kh;
  c.inputChannels = x.c, c.outputChannels = p.m, c.groups = p.groups;
  c.strideX = p.sw, c.strideY = p.sh, c.dilationX = p.dw, c.dilationY = p.dh;
  c.left = p.left, c.top = p.top;
  c.order = WeightOrder::onnx;
  return convolve(x, c, w, b, convolvedSize(x.h, p.top + p.bottom, p.kh, p.sh, p.dh),
                  convolvedSize(x.w, p.left + p.right, p.kw, p.sw, p.dw));
}

Tensor apply(Tensor t, double (*f)(double)) {
  for (double& v : t.data) v = f(v);
  return t;
}
double relu(double v) {
  return std::max(v, 0.0);
}

// Per-channel y = x * scale[c] + shift[c].
Tensor affine(Tensor t, const std::vector<double>& scale, const std::vector<double>& shift) {
  for (uint32_t n = 0; n < t.n; ++n)
    for (uint32_t c = 0; c < t.c; ++c)
      for (uint32_t y = 0; y < t.h; ++y)
        for (uint32_t x = 0; x < t.w; ++x)
          t.at(n, c, y, x) = t.at(n, c, y, x) * scale[c] + shift[c];
  return t;
}

std::vector<float> toFloats(const Tensor& t) {
  return std::vector<float>(t.data.begin(), t.data.end());
}

// Random values that float32 holds exactly, so references see what the device sees.
Tensor floatTensor(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t seed) {
  Tensor t = randomTensor(n, c, h, w, seed);
  for (double& v : t.data) v = double(float(v));
  return t;
}

double relativeL2(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    if (std::isnan(got[k])) return INFINITY;
    num += (got[k] - want[k]) * (got[k] - want[k]);
    den += want[k] * want[k];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// ---- running ---------------------------------------------------------------------------------

struct Result {
  OnnxImport imported;
  std::vector<std::vector<float>> outputs;
};

OnnxImportOptions float32Options() {
  OnnxImportOptions o;
  o.channelFormat = ChannelFormat::float32;
  return o;
}

Result run(const OnnxModelBuilder& builder, const std::vector<std::vector<float>>& inputs,
           const OnnxImportOptions& options = float32Options()) {
  const std::vector<uint8_t> bytes = builder.bytes();
  Result r{importOnnxModelFromMemory(context(), bytes, options), {}};
  REQUIRE(r.imported.info.inputs.size() == inputs.size());
  std::vector<Image> images;
  for (size_t k = 0; k < inputs.size(); ++k)
    images.push_back(
        makeOnnxImage(context(), r.imported.info.inputs[k], inputs[k], ChannelFormat::float32));
  CommandBuffer cb(context());
  std::vector<Image> out = r.imported.graph.encode(cb, images);
  cb.commit();
  cb.waitUntilCompleted();
  for (size_t k = 0; k < out.size(); ++k)
    r.outputs.push_back(readOnnxImage(out[k], r.imported.info.outputs[k]));
  return r;
}

std::vector<uint8_t> serialized(const OnnxModelBuilder& b) {
  return b.bytes();
}

}  // namespace

TEST_CASE("onnx import: Conv + BatchNormalization + Relu become one kernel") {
  for (int64_t opset : {9, 13, 17}) {
    CAPTURE(opset);
    OnnxModelBuilder b(opset);
    const ConvParams p{8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 1};
    const auto w = randomFloats(8 * 3 * 3 * 3, 1, -0.5f, 0.5f), bias = randomFloats(8, 2);
    const auto gamma = randomFloats(8, 3, 0.5f, 1.5f), beta = randomFloats(8, 4),
               mean = randomFloats(8, 5), var = randomFloats(8, 6, 0.5f, 2.f);
    b.input("x", {2, 3, 9, 7});
    b.initializer("W", {8, 3, 3, 3}, w);
    b.initializer("B", {8}, bias);
    for (auto [name, v] :
         {std::pair{"gamma", &gamma}, {"beta", &beta}, {"mean", &mean}, {"var", &var}})
      b.initializer(name, {8}, *v);
    auto& c = b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
    setAttribute(c, "kernel_shape", std::vector<int64_t>{3, 3});
    setAttribute(c, "strides", std::vector<int64_t>{2, 2});
    setAttribute(c, "pads", std::vector<int64_t>{1, 1, 0, 1});
    auto& bn = b.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"}, "bn");
    setAttribute(bn, "epsilon", 1e-3f);
    b.node("Relu", {"bn"}, {"y"}, "relu");
    b.output("y", 4);

    const Tensor x = floatTensor(2, 3, 9, 7, 7);
    Result r = run(b, {toFloats(x)});
    std::vector<double> scale(8), shift(8);
    for (int o = 0; o < 8; ++o) {
      scale[o] = gamma[o] / std::sqrt(double(var[o]) + 1e-3);
      shift[o] = beta[o] - scale[o] * mean[o];
    }
    const Tensor want = apply(affine(conv(x, w, bias, p), scale, shift), relu);
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{2, 8, 4, 4});
    CHECK(relativeL2(r.outputs[0], want.data) <= 1e-5);
    const GraphStatistics stats = r.imported.graph.statistics();
    CHECK(stats.kernels == 1);
    CHECK(stats.foldedBatchNormalizations == 1);
    CHECK(stats.fusedNeurons == 1);
    // The same unoptimised: three kernels, the same result.
    OnnxImportOptions plain = float32Options();
    plain.optimize = false;
    Result unoptimised = run(b, {toFloats(x)}, plain);
    CHECK(unoptimised.imported.graph.statistics().kernels == 3);
    CHECK(relativeL2(unoptimised.outputs[0], want.data) <= 1e-5);
  }
}

TEST_CASE("onnx import: BatchNormalization + Relu before a Conv (DenseNet) become one kernel") {
  // The convolution applies them as it reads (ConvolutionDescriptor::sourceActivation); its
  // padding still reads zero, not relu(shift).
  OnnxModelBuilder b(13);
  const ConvParams p{6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const auto w = randomFloats(6 * 5 * 3 * 3, 20, -0.5f, 0.5f);
  const auto gamma = randomFloats(5, 21, 0.5f, 1.5f), beta = randomFloats(5, 22, 0.2f, 0.8f),
             mean = randomFloats(5, 23), var = randomFloats(5, 24, 0.5f, 2.f);
  b.input("x", {2, 5, 7, 6});
  b.initializer("W", {6, 5, 3, 3}, w);
  for (auto [name, v] :
       {std::pair{"gamma", &gamma}, {"beta", &beta}, {"mean", &mean}, {"var", &var}})
    b.initializer(name, {5}, *v);
  auto& bn = b.node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"bn"}, "bn");
  setAttribute(bn, "epsilon", 1e-5f);
  b.node("Relu", {"bn"}, {"r"}, "relu");
  auto& c = b.node("Conv", {"r", "W"}, {"y"}, "conv");
  setAttribute(c, "kernel_shape", std::vector<int64_t>{3, 3});
  setAttribute(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.output("y", 4);
  const Tensor x = floatTensor(2, 5, 7, 6, 25);
  Result r = run(b, {toFloats(x)});
  std::vector<double> scale(5), shift(5);
  for (int k = 0; k < 5; ++k) {
    scale[k] = gamma[k] / std::sqrt(double(var[k]) + 1e-5);
    shift[k] = beta[k] - scale[k] * mean[k];
  }
  const Tensor want = conv(apply(affine(x, scale, shift), relu), w, {}, p);
  CHECK(relativeL2(r.outputs[0], want.data) <= 1e-5);
  const GraphStatistics stats = r.imported.graph.statistics();
  CHECK(stats.kernels == 1);
  CHECK(stats.fusedSourceActivations == 1);
}

TEST_CASE("onnx import: per-channel and scalar arithmetic after a convolution folds into it") {
  // Conv -> Mul [C,1,1] -> Add [1,C,1,1] -> Sub scalar -> Div scalar -> Relu: one kernel.
  OnnxModelBuilder b(13);
  const auto w = randomFloats(5 * 4, 10), k1 = randomFloats(5, 11, 0.5f, 2.f),
             k2 = randomFloats(5, 12);
  b.input("x", {1, 4, 6, 5});
  b.initializer("W", {5, 4, 1, 1}, w);
  b.initializer("k1", {5, 1, 1}, k1);
  b.initializer("k2", {1, 5, 1, 1}, k2);
  b.initializer("s", {}, {0.25f});
  b.initializer("d", {1}, {2.f});
  b.node("Conv", {"x", "W"}, {"c"});
  b.node("Mul", {"c", "k1"}, {"m"});
  b.node("Add", {"k2", "m"}, {"a"});
  b.node("Sub", {"a", "s"}, {"s2"});
  b.node("Div", {"s2", "d"}, {"q"});
  b.node("Relu", {"q"}, {"y"});
  b.output("y", 4);
  const Tensor x = floatTensor(1, 4, 6, 5, 13);
  Result r = run(b, {toFloats(x)});
  std::vector<double> scale(5), shift(5);
  for (int c = 0; c < 5; ++c) {
    scale[c] = k1[c] / 2.0;
    shift[c] = (k2[c] - 0.25) / 2.0;
  }
  const Tensor want = apply(affine(conv(x, w, {}, ConvParams{5}), scale, shift), relu);
  CHECK(relativeL2(r.outputs[0], want.data) <= 1e-5);
  CHECK(r.imported.graph.statistics().kernels == 1);

  // Without a convolution before it a scalar is a linear neuron, fused into an addition.
  OnnxModelBuilder b2(13);
  b2.input("x", {1, 3, 4, 4});
  b2.input("z", {1, 3, 4, 4});
  b2.initializer("h", {1}, {0.5f});
  b2.initializer("k", {3, 1, 1}, {1.f, -2.f, 3.f});
  b2.node("Add", {"x", "z"}, {"s"});
  b2.node("Mul", {"s", "h"}, {"m"});
  b2.node("Sub", {"k", "m"}, {"y"});  // constant minus image: per channel, scale -1
  b2.output("y", 4);
  const Tensor x2 = floatTensor(1, 3, 4, 4, 14), z2 = floatTensor(1, 3, 4, 4, 15);
  Result r2 = run(b2, {toFloats(x2), toFloats(z2)});
  std::vector<double> want2;
  for (size_t e = 0; e < x2.data.size(); ++e) {
    const double k[] = {1, -2, 3};
    want2.push_back(k[e / 16] - 0.5 * (x2.data[e] + z2.data[e]));
  }
  CHECK(relativeL2(r2.outputs[0], want2) <= 1e-6);
  CHECK(r2.imported.graph.statistics().kernels == 2);  // add (+ linear), per-channel affine
}

TEST_CASE("onnx import: Flatten or Reshape + Gemm / MatMul is a fully-connected layer") {
  // x [2, 5, 3, 4] flattened in CHW order; the fully-connected weights are re-ordered to MPS's
  // [out][h][w][in].
  const Tensor x = floatTensor(2, 5, 3, 4, 20);
  const uint32_t k = 60, m = 6;
  const auto bt = randomFloats(m * k, 21), bias = randomFloats(m, 22);
  auto reference = [&](bool transB, float alpha, float beta, bool withBias, bool reluAfter) {
    std::vector<double> y;
    for (uint32_t n = 0; n < 2; ++n)
      for (uint32_t o = 0; o < m; ++o) {
        double acc = 0;
        for (uint32_t kk = 0; kk < k; ++kk)
          acc += x.data[n * k + kk] * double(transB ? bt[o * k + kk] : bt[kk * m + o]);
        acc = alpha * acc + (withBias ? beta * bias[o] : 0.0);
        y.push_back(reluAfter ? std::max(acc, 0.0) : acc);
      }
    return y;
  };
  SUBCASE("Flatten + Gemm(transB, alpha, beta) + Relu") {
    OnnxModelBuilder b(11);
    b.input("x", {2, 5, 3, 4});
    b.initializer("B", {m, k}, bt);
    b.initializer("C", {m}, bias);
    auto& f = b.node("Flatten", {"x"}, {"f"});
    setAttribute(f, "axis", int64_t(1));
    auto& g = b.node("Gemm", {"f", "B", "C"}, {"g"});
    setAttribute(g, "transB", int64_t(1));
    setAttribute(g, "alpha", 0.5f);
    setAttribute(g, "beta", 2.f);
    b.node("Relu", {"g"}, {"y"});
    b.output("y", 2);
    Result r = run(b, {toFloats(x)});
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{2, 6});
    CHECK(r.imported.info.outputs[0].featureChannels == 6);
    CHECK(relativeL2(r.outputs[0], reference(true, 0.5f, 2.f, true, true)) <= 1e-5);
    CHECK(r.imported.graph.statistics().kernels == 1);
  }
  SUBCASE("Reshape to [N, -1] + MatMul + Add bias") {
    OnnxModelBuilder b(13);
    b.input("x", {2, 5, 3, 4});
    b.initializerInt64("shape", {2}, {0, -1});
    b.initializer("B", {k, m}, bt);
    b.initializer("bias", {m}, bias);
    b.node("Reshape", {"x", "shape"}, {"f"});
    b.node("MatMul", {"f", "B"}, {"mm"});
    b.node("Add", {"mm", "bias"}, {"y"});
    b.output("y", 2);
    Result r = run(b, {toFloats(x)});
    CHECK(relativeL2(r.outputs[0], reference(false, 1.f, 1.f, true, false)) <= 1e-5);
    CHECK(r.imported.graph.statistics().kernels == 1);  // the bias folds into the layer
  }
  SUBCASE("GlobalAveragePool + Flatten + Gemm + Softmax: a classifier head") {
    OnnxModelBuilder b(13);
    b.input("x", {2, 5, 3, 4});
    const auto w = randomFloats(7 * 5, 23);
    b.initializer("W", {7, 5}, w);
    b.node("GlobalAveragePool", {"x"}, {"p"});
    b.node("Flatten", {"p"}, {"f"});
    auto& g = b.node("Gemm", {"f", "W"}, {"g"});
    setAttribute(g, "transB", int64_t(1));
    auto& s = b.node("Softmax", {"g"}, {"y"});
    setAttribute(s, "axis", int64_t(1));
    b.output("y", 2);
    Result r = run(b, {toFloats(x)});
    std::vector<double> want;
    for (uint32_t n = 0; n < 2; ++n) {
      double logits[7], top = -1e300, total = 0;
      for (uint32_t o = 0; o < 7; ++o) {
        logits[o] = 0;
        for (uint32_t c = 0; c < 5; ++c) {
          double mean = 0;
          for (uint32_t p = 0; p < 12; ++p) mean += x.data[(n * 5 + c) * 12 + p];
          logits[o] += w[o * 5 + c] * mean / 12;
        }
        top = std::max(top, logits[o]);
      }
      for (double l : logits) total += std::exp(l - top);
      for (double l : logits) want.push_back(std::exp(l - top) / total);
    }
    CHECK(relativeL2(r.outputs[0], want) <= 1e-5);
  }
}

TEST_CASE("onnx import: attribute and input forms of each opset give the same results") {
  const Tensor x = floatTensor(2, 6, 5, 8, 30);
  std::vector<double> xd(x.data.begin(), x.data.end());
  SUBCASE("Clip: min/max attributes before opset 11, inputs from 11") {
    auto want = xd;
    for (double& v : want) v = std::clamp(v, -0.5, 0.25);
    OnnxModelBuilder a(6);
    a.input("x", {2, 6, 5, 8});
    auto& c = a.node("Clip", {"x"}, {"y"});
    setAttribute(c, "min", -0.5f);
    setAttribute(c, "max", 0.25f);
    a.output("y", 4);
    CHECK(relativeL2(run(a, {toFloats(x)}).outputs[0], want) <= 1e-6);
    OnnxModelBuilder b(13);
    b.input("x", {2, 6, 5, 8});
    b.initializer("lo", {}, {-0.5f});
    b.initializer("hi", {}, {0.25f});
    b.node("Clip", {"x", "lo", "hi"}, {"y"});
    b.output("y", 4);
    CHECK(relativeL2(run(b, {toFloats(x)}).outputs[0], want) <= 1e-6);
    // Only a minimum of 0 is a ReLU.
    OnnxModelBuilder c2(13);
    c2.input("x", {2, 6, 5, 8});
    c2.initializer("lo", {}, {0.f});
    c2.node("Clip", {"x", "lo"}, {"y"});
    c2.output("y", 4);
    auto relued = xd;
    for (double& v : relued) v = std::max(v, 0.0);
    CHECK(relativeL2(run(c2, {toFloats(x)}).outputs[0], relued) <= 1e-6);
  }
  SUBCASE("Slice: attributes before opset 10, inputs from 10 (channels and width)") {
    // Channels [1, 4), columns [2, 7) with a negative end.
    std::vector<double> want;
    for (uint32_t n = 0; n < 2; ++n)
      for (uint32_t c = 1; c < 4; ++c)
        for (uint32_t y = 0; y < 5; ++y)
          for (uint32_t xx = 2; xx < 7; ++xx) want.push_back(x.at(n, c, y, xx));
    OnnxModelBuilder a(9);
    a.input("x", {2, 6, 5, 8});
    auto& s = a.node("Slice", {"x"}, {"y"});
    setAttribute(s, "starts", std::vector<int64_t>{1, 2});
    setAttribute(s, "ends", std::vector<int64_t>{4, -1});
    setAttribute(s, "axes", std::vector<int64_t>{1, 3});
    a.output("y", 4);
    Result ra = run(a, {toFloats(x)});
    CHECK(ra.imported.info.outputs[0].dims == std::vector<int64_t>{2, 3, 5, 5});
    CHECK(relativeL2(ra.outputs[0], want) <= 1e-7);
    OnnxModelBuilder b(13);
    b.input("x", {2, 6, 5, 8});
    b.initializerInt64("starts", {2}, {2, 1});
    b.initializerInt64("ends", {2}, {-1, 4});
    b.initializerInt64("axes", {2}, {-1, 1});
    b.initializerInt64("steps", {2}, {1, 1});
    b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
    b.output("y", 4);
    CHECK(relativeL2(run(b, {toFloats(x)}).outputs[0], want) <= 1e-7);
  }
  SUBCASE("Split: the split attribute before opset 13, an input from 13; then Concat") {
    for (int64_t opset : {11, 13}) {
      CAPTURE(opset);
      OnnxModelBuilder b(opset);
      b.input("x", {2, 6, 5, 8});
      if (opset >= 13) b.initializerInt64("split", {3}, {1, 3, 2});
      auto& s = b.node(
          "Split",
          opset >= 13 ? std::vector<std::string>{"x", "split"} : std::vector<std::string>{"x"},
          {"a", "b", "c"});
      setAttribute(s, "axis", int64_t(1));
      if (opset < 13) setAttribute(s, "split", std::vector<int64_t>{1, 3, 2});
      // Reordered concatenation: c, a, b.
      auto& cat = b.node("Concat", {"c", "a", "b"}, {"y"});
      setAttribute(cat, "axis", int64_t(1));
      b.output("b", 4);
      b.output("y", 4);
      Result r = run(b, {toFloats(x)});
      std::vector<double> wantB, wantY;
      const uint32_t order[] = {4, 5, 0, 1, 2, 3};
      for (uint32_t n = 0; n < 2; ++n) {
        for (uint32_t c = 1; c < 4; ++c)
          for (uint32_t p = 0; p < 40; ++p) wantB.push_back(x.data[(n * 6 + c) * 40 + p]);
        for (uint32_t c : order)
          for (uint32_t p = 0; p < 40; ++p) wantY.push_back(x.data[(n * 6 + c) * 40 + p]);
      }
      CHECK(relativeL2(r.outputs[0], wantB) <= 1e-7);
      CHECK(relativeL2(r.outputs[1], wantY) <= 1e-7);
    }
  }
  SUBCASE("Squeeze / Unsqueeze: axes attribute before opset 13, input from 13") {
    for (int64_t opset : {11, 13}) {
      CAPTURE(opset);
      OnnxModelBuilder b(opset);
      b.input("x", {2, 6, 5, 8});
      if (opset >= 13) b.initializerInt64("axes", {2}, {2, 3});
      b.node("GlobalMaxPool", {"x"}, {"p"});
      auto& sq = b.node(
          "Squeeze",
          opset >= 13 ? std::vector<std::string>{"p", "axes"} : std::vector<std::string>{"p"},
          {"s"});
      if (opset < 13) setAttribute(sq, "axes", std::vector<int64_t>{2, 3});
      auto& un = b.node(
          "Unsqueeze",
          opset >= 13 ? std::vector<std::string>{"s", "axes"} : std::vector<std::string>{"s"},
          {"u"});
      if (opset < 13) setAttribute(un, "axes", std::vector<int64_t>{2, 3});
      b.node("Relu", {"s"}, {"y"});
      b.output("y", 2);
      b.output("u", 4);
      Result r = run(b, {toFloats(x)});
      std::vector<double> want;
      for (uint32_t p = 0; p < 12; ++p)
        want.push_back(*std::max_element(x.data.begin() + p * 40, x.data.begin() + p * 40 + 40));
      CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{2, 6});
      CHECK(r.imported.info.outputs[1].dims == std::vector<int64_t>{2, 6, 1, 1});
      auto relued = want;
      for (double& v : relued) v = std::max(v, 0.0);
      CHECK(relativeL2(r.outputs[0], relued) <= 1e-7);
      CHECK(relativeL2(r.outputs[1], want) <= 1e-7);
    }
  }
  SUBCASE("ReduceMean (axes attribute) and ReduceSum (axes input from opset 13)") {
    std::vector<double> mean;
    for (uint32_t p = 0; p < 12; ++p) {
      double s = 0;
      for (uint32_t e = 0; e < 40; ++e) s += x.data[p * 40 + e];
      mean.push_back(s / 40);
    }
    for (int64_t opset : {11, 13}) {
      CAPTURE(opset);
      OnnxModelBuilder b(opset);
      b.input("x", {2, 6, 5, 8});
      auto& rm = b.node("ReduceMean", {"x"}, {"m"});
      setAttribute(rm, "axes", std::vector<int64_t>{-2, -1});
      setAttribute(rm, "keepdims", int64_t(0));
      if (opset >= 13) b.initializerInt64("axes", {2}, {2, 3});
      auto& rs = b.node(
          "ReduceSum",
          opset >= 13 ? std::vector<std::string>{"x", "axes"} : std::vector<std::string>{"x"},
          {"s"});
      if (opset < 13) setAttribute(rs, "axes", std::vector<int64_t>{2, 3});
      // Over channels: a 1x1 convolution to one channel.
      auto& rc = b.node("ReduceMean", {"x"}, {"c"});
      setAttribute(rc, "axes", std::vector<int64_t>{1});
      b.output("m", 2);
      b.output("s", 4);
      b.output("c", 4);
      Result r = run(b, {toFloats(x)});
      CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{2, 6});
      CHECK(r.imported.info.outputs[1].dims == std::vector<int64_t>{2, 6, 1, 1});
      CHECK(r.imported.info.outputs[2].dims == std::vector<int64_t>{2, 1, 5, 8});
      auto sum = mean;
      for (double& v : sum) v *= 40;
      std::vector<double> channelMean;
      for (uint32_t n = 0; n < 2; ++n)
        for (uint32_t p = 0; p < 40; ++p) {
          double s = 0;
          for (uint32_t c = 0; c < 6; ++c) s += x.data[(n * 6 + c) * 40 + p];
          channelMean.push_back(s / 6);
        }
      CHECK(relativeL2(r.outputs[0], mean) <= 1e-5);
      CHECK(relativeL2(r.outputs[1], sum) <= 1e-5);
      CHECK(relativeL2(r.outputs[2], channelMean) <= 1e-5);
    }
  }
  SUBCASE("Softmax: before opset 13 the axis flattens; from 13 it is one axis") {
    auto channelSoftmax = [&](bool log) {
      std::vector<double> y(xd.size());
      for (uint32_t n = 0; n < 2; ++n)
        for (uint32_t p = 0; p < 40; ++p) {
          double top = -1e300, total = 0;
          for (uint32_t c = 0; c < 6; ++c) top = std::max(top, xd[(n * 6 + c) * 40 + p]);
          for (uint32_t c = 0; c < 6; ++c) total += std::exp(xd[(n * 6 + c) * 40 + p] - top);
          for (uint32_t c = 0; c < 6; ++c) {
            const double v = xd[(n * 6 + c) * 40 + p] - top;
            y[(n * 6 + c) * 40 + p] = log ? v - std::log(total) : std::exp(v) / total;
          }
        }
      return y;
    };
    OnnxModelBuilder b(13);
    b.input("x", {2, 6, 5, 8});
    auto& s = b.node("Softmax", {"x"}, {"y"});
    setAttribute(s, "axis", int64_t(1));
    auto& l = b.node("LogSoftmax", {"x"}, {"l"});
    setAttribute(l, "axis", int64_t(-3));
    b.output("y", 4);
    b.output("l", 4);
    Result r = run(b, {toFloats(x)});
    CHECK(relativeL2(r.outputs[0], channelSoftmax(false)) <= 1e-5);
    CHECK(relativeL2(r.outputs[1], channelSoftmax(true)) <= 1e-5);
    // Opset 11, axis 1 of [N, C, H, W]: one softmax over C*H*W, on a [N, C*H*W] Tensor.
    OnnxModelBuilder old(11);
    old.input("x", {2, 6, 5, 8});
    auto& so = old.node("Softmax", {"x"}, {"y"}, "flat softmax");
    setAttribute(so, "axis", int64_t(1));
    old.output("y", 4);
    std::vector<double> flat(xd.size());
    for (size_t n = 0; n < 2; ++n) {
      const size_t row = xd.size() / 2;
      double top = -1e300, total = 0;
      for (size_t k = 0; k < row; ++k) top = std::max(top, xd[n * row + k]);
      for (size_t k = 0; k < row; ++k) total += std::exp(xd[n * row + k] - top);
      for (size_t k = 0; k < row; ++k) flat[n * row + k] = std::exp(xd[n * row + k] - top) / total;
    }
    Result fr = run(old, {toFloats(x)});
    CHECK(relativeL2(fr.outputs[0], flat) <= 1e-5);
    // Opset 11 axis 2 of [N, C, H, W] is the whole plane: max, exp, mean, divide.
    OnnxModelBuilder plane(11);
    plane.input("x", {2, 6, 5, 8});
    auto& sp = plane.node("Softmax", {"x"}, {"y"});
    setAttribute(sp, "axis", int64_t(2));
    plane.output("y", 4);
    Result rp = run(plane, {toFloats(x)});
    std::vector<double> want(xd.size());
    for (uint32_t q = 0; q < 12; ++q) {
      double top = -1e300, total = 0;
      for (uint32_t e = 0; e < 40; ++e) top = std::max(top, xd[q * 40 + e]);
      for (uint32_t e = 0; e < 40; ++e) total += std::exp(xd[q * 40 + e] - top);
      for (uint32_t e = 0; e < 40; ++e) want[q * 40 + e] = std::exp(xd[q * 40 + e] - top) / total;
    }
    CHECK(relativeL2(rp.outputs[0], want) <= 1e-5);
  }
  SUBCASE("Dropout and Identity disappear; legacy broadcast attributes (opset 6)") {
    OnnxModelBuilder b(6);
    b.input("x", {2, 6, 5, 8});
    b.initializer("k", {6}, {1, 2, 3, 4, 5, 6});
    auto& d = b.node("Dropout", {"x"}, {"d"});
    setAttribute(d, "is_test", int64_t(1));
    b.node("Identity", {"d"}, {"i"});
    auto& m = b.node("Mul", {"i", "k"}, {"y"});
    setAttribute(m, "broadcast", int64_t(1));
    setAttribute(m, "axis", int64_t(1));
    b.output("y", 4);
    Result r = run(b, {toFloats(x)});
    auto want = xd;
    for (size_t e = 0; e < want.size(); ++e) want[e] *= double((e / 40) % 6 + 1);
    CHECK(relativeL2(r.outputs[0], want) <= 1e-7);
    CHECK(r.imported.graph.statistics().kernels == 1);
  }
}

// ---- Pad, Resize and Upsample -----------------------------------------------------------------

namespace {

// ONNX Pad on H and W (numpy.pad): constant, edge (clamp) or reflect (mirror without repeating
// the edge); negative amounts crop.
Tensor padReference(const Tensor& x, const std::string& mode, int top, int left, int bottom,
                    int right, double value) {
  Tensor y(x.n, x.c, uint32_t(int(x.h) + top + bottom), uint32_t(int(x.w) + left + right));
  const auto source = [&](int v, int size, bool& outside) {
    if (v >= 0 && v < size) return v;
    outside = true;
    if (mode == "edge") return std::clamp(v, 0, size - 1);
    if (mode == "reflect") return v < 0 ? -v : 2 * (size - 1) - v;
    return 0;
  };
  for (uint32_t n = 0; n < y.n; ++n)
    for (uint32_t c = 0; c < y.c; ++c)
      for (uint32_t yy = 0; yy < y.h; ++yy)
        for (uint32_t xx = 0; xx < y.w; ++xx) {
          bool outside = false;
          const int sy = source(int(yy) - top, int(x.h), outside);
          const int sx = source(int(xx) - left, int(x.w), outside);
          y.at(n, c, yy, xx) =
              outside && mode == "constant" ? value : x.at(n, c, uint32_t(sy), uint32_t(sx));
        }
  return y;
}

// ONNX Resize on H and W with the scale out/in: the coordinate transformation in double (the
// products and quotients of these small integers are exact, so ties are exact), then nearest
// rounding or linear interpolation between coordinates clamped to the image.
Tensor resizeReference(const Tensor& x, uint32_t oh, uint32_t ow, const std::string& mode,
                       const std::string& transformation, const std::string& nearestMode) {
  const auto coordinate = [&](double o, double in, double out) {
    if (transformation == "half_pixel") return (o + 0.5) * in / out - 0.5;
    if (transformation == "pytorch_half_pixel") return out > 1 ? (o + 0.5) * in / out - 0.5 : 0.0;
    if (transformation == "align_corners") return out > 1 ? o * (in - 1) / (out - 1) : 0.0;
    if (transformation == "tf_half_pixel_for_nn") return (o + 0.5) * in / out;
    return o * in / out;  // asymmetric
  };
  const auto nearest = [&](double v, uint32_t in) {
    double r;
    if (nearestMode == "round_prefer_ceil")
      r = std::floor(v + 0.5);
    else if (nearestMode == "floor")
      r = std::floor(v);
    else if (nearestMode == "ceil")
      r = std::ceil(v);
    else
      r = std::ceil(v - 0.5);
    return uint32_t(std::clamp(r, 0.0, double(in - 1)));
  };
  Tensor y(x.n, x.c, oh, ow);
  for (uint32_t n = 0; n < y.n; ++n)
    for (uint32_t c = 0; c < y.c; ++c)
      for (uint32_t yy = 0; yy < oh; ++yy)
        for (uint32_t xx = 0; xx < ow; ++xx) {
          const double cy = coordinate(yy, x.h, oh), cx = coordinate(xx, x.w, ow);
          if (mode == "nearest") {
            y.at(n, c, yy, xx) = x.at(n, c, nearest(cy, x.h), nearest(cx, x.w));
            continue;
          }
          const double fy = std::clamp(cy, 0.0, double(x.h - 1));
          const double fx = std::clamp(cx, 0.0, double(x.w - 1));
          const uint32_t y0 = uint32_t(fy), x0 = uint32_t(fx);
          const uint32_t y1 = std::min(y0 + 1, x.h - 1), x1 = std::min(x0 + 1, x.w - 1);
          const double ty = fy - y0, tx = fx - x0;
          y.at(n, c, yy, xx) =
              (1 - ty) * ((1 - tx) * x.at(n, c, y0, x0) + tx * x.at(n, c, y0, x1)) +
              ty * ((1 - tx) * x.at(n, c, y1, x0) + tx * x.at(n, c, y1, x1));
        }
  return y;
}

void checkAgainst(const Result& r, const Tensor& want, double limit = 1e-6) {
  REQUIRE(r.outputs.size() == 1);
  const std::vector<int64_t> dims = {int64_t(want.n), int64_t(want.c), int64_t(want.h),
                                     int64_t(want.w)};
  CHECK(r.imported.info.outputs[0].dims == dims);
  CHECK(relativeL2(r.outputs[0], want.data) <= limit);
}

}  // namespace

TEST_CASE("onnx import: Pad in the attribute (opset 2) and input (opset 11+) forms") {
  const Tensor x = floatTensor(2, 5, 6, 7, 300);
  struct Case {
    std::string mode;
    int top, left, bottom, right;
    float value;
  };
  const std::vector<Case> cases = {{"constant", 1, 2, 3, 0, 1.5f},
                                   {"edge", 2, 1, 0, 3, 0},
                                   {"reflect", 3, 5, 2, 6, 0},
                                   {"constant", -1, 2, 1, -3, -2}};
  SUBCASE("constant, edge, reflect; cropping") {
    for (const Case& c : cases) {
      CAPTURE(c.mode);
      CAPTURE(c.top);
      const Tensor want = padReference(x, c.mode, c.top, c.left, c.bottom, c.right, c.value);
      const std::vector<int64_t> pads = {0, 0, c.top, c.left, 0, 0, c.bottom, c.right};
      {
        OnnxModelBuilder b(2);
        b.input("x", {2, 5, 6, 7});
        auto& p = b.node("Pad", {"x"}, {"y"});
        setAttribute(p, "pads", pads);
        setAttribute(p, "mode", c.mode);
        if (c.value != 0) setAttribute(p, "value", c.value);
        b.output("y", 4);
        checkAgainst(run(b, {toFloats(x)}), want, 0);
      }
      for (int64_t opset : {11, 13}) {
        CAPTURE(opset);
        OnnxModelBuilder b(opset);
        b.input("x", {2, 5, 6, 7});
        b.initializerInt64("pads", {8}, pads);
        std::vector<std::string> inputs = {"x", "pads"};
        if (c.value != 0) {
          b.initializer("value", {}, {c.value});
          inputs.push_back("value");
        }
        setAttribute(b.node("Pad", inputs, {"y"}), "mode", c.mode);
        b.output("y", 4);
        checkAgainst(run(b, {toFloats(x)}), want, 0);
      }
    }
  }
  SUBCASE("rank 3 pads the length") {
    const Tensor x3 = floatTensor(1, 3, 9, 1, 301);
    OnnxModelBuilder b(13);
    b.input("x", {1, 3, 9});
    b.initializerInt64("pads", {6}, {0, 0, 2, 0, 0, 4});
    setAttribute(b.node("Pad", {"x", "pads"}, {"y"}), "mode", std::string("reflect"));
    b.output("y", 3);
    Result r = run(b, {toFloats(x3)});
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{1, 3, 15});
    CHECK(relativeL2(r.outputs[0], padReference(x3, "reflect", 2, 0, 4, 0, 0).data) == 0);
  }
  SUBCASE("what the image kernel cannot do runs on the Tensor") {
    const Tensor x4 = floatTensor(1, 2, 4, 4, 302);
    const std::vector<double> xv(x4.data.begin(), x4.data.end());
    // Channels padded: [1, 4, 4, 4], zero channels around the two.
    OnnxModelBuilder pc(10);
    pc.input("x", {1, 2, 4, 4});
    setAttribute(pc.node("Pad", {"x"}, {"y"}, "padc"), "pads",
                 std::vector<int64_t>{0, 1, 0, 0, 0, 1, 0, 0});
    pc.output("y", 4);
    Result rc = run(pc, {toFloats(x4)});
    CHECK(rc.imported.info.outputs[0].dims == std::vector<int64_t>{1, 4, 4, 4});
    std::vector<double> wantC(64, 0.0);
    for (size_t k = 0; k < 32; ++k) wantC[16 + k] = xv[k];
    CHECK(relativeL2(rc.outputs[0], wantC) == 0);
    // Reflecting 4 columns of 4 reflects twice (numpy): columns 0 1 2 3 padded left by 4 are
    // 2 3 2 1 | 0 1 2 3 after numpy's repeated reflection.
    OnnxModelBuilder rf(13);
    rf.input("x", {1, 2, 4, 4});
    rf.initializerInt64("pads", {8}, {0, 0, 0, 4, 0, 0, 0, 0});
    setAttribute(rf.node("Pad", {"x", "pads"}, {"y"}, "padr"), "mode", std::string("reflect"));
    rf.output("y", 4);
    Result rr = run(rf, {toFloats(x4)});
    CHECK(rr.imported.info.outputs[0].dims == std::vector<int64_t>{1, 2, 4, 8});
    std::vector<double> wantR;
    const int reflected[8] = {2, 3, 2, 1, 0, 1, 2, 3};
    for (size_t row = 0; row < 8; ++row)
      for (int c : reflected) wantR.push_back(xv[row * 4 + size_t(c)]);
    CHECK(relativeL2(rr.outputs[0], wantR) == 0);
  }
}
TEST_CASE("onnx import: Resize (opsets 10, 11, 13) and Upsample (opsets 7, 9)") {
  const Tensor x = floatTensor(2, 5, 5, 7, 310);
  SUBCASE("Upsample 9 and Resize 10: scales, asymmetric coordinates, floor") {
    for (const std::string mode : {"nearest", "linear"}) {
      CAPTURE(mode);
      const Tensor want = resizeReference(x, 10, 21, mode, "asymmetric", "floor");
      OnnxModelBuilder u(9);
      u.input("x", {2, 5, 5, 7});
      u.initializer("scales", {4}, {1, 1, 2, 3});
      setAttribute(u.node("Upsample", {"x", "scales"}, {"y"}), "mode", mode);
      u.output("y", 4);
      checkAgainst(run(u, {toFloats(x)}), want);
      OnnxModelBuilder r(10);
      r.input("x", {2, 5, 5, 7});
      r.initializer("scales", {4}, {1, 1, 2, 3});
      setAttribute(r.node("Resize", {"x", "scales"}, {"y"}), "mode", mode);
      r.output("y", 4);
      checkAgainst(run(r, {toFloats(x)}), want);
    }
    // Upsample 7 takes the scales as an attribute and calls linear "bilinear".
    OnnxModelBuilder u7(7);
    u7.input("x", {2, 5, 5, 7});
    auto& n = u7.node("Upsample", {"x"}, {"y"});
    setAttribute(n, "scales", std::vector<float>{1, 1, 3, 2});
    setAttribute(n, "mode", std::string("bilinear"));
    u7.output("y", 4);
    checkAgainst(run(u7, {toFloats(x)}), resizeReference(x, 15, 14, "linear", "asymmetric", ""));
  }
  struct Case {
    std::string mode, transformation, nearestMode;
    uint32_t oh, ow;
    bool sizes;
  };
  const std::vector<Case> cases = {
      // nn.Upsample(scale_factor=2, mode='nearest') as PyTorch exports it.
      {"nearest", "asymmetric", "floor", 10, 14, false},
      {"linear", "half_pixel", "", 10, 21, false},
      {"linear", "half_pixel", "", 8, 11, true},
      {"linear", "half_pixel", "", 3, 4, true},  // downsampling
      {"linear", "align_corners", "", 9, 13, true},
      {"linear", "pytorch_half_pixel", "", 1, 12, true},
      {"nearest", "half_pixel", "round_prefer_floor", 8, 11, true},
      {"nearest", "half_pixel", "round_prefer_ceil", 15, 21, false},
      {"nearest", "align_corners", "round_prefer_floor", 9, 12, true},
      {"nearest", "tf_half_pixel_for_nn", "ceil", 4, 5, true},
      {"nearest", "asymmetric", "round_prefer_ceil", 10, 3, true},
  };
  SUBCASE("Resize 11 and 13: scales and sizes, every coordinate transformation") {
    for (const Case& c : cases) {
      for (int64_t opset : {11, 13}) {
        CAPTURE(opset);
        CAPTURE(c.mode);
        CAPTURE(c.transformation);
        CAPTURE(c.nearestMode);
        CAPTURE(c.oh);
        CAPTURE(c.ow);
        OnnxModelBuilder b(opset);
        b.input("x", {2, 5, 5, 7});
        // Opset 11 requires roi and scales inputs (empty when unused); 13 lets them be omitted.
        std::vector<std::string> inputs = {"x", opset == 11 ? "roi" : ""};
        if (opset == 11) b.initializer("roi", {0}, {});
        if (c.sizes) {
          if (opset == 11) b.initializer("scales", {0}, {});
          b.initializerInt64("sizes", {4}, {2, 5, c.oh, c.ow});
          inputs.push_back(opset == 11 ? "scales" : "");
          inputs.push_back("sizes");
        } else {
          b.initializer("scales", {4}, {1, 1, float(c.oh) / 5, float(c.ow) / 7});
          inputs.push_back("scales");
        }
        auto& n = b.node("Resize", inputs, {"y"});
        setAttribute(n, "mode", c.mode);
        setAttribute(n, "coordinate_transformation_mode", c.transformation);
        if (!c.nearestMode.empty()) setAttribute(n, "nearest_mode", c.nearestMode);
        b.output("y", 4);
        checkAgainst(run(b, {toFloats(x)}),
                     resizeReference(x, c.oh, c.ow, c.mode, c.transformation,
                                     c.nearestMode.empty() ? "round_prefer_floor" : c.nearestMode));
      }
    }
  }
  SUBCASE("what the image kernel cannot do runs on the Tensor") {
    const auto model = [](const std::string& mode, const std::string& transformation,
                          std::vector<float> scales) {
      OnnxModelBuilder b(13);
      b.input("x", {1, 2, 5, 5});
      b.initializer("scales", {4}, scales);
      auto& n = b.node("Resize", {"x", "", "scales"}, {"y"}, "rs");
      setAttribute(n, "mode", mode);
      setAttribute(n, "coordinate_transformation_mode", transformation);
      b.output("y", 4);
      return serialized(b);
    };
    // Cubic, crop-and-resize, the channels resized, and 5 * 0.7 = 3.5 floored to 3 (ONNX maps
    // with 0.7, align_corners with the length 3.5; the image kernel would map with 3/5): the Tensor
    // resize (tests/test_tensor_resize.cpp checks its values; here the routing and the shapes).
    struct Case {
      const char *mode, *transformation;
      std::vector<float> scales;
      std::vector<int64_t> dims;
    };
    for (const Case& c : std::vector<Case>{
             {"cubic", "half_pixel", {1, 1, 2, 2}, {1, 2, 10, 10}},
             {"linear", "tf_crop_and_resize", {1, 1, 2, 2}, {1, 2, 10, 10}},
             {"linear", "half_pixel", {1, 2, 2, 2}, {1, 4, 10, 10}},
             {"linear", "half_pixel", {1, 1, 2, 0.7f}, {1, 2, 10, 3}},
             {"linear", "align_corners", {1, 1, 2, 0.7f}, {1, 2, 10, 3}},
             {"linear", "asymmetric", {1, 1, 2, 0.7f}, {1, 2, 10, 3}},
         }) {
      CAPTURE(c.mode);
      CAPTURE(c.transformation);
      if (std::string(c.transformation) == "tf_crop_and_resize") {
        // Needs a roi: the whole image.
        OnnxModelBuilder b(13);
        b.input("x", {1, 2, 5, 5});
        b.initializer("roi", {8}, {0, 0, 0, 0, 1, 1, 1, 1});
        b.initializer("scales", {4}, c.scales);
        auto& n = b.node("Resize", {"x", "roi", "scales"}, {"y"}, "rs");
        setAttribute(n, "mode", std::string(c.mode));
        setAttribute(n, "coordinate_transformation_mode", std::string(c.transformation));
        b.output("y", 4);
        OnnxImport i = importOnnxModelFromMemory(context(), serialized(b), float32Options());
        CHECK(i.info.outputs[0].dims == c.dims);
        continue;
      }
      OnnxImport i = importOnnxModelFromMemory(context(), model(c.mode, c.transformation, c.scales),
                                               float32Options());
      CHECK(i.info.outputs[0].dims == c.dims);
      i.graph.compile();
      CHECK(i.graph.statistics().conversions == 2);
    }
    CHECK_NOTHROW(importOnnxFromMemory(context(), model("linear", "half_pixel", {1, 1, 2, 0.6f})));
    OnnxModelBuilder u(8);
    u.input("x", {1, 2, 4, 4});
    setAttribute(u.node("Upsample", {"x"}, {"y"}, "up8"), "scales", std::vector<float>{1, 1, 0, 2});
    u.output("y", 4);
    VKCNN_CHECK_ERROR(importOnnxFromMemory(context(), serialized(u)), ErrorCode::invalidModel,
                      "node 'up8' (Upsample, opset 8): a scale is not positive");
  }
}

TEST_CASE("onnx import: dynamic dimensions take the sizes given at load; shape subgraphs fold") {
  // y = Reshape(Conv(x), [Shape(c)[0], -1]) built from Shape -> Gather -> Unsqueeze -> Concat.
  OnnxModelBuilder b(13);
  b.input("x", {-1, 4, -1, -1}, onnx::TensorProto::FLOAT, {"N", "", "H", "W"});
  const auto w = randomFloats(6 * 4 * 9, 40);
  b.initializer("W", {6, 4, 3, 3}, w);
  b.initializerInt64("zero", {}, {0});
  b.initializerInt64("axes", {1}, {0});
  b.initializerInt64("minus1", {1}, {-1});
  auto& c = b.node("Conv", {"x", "W"}, {"c"});
  setAttribute(c, "auto_pad", std::string("SAME_UPPER"));
  b.node("Shape", {"c"}, {"shape"});
  b.node("Gather", {"shape", "zero"}, {"n"});
  b.node("Unsqueeze", {"n", "axes"}, {"n1"});
  setAttribute(b.node("Concat", {"n1", "minus1"}, {"target"}), "axis", int64_t(0));
  b.node("Reshape", {"c", "target"}, {"y"});
  b.output("y", 2);

  const OnnxModelInfo declared = inspectOnnxFromMemory(serialized(b));
  REQUIRE(declared.inputs.size() == 1);
  CHECK(declared.inputs[0].dims == std::vector<int64_t>{-1, 4, -1, -1});
  CHECK(declared.inputs[0].dimParams == std::vector<std::string>{"N", "", "H", "W"});
  CHECK(declared.opsetVersion == 13);

  VKCNN_CHECK_ERROR(importOnnxFromMemory(context(), serialized(b)), ErrorCode::invalidArgument,
                    "dimension 2 ('H') is dynamic");
  for (auto [n, h, wd] : {std::tuple{2u, 5u, 3u}, std::tuple{1u, 7u, 6u}}) {
    OnnxImportOptions options = float32Options();
    options.inputShapes["x"] = {n, 4, h, wd};
    const Tensor x = floatTensor(n, 4, h, wd, 41 + h);
    Result r = run(b, {toFloats(x)}, options);
    CHECK(r.imported.info.inputs[0].dims == std::vector<int64_t>{n, 4, h, wd});
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{n, int64_t(6 * h * wd)});
    const Tensor want = conv(x, w, {}, ConvParams{6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1});
    CHECK(relativeL2(r.outputs[0], want.data) <= 1e-5);
  }
  // A dynamic batch alone takes dynamicBatchSize.
  OnnxModelBuilder nb(13);
  nb.input("x", {-1, 3, 2, 2});
  nb.node("Relu", {"x"}, {"y"});
  nb.output("y", 4);
  OnnxImportOptions three = float32Options();
  three.dynamicBatchSize = 3;
  const Tensor x3 = floatTensor(3, 3, 2, 2, 50);
  Result r3 = run(nb, {toFloats(x3)}, three);
  CHECK(r3.imported.info.inputs[0].numberOfImages == 3);
  CHECK(relativeL2(r3.outputs[0], apply(x3, relu).data) <= 1e-7);
  OnnxImportOptions wrong;
  wrong.inputShapes["x"] = {2, 4, 2, 2};
  VKCNN_CHECK_ERROR(importOnnxFromMemory(context(), serialized(nb), wrong),
                    ErrorCode::invalidArgument, "dimension 1 is 3 in the model but 4 was given");
  wrong.inputShapes.clear();
  wrong.inputShapes["nope"] = {1};
  VKCNN_CHECK_ERROR(importOnnxFromMemory(context(), serialized(nb), wrong),
                    ErrorCode::invalidArgument, "names 'nope', which is not an input");
}

TEST_CASE("onnx import: channel shuffle and pixel shuffle patterns map onto kernels") {
  SUBCASE("Reshape [N, g, C/g, H, W] -> Transpose(0, 2, 1, 3, 4) -> Reshape: ChannelShuffle") {
    const Tensor x = floatTensor(2, 12, 3, 5, 60);
    OnnxModelBuilder b(13);
    b.input("x", {2, 12, 3, 5});
    b.initializerInt64("s1", {5}, {2, 3, 4, 3, 5});
    b.initializerInt64("s2", {4}, {2, 12, 3, 5});
    b.node("Reshape", {"x", "s1"}, {"r"});
    auto& t = b.node("Transpose", {"r"}, {"t"});
    setAttribute(t, "perm", std::vector<int64_t>{0, 2, 1, 3, 4});
    b.node("Reshape", {"t", "s2"}, {"y"});
    b.output("y", 4);
    Result r = run(b, {toFloats(x)});
    std::vector<double> want;
    for (uint32_t n = 0; n < 2; ++n)
      for (uint32_t o = 0; o < 12; ++o)
        for (uint32_t p = 0; p < 15; ++p)
          want.push_back(x.data[(n * 12 + (o % 3) * 4 + o / 3) * 15 + p]);
    CHECK(relativeL2(r.outputs[0], want) <= 1e-7);
    CHECK(r.imported.graph.statistics().kernels == 1);
  }
  SUBCASE("PixelShuffle as exported: Reshape -> Transpose(0, 1, 4, 2, 5, 3) -> Reshape") {
    const Tensor x = floatTensor(1, 8, 3, 2, 61);
    OnnxModelBuilder b(9);
    b.input("x", {1, 8, 3, 2});
    b.initializerInt64("s1", {6}, {1, 2, 2, 2, 3, 2});
    b.initializerInt64("s2", {4}, {1, 2, 6, 4});
    b.node("Reshape", {"x", "s1"}, {"r"});
    auto& t = b.node("Transpose", {"r"}, {"t"});
    setAttribute(t, "perm", std::vector<int64_t>{0, 1, 4, 2, 5, 3});
    b.node("Reshape", {"t", "s2"}, {"y"});
    b.output("y", 4);
    Result r = run(b, {toFloats(x)});
    std::vector<double> want;
    for (uint32_t c = 0; c < 2; ++c)
      for (uint32_t y = 0; y < 6; ++y)
        for (uint32_t xx = 0; xx < 4; ++xx)
          want.push_back(x.at(0, c * 4 + (y % 2) * 2 + xx % 2, y / 2, xx / 2));
    CHECK(relativeL2(r.outputs[0], want) <= 1e-7);
    CHECK(r.imported.graph.statistics().kernels == 1);
  }
  SUBCASE("DCR depth-to-space and space-to-depth, as patterns and as operators") {
    const Tensor x = floatTensor(1, 8, 3, 2, 62);
    std::vector<double> d2s;
    for (uint32_t c = 0; c < 2; ++c)
      for (uint32_t y = 0; y < 6; ++y)
        for (uint32_t xx = 0; xx < 4; ++xx)
          d2s.push_back(x.at(0, ((y % 2) * 2 + xx % 2) * 2 + c, y / 2, xx / 2));
    const Tensor z = floatTensor(1, 3, 4, 6, 63);
    std::vector<double> s2d;
    for (uint32_t o = 0; o < 12; ++o)
      for (uint32_t y = 0; y < 2; ++y)
        for (uint32_t xx = 0; xx < 3; ++xx) {
          const uint32_t c = o % 3, by = (o / 3) / 2, bx = (o / 3) % 2;
          s2d.push_back(z.at(0, c, y * 2 + by, xx * 2 + bx));
        }
    OnnxModelBuilder b(13);
    b.input("x", {1, 8, 3, 2});
    b.input("z", {1, 3, 4, 6});
    b.initializerInt64("d1", {6}, {1, 2, 2, 2, 3, 2});
    b.initializerInt64("d2", {4}, {1, 2, 6, 4});
    b.initializerInt64("s1", {6}, {1, 3, 2, 2, 3, 2});
    b.initializerInt64("s2", {4}, {1, 12, 2, 3});
    b.node("Reshape", {"x", "d1"}, {"r"});
    setAttribute(b.node("Transpose", {"r"}, {"t"}), "perm", std::vector<int64_t>{0, 3, 4, 1, 5, 2});
    b.node("Reshape", {"t", "d2"}, {"pattern_d2s"});
    setAttribute(b.node("DepthToSpace", {"x"}, {"op_d2s"}), "blocksize", int64_t(2));
    b.node("Reshape", {"z", "s1"}, {"q"});
    setAttribute(b.node("Transpose", {"q"}, {"u"}), "perm", std::vector<int64_t>{0, 3, 5, 1, 2, 4});
    b.node("Reshape", {"u", "s2"}, {"pattern_s2d"});
    setAttribute(b.node("SpaceToDepth", {"z"}, {"op_s2d"}), "blocksize", int64_t(2));
    for (const char* name : {"pattern_d2s", "op_d2s", "pattern_s2d", "op_s2d"}) b.output(name, 4);
    Result r = run(b, {toFloats(x), toFloats(z)});
    CHECK(relativeL2(r.outputs[0], d2s) <= 1e-7);
    CHECK(relativeL2(r.outputs[1], d2s) <= 1e-7);
    CHECK(relativeL2(r.outputs[2], s2d) <= 1e-7);
    CHECK(relativeL2(r.outputs[3], s2d) <= 1e-7);
    CHECK(r.imported.graph.statistics().kernels == 4);
  }
  SUBCASE("a Transpose that moves data otherwise runs on a Tensor") {
    OnnxModelBuilder b(13);
    b.input("x", {1, 4, 3, 5});
    auto& t = b.node("Transpose", {"x"}, {"y"}, "nhwc");
    setAttribute(t, "perm", std::vector<int64_t>{0, 2, 3, 1});
    b.output("y", 4);
    const Tensor x = floatTensor(1, 4, 3, 5, 77);
    Result r = run(b, {toFloats(x)});
    std::vector<double> want;
    for (uint32_t y = 0; y < 3; ++y)
      for (uint32_t xx = 0; xx < 5; ++xx)
        for (uint32_t c = 0; c < 4; ++c) want.push_back(x.at(0, c, y, xx));
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{1, 3, 5, 4});
    CHECK(relativeL2(r.outputs[0], want) <= 1e-7);
    const std::vector<std::string> lines = r.imported.graph.describe();
    CHECK(std::find(lines.begin(), lines.end(), "nhwc (transpose) -> tensor [1, 3, 5, 4]") !=
          lines.end());
  }
}

TEST_CASE("onnx import: pooling, transposed convolution, PRelu and broadcasting") {
  const Tensor x = floatTensor(1, 5, 7, 6, 70);
  SUBCASE("MaxPool ceil_mode and AveragePool SAME_UPPER with count_include_pad 0") {
    OnnxModelBuilder b(13);
    b.input("x", {1, 5, 7, 6});
    auto& mp = b.node("MaxPool", {"x"}, {"m"});
    setAttribute(mp, "kernel_shape", std::vector<int64_t>{3, 3});
    setAttribute(mp, "strides", std::vector<int64_t>{2, 2});
    setAttribute(mp, "ceil_mode", int64_t(1));
    auto& ap = b.node("AveragePool", {"x"}, {"a"});
    setAttribute(ap, "kernel_shape", std::vector<int64_t>{2, 3});
    setAttribute(ap, "strides", std::vector<int64_t>{2, 2});
    setAttribute(ap, "auto_pad", std::string("SAME_UPPER"));
    b.output("m", 4);
    b.output("a", 4);
    Result r = run(b, {toFloats(x)});
    // Max: out 3x3 (ceil), windows clipped at the edge.
    std::vector<double> wantM, wantA;
    for (uint32_t c = 0; c < 5; ++c)
      for (uint32_t oy = 0; oy < 3; ++oy)
        for (uint32_t ox = 0; ox < 3; ++ox) {
          double m = -1e300;
          for (uint32_t ky = 0; ky < 3; ++ky)
            for (uint32_t kx = 0; kx < 3; ++kx)
              if (oy * 2 + ky < 7 && ox * 2 + kx < 6)
                m = std::max(m, x.at(0, c, oy * 2 + ky, ox * 2 + kx));
          wantM.push_back(m);
        }
    // Average: out ceil(7/2) x ceil(6/2) = 4x3; total pad H = 1 (0 before), W = 1 (0 before).
    for (uint32_t c = 0; c < 5; ++c)
      for (uint32_t oy = 0; oy < 4; ++oy)
        for (uint32_t ox = 0; ox < 3; ++ox) {
          double s = 0;
          int count = 0;
          for (uint32_t ky = 0; ky < 2; ++ky)
            for (uint32_t kx = 0; kx < 3; ++kx)
              if (oy * 2 + ky < 7 && ox * 2 + kx < 6) {
                s += x.at(0, c, oy * 2 + ky, ox * 2 + kx);
                ++count;
              }
          wantA.push_back(s / count);
        }
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{1, 5, 3, 3});
    CHECK(r.imported.info.outputs[1].dims == std::vector<int64_t>{1, 5, 4, 3});
    CHECK(relativeL2(r.outputs[0], wantM) <= 1e-7);
    CHECK(relativeL2(r.outputs[1], wantA) <= 1e-6);
  }
  SUBCASE("a 1x1 window at stride 1 without padding passes its input through, no kernel") {
    OnnxModelBuilder b(13);
    b.input("x", {1, 5, 7, 6});
    b.node("Relu", {"x"}, {"r"});
    auto& ap = b.node("AveragePool", {"r"}, {"a"});
    setAttribute(ap, "kernel_shape", std::vector<int64_t>{1, 1});
    auto& mp = b.node("MaxPool", {"a"}, {"m"});
    setAttribute(mp, "kernel_shape", std::vector<int64_t>{1, 1});
    setAttribute(mp, "strides", std::vector<int64_t>{1, 1});
    b.output("m", 4);
    Result r = run(b, {toFloats(x)});
    std::vector<double> want;
    for (double v : x.data) want.push_back(std::max(v, 0.0));
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{1, 5, 7, 6});
    CHECK(relativeL2(r.outputs[0], want) <= 1e-7);
    CHECK(r.imported.graph.statistics().kernels == 1);  // the ReLU
  }
  SUBCASE("ConvTranspose with output_shape") {
    OnnxModelBuilder b(13);
    b.input("x", {1, 5, 7, 6});
    const auto w = randomFloats(5 * 3 * 3 * 3, 71);  // [C_in][C_out][kH][kW]
    b.initializer("W", {5, 3, 3, 3}, w);
    auto& ct = b.node("ConvTranspose", {"x", "W"}, {"y"});
    setAttribute(ct, "strides", std::vector<int64_t>{2, 2});
    setAttribute(ct, "output_shape", std::vector<int64_t>{14, 12});
    b.output("y", 4);
    Result r = run(b, {toFloats(x)});
    // Full output (7-1)*2+3 = 15 x 13; output_shape 14 x 12: total padding 1 each, split as
    // begin = 1 - 1/2 = 1, end = 0 (NOTSET puts the odd pixel first).
    std::vector<double> full(3 * 15 * 13, 0.0);
    for (uint32_t ci = 0; ci < 5; ++ci)
      for (uint32_t co = 0; co < 3; ++co)
        for (uint32_t iy = 0; iy < 7; ++iy)
          for (uint32_t ix = 0; ix < 6; ++ix)
            for (uint32_t ky = 0; ky < 3; ++ky)
              for (uint32_t kx = 0; kx < 3; ++kx)
                full[(co * 15 + iy * 2 + ky) * 13 + ix * 2 + kx] +=
                    x.at(0, ci, iy, ix) * w[((ci * 3 + co) * 3 + ky) * 3 + kx];
    std::vector<double> want;
    for (uint32_t co = 0; co < 3; ++co)
      for (uint32_t y = 0; y < 14; ++y)
        for (uint32_t xx = 0; xx < 12; ++xx) want.push_back(full[(co * 15 + y + 1) * 13 + xx + 1]);
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{1, 3, 14, 12});
    CHECK(relativeL2(r.outputs[0], want) <= 1e-5);
  }
  SUBCASE("PRelu per channel, and an image broadcast onto another") {
    OnnxModelBuilder b(13);
    b.input("x", {1, 5, 7, 6});
    b.input("g", {1, 5, 1, 1});
    const auto slope = randomFloats(5, 72);
    b.initializer("slope", {5, 1, 1}, slope);
    b.node("PRelu", {"x", "slope"}, {"p"});
    b.node("Mul", {"g", "p"}, {"y"});  // the broadcast operand first: swapped
    b.node("Sub", {"g", "p"}, {"z"});  // swapped and negated
    b.output("y", 4);
    b.output("z", 4);
    const Tensor g = floatTensor(1, 5, 1, 1, 73);
    Result r = run(b, {toFloats(x), toFloats(g)});
    std::vector<double> wantY, wantZ;
    for (uint32_t c = 0; c < 5; ++c)
      for (uint32_t p = 0; p < 42; ++p) {
        const double v = x.data[c * 42 + p];
        const double pr = v >= 0 ? v : slope[c] * v;
        wantY.push_back(g.data[c] * pr);
        wantZ.push_back(g.data[c] - pr);
      }
    CHECK(relativeL2(r.outputs[0], wantY) <= 1e-6);
    CHECK(relativeL2(r.outputs[1], wantZ) <= 1e-6);
  }
}

TEST_CASE("onnx import: float16 graphs, 1D convolution, outputs of inputs, and helpers") {
  // Conv1d ([N, C, L] runs down the image's height) with float16 intermediates.
  OnnxModelBuilder b(13);
  b.input("x", {2, 3, 11});
  const auto w = randomFloats(4 * 3 * 3, 80, -0.5f, 0.5f);
  b.initializer("W", {4, 3, 3}, w);
  auto& c = b.node("Conv", {"x", "W"}, {"y"});
  setAttribute(c, "pads", std::vector<int64_t>{1, 1});
  b.output("y", 3);
  b.output("x", 3);  // an input that is also an output
  const Tensor x = floatTensor(2, 3, 11, 1, 81);
  OnnxImportOptions options;
  options.channelFormat = ChannelFormat::float16;
  options.label = "fp16";
  Result r = run(b, {toFloats(x)}, options);
  CHECK(r.imported.info.inputs[0].height == 11);
  CHECK(r.imported.info.inputs[0].width == 1);
  CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{2, 4, 11});
  const Tensor want = conv(x, w, {}, ConvParams{4, 3, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0});
  CHECK(relativeL2(r.outputs[0], want.data) <= 2e-3);
  CHECK(relativeL2(r.outputs[1], roundedTo(x, ChannelFormat::float16).data) <= 1e-3);

  const OnnxTensorInfo& info = r.imported.info.inputs[0];
  VKCNN_CHECK_ERROR(makeOnnxImage(context(), info, std::vector<float>(5), ChannelFormat::float32),
                    ErrorCode::invalidArgument, "5 values for tensor 'x' of 66 elements");
  Image wrong(context(), {4, 4, 3});
  VKCNN_CHECK_ERROR(readOnnxImage(wrong, info), ErrorCode::invalidArgument,
                    "does not have the shape of tensor 'x'");
}

// Values that leave the image layout run on Tensors: a detection head's transposes and reshapes
// to [1, anchors, 4], an NHWC input made NCHW, GELU (Erf) with a constant varying along W, Concat
// along W and Slice with a step; outputs against CPU references, one conversion per boundary.
TEST_CASE("onnx import: values that leave the image layout run on Tensors") {
  SUBCASE("a detection head: [1, anchors, 4] boxes and [1, anchors, 3] scores") {
    const uint32_t c = 4, h = 3, w = 5, anchors = 2;
    const auto wb = randomFloats(anchors * 4 * c, 70), wc = randomFloats(anchors * 3 * c, 71);
    OnnxModelBuilder b(13);
    b.input("x", {1, c, h, w});
    b.initializer("Wb", {anchors * 4, c, 1, 1}, wb);
    b.initializer("Wc", {anchors * 3, c, 1, 1}, wc);
    b.initializerInt64("boxShape", {3}, {1, -1, 4});
    b.initializerInt64("scoreShape", {3}, {1, -1, 3});
    b.node("Conv", {"x", "Wb"}, {"cb"});
    b.node("Conv", {"x", "Wc"}, {"cc"});
    setAttribute(b.node("Transpose", {"cb"}, {"tb"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
    setAttribute(b.node("Transpose", {"cc"}, {"tc"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
    b.node("Reshape", {"tb", "boxShape"}, {"boxes"});
    b.node("Reshape", {"tc", "scoreShape"}, {"rc"});
    b.node("Sigmoid", {"rc"}, {"scores"});
    b.output("boxes", 3);
    b.output("scores", 3);
    const Tensor x = floatTensor(1, c, h, w, 72);
    Result r = run(b, {toFloats(x)});
    const Tensor cb = conv(x, wb, {}, ConvParams{anchors * 4}),
                 cc = conv(x, wc, {}, ConvParams{anchors * 3});
    std::vector<double> boxes, scores;
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t xx = 0; xx < w; ++xx) {
        for (uint32_t k = 0; k < anchors * 4; ++k) boxes.push_back(cb.at(0, k, y, xx));
        for (uint32_t k = 0; k < anchors * 3; ++k)
          scores.push_back(1 / (1 + std::exp(-cc.at(0, k, y, xx))));
      }
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{1, h * w * anchors, 4});
    CHECK(r.imported.info.outputs[1].dims == std::vector<int64_t>{1, h * w * anchors, 3});
    CHECK(relativeL2(r.outputs[0], boxes) <= 1e-5);
    CHECK(relativeL2(r.outputs[1], scores) <= 1e-5);
    // Each convolution's image to a Tensor, each output back to an Image.
    CHECK(r.imported.graph.statistics().conversions == 4);
  }
  SUBCASE("an NHWC input transposed to NCHW before a convolution") {
    const uint32_t n = 2, h = 5, w = 3, c = 6, m = 4;
    const auto wt = randomFloats(m * c, 73);
    OnnxModelBuilder b(13);
    b.input("x", {n, h, w, c});
    b.initializer("W", {m, c, 1, 1}, wt);
    setAttribute(b.node("Transpose", {"x"}, {"t"}), "perm", std::vector<int64_t>{0, 3, 1, 2});
    b.node("Conv", {"t", "W"}, {"c"});
    b.node("Relu", {"c"}, {"y"});
    b.output("y", 4);
    // The input's elements in NHWC order; the reference convolves them as NCHW.
    const Tensor nhwc = floatTensor(n, h, w, c, 74);
    Tensor nchw(n, c, h, w);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t y = 0; y < h; ++y)
        for (uint32_t xx = 0; xx < w; ++xx)
          for (uint32_t ch = 0; ch < c; ++ch) nchw.at(i, ch, y, xx) = nhwc.at(i, y, xx, ch);
    Result r = run(b, {toFloats(nhwc)});
    CHECK(relativeL2(r.outputs[0], apply(conv(nchw, wt, {}, ConvParams{m}), relu).data) <= 1e-5);
    CHECK(r.imported.graph.statistics().conversions == 2);
  }
  SUBCASE("GELU, a constant along W, Concat along W and a Slice with a step") {
    const uint32_t c = 3, h = 4, w = 5;
    const auto k = randomFloats(w, 75);
    OnnxModelBuilder b(13);
    b.input("x", {1, c, h, w});
    b.initializer("sqrt2", {}, {1.41421356f});
    b.initializer("half", {}, {0.5f});
    b.initializer("one", {}, {1.f});
    b.initializer("k", {w}, k);
    b.initializerInt64("starts", {1}, {0});
    b.initializerInt64("ends", {1}, {1000});
    b.initializerInt64("axes", {1}, {3});
    b.initializerInt64("steps", {1}, {3});
    b.node("Div", {"x", "sqrt2"}, {"d"});
    b.node("Erf", {"d"}, {"e"});
    b.node("Add", {"e", "one"}, {"e1"});
    b.node("Mul", {"x", "e1"}, {"xe"});
    b.node("Mul", {"xe", "half"}, {"gelu"});
    b.node("Mul", {"gelu", "k"}, {"scaled"});
    setAttribute(b.node("Concat", {"scaled", "x"}, {"wide"}), "axis", int64_t(3));
    b.node("Slice", {"wide", "starts", "ends", "axes", "steps"}, {"y"});
    b.output("y", 4);
    const Tensor x = floatTensor(1, c, h, w, 76);
    Result r = run(b, {toFloats(x)});
    std::vector<double> want;
    for (uint32_t ch = 0; ch < c; ++ch)
      for (uint32_t y = 0; y < h; ++y)
        for (uint32_t col = 0; col < 2 * w; col += 3) {
          const double v = x.at(0, ch, y, col % w);
          want.push_back(col < w ? 0.5 * v * (1 + std::erf(v / 1.41421356)) * k[col] : v);
        }
    CHECK(r.imported.info.outputs[0].dims == std::vector<int64_t>{1, c, h, 4});
    CHECK(relativeL2(r.outputs[0], want) <= 1e-5);
  }
}

TEST_CASE("onnx import: inputs of different batch sizes and outputs off the batch run on Tensors") {
  // y [3, 4] + z [4]: the inputs disagree on the batch, so each is one image holding its value.
  const std::vector<float> y = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, z = {0.5f, -1, 2, -4};
  OnnxModelBuilder b(13);
  b.input("y", {3, 4});
  b.input("z", {4});
  b.node("Add", {"y", "z"}, {"s"});
  b.node("ReduceSum", {"s"}, {"total"});  // every axis, keepdims: [1, 1]
  b.output("s", 2);
  b.output("total", 2);
  Result r = run(b, {y, z});
  CHECK(r.imported.info.inputs[0].numberOfImages == 1);
  CHECK(r.imported.info.outputs[1].dims == std::vector<int64_t>{1, 1});
  std::vector<double> sum(12);
  double total = 0;
  for (size_t k = 0; k < 12; ++k) total += sum[k] = y[k] + z[k % 4];
  CHECK(relativeL2(r.outputs[0], sum) == 0);
  CHECK(relativeL2(r.outputs[1], {total}) <= 1e-6);
}
