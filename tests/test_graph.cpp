// Graph: build, optimise (BN folding, neuron fusion, concatenation removal, identity removal) and
// encode; results equal a CPU reference and the same graph unoptimised, with fewer kernels.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "scoped_choice.h"
#include "reference.h"
#include "test_support.h"
#include "vkcnn/graph.h"
#include "vkcnn/pooling.h"
#include "vkcnn/softmax.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// Same-padded convolution (MPS default, stride 1, odd kernel) in double precision, MPS weight
// order (reference.h).
Tensor convolve(const Tensor& x, uint32_t outChannels, uint32_t k, const std::vector<float>& w,
                const std::vector<float>& b) {
  ReferenceConvolution c;
  c.kernelWidth = c.kernelHeight = k;
  c.inputChannels = x.c;
  c.outputChannels = outChannels;
  c.left = c.top = k / 2;
  return test::convolve(x, c, w, b, x.h, x.w);
}

Tensor map(Tensor t, double (*f)(double)) {
  for (double& v : t.data) v = f(v);
  return t;
}

struct Network {
  std::vector<float> w1 = randomFloats(8 * 3 * 3 * 3, 1, -0.5f, 0.5f), b1 = randomFloats(8, 2);
  std::vector<float> w2 = randomFloats(8 * 8, 3, -0.5f, 0.5f), b2 = randomFloats(8, 4);
  std::vector<float> w3 = randomFloats(4 * 8 * 9, 5, -0.5f, 0.5f);
  BatchNormalizationParameters bn;
  Network() {
    bn.mean = randomFloats(8, 6);
    bn.variance = randomFloats(8, 7, 0.5f, 2.f);
    bn.gamma = randomFloats(8, 8, 0.5f, 1.5f);
    bn.beta = randomFloats(8, 9);
    bn.epsilon = 1e-3f;
  }

  // input(3) -> conv3x3(8) -> BN -> relu = a; a -> conv1x1(8) -> relu6 = b; a -> conv3x3(4) = c;
  // concat(b, c) (12) -> identity -> + concat (itself) -> output "sum"; c -> also output "side".
  Graph build(const GraphOptions& options) const {
    Graph g(context(), options);
    GraphTensor x = g.input("x", {9, 7, 3});
    GraphTensor a = g.convolution(x, ConvolutionDescriptor::make(3, 3, 3, 8), w1, b1, {}, "conv1");
    a = g.batchNormalization(a, bn, "bn1");
    a = g.neuron(a, NeuronDescriptor::relu(), "relu1");
    GraphTensor b = g.convolution(a, ConvolutionDescriptor::make(1, 1, 8, 8), w2, b2, {}, "conv2");
    b = g.neuron(b, NeuronDescriptor::relu6(), "relu6");
    GraphTensor c = g.convolution(a, ConvolutionDescriptor::make(3, 3, 8, 4), w3, {}, {}, "conv3");
    GraphTensor cat = g.concat({b, c}, "concat");
    GraphTensor same = g.identity(cat, "dropout");
    GraphTensor sum = g.arithmetic(same, cat, ArithmeticOperation::add, "sum");
    g.output(sum, "sum");
    g.output(c, "side");
    return g;
  }

  std::pair<Tensor, Tensor> reference(const Tensor& x) const {
    Tensor a = convolve(x, 8, 3, w1, b1);
    for (uint32_t i = 0; i < a.n; ++i)
      for (uint32_t c = 0; c < 8; ++c)
        for (uint32_t p = 0; p < a.h * a.w; ++p) {
          double& v = a.at(i, c, p / a.w, p % a.w);
          v = (v - bn.mean[c]) / std::sqrt(double(bn.variance[c]) + bn.epsilon) * bn.gamma[c] +
              bn.beta[c];
          v = std::max(v, 0.0);
        }
    Tensor b =
        map(convolve(a, 8, 1, w2, b2), [](double v) { return std::min(std::max(v, 0.0), 6.0); });
    Tensor c = convolve(a, 4, 3, w3, {});
    Tensor sum(x.n, 12, x.h, x.w);
    for (uint32_t i = 0; i < x.n; ++i)
      for (uint32_t ch = 0; ch < 12; ++ch)
        for (uint32_t p = 0; p < x.h * x.w; ++p) {
          const double v =
              ch < 8 ? b.at(i, ch, p / x.w, p % x.w) : c.at(i, ch - 8, p / x.w, p % x.w);
          sum.at(i, ch, p / x.w, p % x.w) = 2 * v;
        }
    return {sum, c};
  }
};

}  // namespace

TEST_CASE("graph: optimised and unoptimised networks match the CPU reference") {
  Network net;
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    Tensor x = randomTensor(2, 3, 7, 9, 10);
    Image input = makeImage(x, format, "x");
    auto [sumRef, sideRef] = net.reference(roundedTo(x, format));
    for (bool optimize : {true, false}) {
      CAPTURE(optimize);
      GraphOptions options;
      options.channelFormat = format;
      options.optimize = optimize;
      Graph g = net.build(options);
      CommandBuffer cb(context());
      std::vector<Image> out = g.encode(cb, {input});
      cb.commit();
      cb.waitUntilCompleted();
      REQUIRE(out.size() == 2);
      CHECK(out[0].label() == "sum");
      CHECK(out[0].numberOfImages() == 2);
      const double tol = format == ChannelFormat::float32 ? 1e-5 : 4e-3;
      CHECK(relativeL2(download(out[0]), sumRef) <= tol);
      CHECK(relativeL2(download(out[1]), sideRef) <= tol);
      GraphStatistics stats = g.statistics();
      if (optimize) {
        CHECK(stats.foldedBatchNormalizations == 1);
        CHECK(stats.fusedNeurons == 2);
        CHECK(stats.removedIdentities == 1);
        // conv2 writes at channel 0 of the concatenation; conv3's result is also an output, so it
        // is copied in: the concatenation stays but copies only one input.
        CHECK(stats.kernels == 5);  // conv1, conv2, conv3, one copy, sum
        const auto peak = cb.temporaryPoolStatistics().peakBytesInUse;
        CHECK(peak > 0);
      } else {
        CHECK(stats.kernels == 10);
      }
    }
  }
}

TEST_CASE("graph: concatenation disappears when producers write in place; encode twice") {
  std::vector<float> w1 = randomFloats(4 * 5, 11), w2 = randomFloats(8 * 5, 12);
  Graph g(context(), GraphOptions{ChannelFormat::float32});
  GraphTensor x = g.input("x", {5, 4, 5});
  GraphTensor a = g.convolution(x, ConvolutionDescriptor::make(1, 1, 5, 4), w1);
  GraphTensor b = g.convolution(x, ConvolutionDescriptor::make(1, 1, 5, 8), w2);
  GraphTensor cat = g.concat({a, b});
  Padding ceil = Padding::explicitPadding(0, 0, 0, 0);
  ceil.ceilMode = true;
  auto pool = std::make_shared<PoolingMax>(context(), PoolingDescriptor::of(2, 2, 2, 2, ceil));
  GraphTensor pooled = g.unary(cat, pool, "pool");
  GraphTensor soft = g.unary(pooled, std::make_shared<Softmax>(context()), "softmax");
  g.output(soft, "probabilities");
  CHECK(g.shape(pooled) == TensorShape{3, 2, 12});
  g.compile();
  CHECK(g.statistics().removedConcatenations == 1);
  CHECK(g.statistics().kernels == 4);
  VKCNN_CHECK_ERROR(g.input("late", {1, 1, 1}), ErrorCode::misuse, "compiled");

  for (uint32_t batch : {1u, 3u}) {
    Tensor xt = randomTensor(batch, 5, 4, 5, 20 + batch);
    Image input = makeImage(xt, ChannelFormat::float32);
    Image output = makePoisoned(context(), {3, 2, 12, batch, ChannelFormat::float32});
    CommandBuffer cb(context());
    g.encode(cb, {input}, {output});
    cb.commit();
    cb.waitUntilCompleted();
    Tensor y = download(output);
    CHECK_FALSE(hasNaN(y));
    // Reference: 1x1 convolutions, concat, 2x2 max pool (ceil), softmax over channels.
    Tensor ca = convolve(xt, 4, 1, w1, {}), cbt = convolve(xt, 8, 1, w2, {});
    Tensor expected(batch, 12, 2, 3);
    for (uint32_t i = 0; i < batch; ++i)
      for (uint32_t py = 0; py < 2; ++py)
        for (uint32_t px = 0; px < 3; ++px) {
          double m[12], total = 0, top = -1e300;
          for (uint32_t c = 0; c < 12; ++c) {
            m[c] = -1e300;
            for (uint32_t dy = 0; dy < 2; ++dy)
              for (uint32_t dx = 0; dx < 2; ++dx) {
                const uint32_t yy = py * 2 + dy, xx = px * 2 + dx;
                if (yy >= 4 || xx >= 5) continue;
                m[c] = std::max(m[c], c < 4 ? ca.at(i, c, yy, xx) : cbt.at(i, c - 4, yy, xx));
              }
            top = std::max(top, m[c]);
          }
          for (double v : m) total += std::exp(v - top);
          for (uint32_t c = 0; c < 12; ++c)
            expected.at(i, c, py, px) = std::exp(m[c] - top) / total;
        }
    CHECK(relativeL2(y, expected) <= 1e-5);
  }
}

TEST_CASE("graph: a tensor read by several nodes, and a reusable recording") {
  Graph g(context(), GraphOptions{ChannelFormat::float32});
  GraphTensor x = g.input("x", {6, 6, 3});
  GraphTensor r = g.neuron(x, NeuronDescriptor::of(NeuronType::linear, 2.f, 0.f));
  GraphTensor s1 = g.neuron(r, NeuronDescriptor::relu());
  GraphTensor s2 = g.neuron(r, NeuronDescriptor::of(NeuronType::absolute));
  GraphTensor s3 = g.arithmetic(r, s1, ArithmeticOperation::multiply);
  GraphTensor t = g.arithmetic(s2, s3, ArithmeticOperation::add);
  g.output(t, "t");
  Tensor xt = randomTensor(1, 3, 6, 6, 30);
  Image input = makeImage(xt, ChannelFormat::float32);
  Image output(context(), {6, 6, 3, 1, ChannelFormat::float32});
  CommandBufferOptions reusable;
  reusable.reusable = true;
  CommandBuffer cb(context(), "graph", reusable);
  g.encode(cb, {input}, {output});
  auto expected = [](const Tensor& in) {
    Tensor e = in;
    for (double& v : e.data) {
      const double r = 2 * double(float(v));
      v = std::abs(r) + r * std::max(r, 0.0);
    }
    return e;
  };
  cb.commit();
  cb.waitUntilCompleted();
  CHECK(relativeL2(download(output), expected(xt)) <= 1e-6);
  Tensor x2 = randomTensor(1, 3, 6, 6, 31);
  upload(input, x2);
  cb.commit();
  cb.waitUntilCompleted();
  CHECK(relativeL2(download(output), expected(x2)) <= 1e-6);
}

TEST_CASE("graph: bad networks and inputs are clear errors") {
  Graph g(context());
  GraphTensor x = g.input("x", {8, 8, 3});
  VKCNN_CHECK_ERROR(
      g.convolution(x, ConvolutionDescriptor::make(3, 3, 4, 8), std::vector<float>(288)),
      ErrorCode::invalidArgument, "takes 4 channels but its input has 3");
  VKCNN_CHECK_ERROR(g.fullyConnected(x, ConvolutionDescriptor::make(4, 4, 3, 10), {}),
                    ErrorCode::invalidArgument, "spans 4x4x3");
  GraphTensor y = g.input("y", {4, 4, 3});
  VKCNN_CHECK_ERROR(g.concat({x, y}), ErrorCode::invalidArgument, "differ in size");
  VKCNN_CHECK_ERROR(g.arithmetic(x, y, ArithmeticOperation::add), ErrorCode::invalidArgument,
                    "broadcast");
  BatchNormalizationParameters bad;
  bad.mean = {1, 2};
  bad.variance = {1, 2};
  VKCNN_CHECK_ERROR(g.batchNormalization(x, bad), ErrorCode::invalidArgument, "3 values each");
  VKCNN_CHECK_ERROR(g.compile(), ErrorCode::invalidArgument, "no outputs");
  g.output(g.neuron(x, NeuronDescriptor::relu()), "out");
  CommandBuffer cb(context());
  Image wrong(context(), {8, 8, 4});
  Image right(context(), {8, 8, 3});
  VKCNN_CHECK_ERROR(g.encode(cb, {wrong, right}), ErrorCode::invalidArgument,
                    "input 'x' must be 8x8x3");
  VKCNN_CHECK_ERROR(g.encode(cb, {right}), ErrorCode::invalidArgument, "takes 2 inputs");
}

// ---- concatenation storage and scheduling
// --------------------------------------------------------

namespace {

Tensor concatenate(const std::vector<const Tensor*>& parts) {
  uint32_t channels = 0;
  for (const Tensor* p : parts) channels += p->c;
  const Tensor& first = *parts[0];
  Tensor out(first.n, channels, first.h, first.w);
  uint32_t at = 0;
  for (const Tensor* p : parts) {
    for (uint32_t i = 0; i < p->n; ++i)
      for (uint32_t c = 0; c < p->c; ++c)
        for (uint32_t y = 0; y < p->h; ++y)
          for (uint32_t x = 0; x < p->w; ++x) out.at(i, at + c, y, x) = p->at(i, c, y, x);
    at += p->c;
  }
  return out;
}

BatchNormalizationParameters sampleBatchNormalization(uint32_t channels, uint32_t seed) {
  BatchNormalizationParameters bn;
  bn.mean = randomFloats(channels, seed);
  bn.variance = randomFloats(channels, seed + 1, 0.5f, 2.f);
  bn.gamma = randomFloats(channels, seed + 2, 0.5f, 1.5f);
  bn.beta = randomFloats(channels, seed + 3);
  bn.epsilon = 1e-3f;
  return bn;
}

// Inference batch normalisation of every channel, then a ReLU where `relu`.
Tensor normalize(Tensor t, const BatchNormalizationParameters& bn, bool relu = false) {
  for (uint32_t i = 0; i < t.n; ++i)
    for (uint32_t c = 0; c < t.c; ++c)
      for (uint32_t y = 0; y < t.h; ++y)
        for (uint32_t x = 0; x < t.w; ++x) {
          double& v = t.at(i, c, y, x);
          v = (v - bn.mean[c]) / std::sqrt(double(bn.variance[c]) + bn.epsilon) * bn.gamma[c] +
              bn.beta[c];
          if (relu) v = std::max(v, 0.0);
        }
  return t;
}

Tensor normalizeRelu(const Tensor& t, const BatchNormalizationParameters& bn) {
  return normalize(t, bn, true);
}

// A densenet block: x0 = conv1x1(input); layer i reads concat(x0..x[i-1]) through batch norm,
// relu and a 3x3 convolution that makes `growth` channels; the output is concat(x0..x4). The
// concatenations are prefixes of the last one, so they all live in its image.
struct DenseBlock {
  static constexpr uint32_t kLayers = 4, kInput = 5, kFirst = 8;
  uint32_t growth;
  std::vector<float> w0;
  std::vector<std::vector<float>> w;
  std::vector<BatchNormalizationParameters> bn;

  explicit DenseBlock(uint32_t g) : growth(g), w0(randomFloats(kFirst * kInput, 40)) {
    for (uint32_t i = 0; i < kLayers; ++i) {
      const uint32_t in = kFirst + i * growth;
      w.push_back(randomFloats(size_t(growth) * 9 * in, 41 + i, -0.3f, 0.3f));
      bn.push_back(sampleBatchNormalization(in, 50 + 4 * i));
    }
  }

  Graph build(const GraphOptions& options) const {
    Graph g(context(), options);
    GraphTensor x = g.input("x", {6, 5, kInput});
    std::vector<GraphTensor> features{
        g.convolution(x, ConvolutionDescriptor::make(1, 1, kInput, kFirst), w0)};
    for (uint32_t i = 0; i < kLayers; ++i) {
      const uint32_t in = kFirst + i * growth;
      GraphTensor cat = g.concat(features, "cat" + std::to_string(i));
      GraphTensor a = g.neuron(g.batchNormalization(cat, bn[i]), NeuronDescriptor::relu());
      features.push_back(
          g.convolution(a, ConvolutionDescriptor::make(3, 3, in, growth), w[i], {}, {}));
    }
    g.output(g.concat(features, "block"), "block");
    return g;
  }

  Tensor reference(const Tensor& x) const {
    std::vector<Tensor> features{convolve(x, kFirst, 1, w0, {})};
    for (uint32_t i = 0; i < kLayers; ++i) {
      std::vector<const Tensor*> parts;
      for (const Tensor& f : features) parts.push_back(&f);
      features.push_back(convolve(normalizeRelu(concatenate(parts), bn[i]), growth, 3, w[i], {}));
    }
    std::vector<const Tensor*> parts;
    for (const Tensor& f : features) parts.push_back(&f);
    return concatenate(parts);
  }
};

}  // namespace

TEST_CASE("graph: a dense block lives in one image; its concatenations cost no kernel") {
  // growth 4: every feature starts at a multiple of 4 and is written in place. growth 6: features
  // 2 and 4 start at channels 14 and 26, so each is copied once, by the first concatenation that
  // holds it, not once per concatenation. Each layer's batch norm and ReLU are applied by its
  // convolution as it reads the block (ConvolutionDescriptor::sourceActivation), padding still
  // zero; with VKCNN_FUSE_SOURCE_ACTIVATION=0 they are a kernel each.
  for (uint32_t growth : {4u, 6u})
    for (bool fuseActivations : {true, false}) {
      CAPTURE(growth);
      CAPTURE(fuseActivations);
      ScopedFusion restore;
      forceFusion(&detail::Overrides::fuseSourceActivation, fuseActivations);
      DenseBlock block(growth);
      const uint32_t copies = growth == 4 ? 0 : 2;
      const uint32_t kernels = 1 + (fuseActivations ? 1 : 2) * DenseBlock::kLayers + copies;
      const uint32_t channels = DenseBlock::kFirst + DenseBlock::kLayers * growth;
      for (uint32_t batch : {1u, 3u}) {
        CAPTURE(batch);
        Tensor x = randomTensor(batch, DenseBlock::kInput, 5, 6, 60 + batch);
        Tensor expected = block.reference(x);
        for (bool optimize : {true, false}) {
          CAPTURE(optimize);
          GraphOptions options{ChannelFormat::float32};
          options.optimize = optimize;
          Graph g = block.build(options);
          Image input = makeImage(x, ChannelFormat::float32, "x");
          Image output = makePoisoned(context(), {6, 5, channels, batch, ChannelFormat::float32});
          CommandBuffer cb(context());
          g.encode(cb, {input}, {output});
          cb.commit();
          cb.waitUntilCompleted();
          CHECK(relativeL2(download(output), expected) <= 1e-5);
          if (!optimize) continue;
          CHECK(g.statistics().removedConcatenations == DenseBlock::kLayers + 1 - copies);
          CHECK(g.statistics().fusedSourceActivations ==
                (fuseActivations ? DenseBlock::kLayers : 0u));
          CHECK(g.statistics().kernels == kernels);
          CHECK(cb.encodingStatistics().dispatches == kernels);
          // The layers form a chain: one barrier per kernel (and the copies' own).
          CHECK(cb.encodingStatistics().barriers <= kernels + copies);
          // Only the intermediate layers' activations are temporaries; the block is the output.
          const uint64_t layer = uint64_t(6) * 5 * 4 * batch * ((channels - growth + 3) / 4) * 4;
          CHECK(cb.temporaryPoolStatistics().peakBytesInUse <= 2 * layer + (64u << 10));
        }
      }
    }
}

TEST_CASE("graph: batch norms and affines before a convolution are applied as it reads") {
  // fuseSourceActivations: a batch normalisation with a ReLU before a 1x1 convolution (DenseNet's
  // bottleneck, reading a concatenation that starts inside a layer), an affine without a neuron
  // before a 3x3 one (padding stays zero), a batch normalisation read by two convolutions (each
  // applies it), and what must stay a kernel: a batch normalisation whose ReLU is also a graph
  // output, and one read by a convolution and an add. Float32 and float16 against the CPU
  // reference, and the same graph unfused.
  const uint32_t in = 14, w = 7, h = 6;
  const BatchNormalizationParameters bn1 = sampleBatchNormalization(in, 500);
  const BatchNormalizationParameters bn2 = sampleBatchNormalization(in + 4, 510);
  const BatchNormalizationParameters bn3 = sampleBatchNormalization(in, 520);
  const std::vector<float> w1 = randomFloats(size_t(4) * 9 * in, 530, -0.3f, 0.3f);
  const std::vector<float> w2 = randomFloats(size_t(8) * (in + 4), 531, -0.4f, 0.4f);
  const std::vector<float> w3 = randomFloats(size_t(5) * 9 * (in + 4), 532, -0.3f, 0.3f);
  const std::vector<float> w4 = randomFloats(size_t(3) * in, 533, -0.4f, 0.4f);
  const std::vector<float> w5 = randomFloats(size_t(2) * in, 534, -0.4f, 0.4f);
  const std::vector<float> w6 = randomFloats(size_t(in) * in, 538, -0.3f, 0.3f);
  const std::vector<float> b2 = randomFloats(8, 535);
  const std::vector<float> scale = randomFloats(in + 4, 536, -1.5f, 1.5f);
  const std::vector<float> shift = randomFloats(in + 4, 537, 0.2f, 0.8f);
  auto build = [&](const GraphOptions& options) {
    Graph g(context(), options);
    GraphTensor x = g.input("x", {w, h, in});
    GraphTensor a = g.neuron(g.batchNormalization(x, bn1, "bn1"), NeuronDescriptor::relu());
    GraphTensor f = g.convolution(a, ConvolutionDescriptor::make(3, 3, in, 4), w1, {}, {}, "c1");
    GraphTensor cat = g.concat({x, f}, "cat");  // f starts at channel 14, inside a layer
    GraphTensor b = g.neuron(g.batchNormalization(cat, bn2, "bn2"), NeuronDescriptor::relu());
    g.output(g.convolution(b, ConvolutionDescriptor::make(1, 1, in + 4, 8), w2, b2, {}, "c2"), "y");
    GraphTensor c = g.affine(cat, scale, shift, "affine");
    g.output(g.convolution(c, ConvolutionDescriptor::make(3, 3, in + 4, 5), w3, {}, {}, "c3"), "z");
    GraphTensor d = g.neuron(g.batchNormalization(x, bn3, "bn3"), NeuronDescriptor::relu());
    g.output(d, "d");
    g.output(g.convolution(d, ConvolutionDescriptor::make(1, 1, in, 3), w4, {}, {}, "c4"), "u");
    GraphTensor e = g.batchNormalization(x, bn1, "bn4");
    GraphTensor e1 = g.convolution(e, ConvolutionDescriptor::make(1, 1, in, 2), w5, {}, {}, "c5");
    GraphTensor e2 = g.convolution(e, ConvolutionDescriptor::make(1, 1, in, 2), w5, {}, {}, "c6");
    g.output(g.arithmetic(e1, e2, ArithmeticOperation::add), "v");
    GraphTensor k = g.batchNormalization(x, bn3, "bn5");
    GraphTensor k1 = g.convolution(k, ConvolutionDescriptor::make(1, 1, in, in), w6, {}, {}, "c7");
    g.output(g.arithmetic(k, k1, ArithmeticOperation::add), "t");
    return g;
  };
  auto affine = [](Tensor t, const std::vector<float>& s, const std::vector<float>& b) {
    for (uint32_t i = 0; i < t.n; ++i)
      for (uint32_t ch = 0; ch < t.c; ++ch)
        for (double* v = &t.at(i, ch, 0, 0); v != &t.at(i, ch, 0, 0) + t.h * t.w; ++v)
          *v = s[ch] * *v + b[ch];
    return t;
  };
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    const Tensor x = roundedTo(randomTensor(2, in, h, w, 540), format);
    const Tensor f = convolve(normalizeRelu(x, bn1), 4, 3, w1, {});
    const Tensor cat = concatenate({&x, &f});
    const Tensor d = normalizeRelu(x, bn3);
    const Tensor e = convolve(normalize(x, bn1), 2, 1, w5, {});
    std::vector<Tensor> expected = {convolve(normalizeRelu(cat, bn2), 8, 1, w2, b2),
                                    convolve(affine(cat, scale, shift), 5, 3, w3, {}), d,
                                    convolve(d, 3, 1, w4, {}),
                                    map(e, [](double v) { return 2 * v; })};
    const Tensor k = normalize(x, bn3);
    Tensor t = convolve(k, in, 1, w6, {});
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] += k.data[i];
    expected.push_back(t);
    for (bool fuse : {true, false}) {
      CAPTURE(fuse);
      GraphOptions options{format};
      Graph g = build(options);
      {
        ScopedFusion restore;
        forceFusion(&detail::Overrides::fuseSourceActivation, fuse);
        g.compile();
      }
      CHECK(g.statistics().fusedSourceActivations == (fuse ? 4u : 0u));
      if (fuse) {
        const std::vector<std::string> lines = g.describe();
        const auto mentions = [&](const char* what) {
          return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
            return l.find(what) != std::string::npos;
          });
        };
        CHECK(mentions("source activation (relu)") == 2);  // c1, c2
        CHECK(mentions("source activation") == 5);         // and c3, c5, c6
      }
      Image input = makeImage(x, format, "x");
      CommandBuffer cb(context());
      std::vector<Image> out = g.encode(cb, {input});
      cb.commit();
      cb.waitUntilCompleted();
      REQUIRE(out.size() == expected.size());
      for (size_t k = 0; k < out.size(); ++k) {
        CAPTURE(k);
        CHECK(relativeL2(download(out[k]), expected[k]) <=
              (format == ChannelFormat::float32 ? 1e-5 : 4e-3));
      }
    }
  }
}

TEST_CASE("graph: inception branches share barriers") {
  // Four branches of one input, concatenated: the first kernel of each branch in one level, the
  // second ones in the next; every branch writes its slot of the concatenation in place.
  const uint32_t in = 6;
  std::vector<float> w1 = randomFloats(8 * in, 70), w2a = randomFloats(4 * in, 71),
                     w2b = randomFloats(8 * 9 * 4, 72, -0.4f, 0.4f), w3a = randomFloats(4 * in, 73),
                     w3b = randomFloats(4 * 9 * 4, 74, -0.4f, 0.4f), w4 = randomFloats(4 * in, 75);
  Graph g(context(), GraphOptions{ChannelFormat::float32});
  GraphTensor x = g.input("x", {7, 6, in});
  GraphTensor b1 = g.convolution(x, ConvolutionDescriptor::make(1, 1, in, 8), w1);
  GraphTensor b2 = g.convolution(x, ConvolutionDescriptor::make(1, 1, in, 4), w2a);
  b2 = g.convolution(b2, ConvolutionDescriptor::make(3, 3, 4, 8), w2b);
  GraphTensor b3 = g.convolution(x, ConvolutionDescriptor::make(1, 1, in, 4), w3a);
  b3 = g.convolution(b3, ConvolutionDescriptor::make(3, 3, 4, 4), w3b);
  auto pool = std::make_shared<PoolingMax>(context(), PoolingDescriptor::of(3, 3, 1, 1));
  GraphTensor b4 = g.convolution(g.unary(x, pool), ConvolutionDescriptor::make(1, 1, in, 4), w4);
  g.output(g.concat({b1, b2, b3, b4}), "y");
  g.compile();
  CHECK(g.statistics().kernels == 7);
  CHECK(g.statistics().removedConcatenations == 1);
  for (uint32_t batch : {1u, 2u}) {
    CAPTURE(batch);
    Tensor xt = randomTensor(batch, in, 6, 7, 76 + batch);
    Image input = makeImage(xt, ChannelFormat::float32);
    Image output = makePoisoned(context(), {7, 6, 24, batch, ChannelFormat::float32});
    CommandBuffer cb(context());
    g.encode(cb, {input}, {output});
    cb.commit();
    cb.waitUntilCompleted();
    Tensor pooled(batch, in, 6, 7);
    for (uint32_t i = 0; i < batch; ++i)
      for (uint32_t c = 0; c < in; ++c)
        for (uint32_t y = 0; y < 6; ++y)
          for (uint32_t xx = 0; xx < 7; ++xx) {
            double m = -1e300;
            for (int dy = -1; dy <= 1; ++dy)
              for (int dx = -1; dx <= 1; ++dx) {
                const int64_t yy = int64_t(y) + dy, xc = int64_t(xx) + dx;
                if (yy >= 0 && xc >= 0 && yy < 6 && xc < 7)
                  m = std::max(m, xt.at(i, c, uint32_t(yy), uint32_t(xc)));
              }
            pooled.at(i, c, y, xx) = m;
          }
    Tensor r1 = convolve(xt, 8, 1, w1, {});
    Tensor r2 = convolve(convolve(xt, 4, 1, w2a, {}), 8, 3, w2b, {});
    Tensor r3 = convolve(convolve(xt, 4, 1, w3a, {}), 4, 3, w3b, {});
    Tensor r4 = convolve(pooled, 4, 1, w4, {});
    CHECK(relativeL2(download(output), concatenate({&r1, &r2, &r3, &r4})) <= 1e-5);
    CHECK(cb.encodingStatistics().dispatches == 7);
    // One image holds a batch image after image, so at batch 2 the branches' channel windows
    // span each other's layers and are ordered by barriers of their own.
    if (batch == 1) CHECK(cb.encodingStatistics().barriers == 2);
  }
}

TEST_CASE("graph: concatenations inside others, and features read directly and twice") {
  // cat1 = [b, c] is a run of cat2 = [a, b, c] at channel 4: a window of cat2's image, as are a,
  // b and c, which their convolutions write in place; b is also read directly. cat3 = [c, a] is
  // an output of its own, so both are copied into it; cat4 = [a, a] copies a twice.
  const uint32_t in = 3;
  std::vector<float> wa = randomFloats(4 * in, 80), wb = randomFloats(4 * in, 81),
                     wc = randomFloats(5 * in, 82);
  Graph g(context(), GraphOptions{ChannelFormat::float32});
  GraphTensor x = g.input("x", {4, 3, in});
  GraphTensor a = g.convolution(x, ConvolutionDescriptor::make(1, 1, in, 4), wa);
  GraphTensor b = g.convolution(x, ConvolutionDescriptor::make(1, 1, in, 4), wb);
  GraphTensor c = g.convolution(x, ConvolutionDescriptor::make(1, 1, in, 5), wc);
  GraphTensor cat1 = g.concat({b, c}), cat2 = g.concat({a, b, c});
  g.output(g.neuron(cat1, NeuronDescriptor::of(NeuronType::absolute)), "abs");
  g.output(g.arithmetic(cat2, cat2, ArithmeticOperation::add), "twice");
  g.output(g.concat({c, a}), "cat3");
  g.output(g.neuron(b, NeuronDescriptor::of(NeuronType::linear, 3.f, 0.f)), "b3");
  g.output(g.concat({a, a}), "cat4");
  g.compile();
  CHECK(g.statistics().removedConcatenations == 2);
  CHECK(g.statistics().kernels == 3 + 3 + 2 + 2);
  Tensor xt = randomTensor(2, in, 3, 4, 83);
  Image input = makeImage(xt, ChannelFormat::float32);
  CommandBuffer cb(context());
  std::vector<Image> out = g.encode(cb, {input});
  cb.commit();
  cb.waitUntilCompleted();
  CHECK(cb.encodingStatistics().dispatches == 10);
  Tensor ra = convolve(xt, 4, 1, wa, {}), rb = convolve(xt, 4, 1, wb, {}),
         rc = convolve(xt, 5, 1, wc, {});
  Tensor abs1 = map(concatenate({&rb, &rc}), [](double v) { return std::abs(v); });
  Tensor twice = map(concatenate({&ra, &rb, &rc}), [](double v) { return 2 * v; });
  Tensor b3 = map(rb, [](double v) { return 3 * v; });
  CHECK(relativeL2(download(out[0]), abs1) <= 1e-5);
  CHECK(relativeL2(download(out[1]), twice) <= 1e-5);
  CHECK(relativeL2(download(out[2]), concatenate({&rc, &ra})) <= 1e-5);
  CHECK(relativeL2(download(out[3]), b3) <= 1e-5);
  CHECK(relativeL2(download(out[4]), concatenate({&ra, &ra})) <= 1e-5);
}

TEST_CASE("graph: chunks of a batch encoded together share barriers") {
  DenseBlock block(4);
  const uint32_t channels = DenseBlock::kFirst + DenseBlock::kLayers * 4;
  Graph g = block.build(GraphOptions{ChannelFormat::float32});
  std::vector<Tensor> x{randomTensor(2, DenseBlock::kInput, 5, 6, 90),
                        randomTensor(1, DenseBlock::kInput, 5, 6, 91)};
  std::vector<std::vector<Image>> inputs, outputs;
  for (const Tensor& t : x) {
    inputs.push_back({makeImage(t, ChannelFormat::float32)});
    outputs.push_back({makePoisoned(context(), {6, 5, channels, t.n, ChannelFormat::float32})});
  }
  CommandBuffer single(context());
  g.encode(single, inputs[1], outputs[1]);
  CommandBuffer cb(context());
  g.encodeBatch(cb, inputs, outputs);
  cb.commit();
  cb.waitUntilCompleted();
  for (size_t c = 0; c < x.size(); ++c)
    CHECK(relativeL2(download(outputs[c][0]), block.reference(x[c])) <= 1e-5);
  CHECK(cb.encodingStatistics().dispatches == 2 * single.encodingStatistics().dispatches);
  CHECK(cb.encodingStatistics().barriers == single.encodingStatistics().barriers);
  VKCNN_CHECK_ERROR(g.encodeBatch(cb, inputs, {outputs[0]}), ErrorCode::invalidArgument,
                    "2 chunks of inputs but 1 of outputs");
}

TEST_CASE("graph: only images too wide for the batch are split along it") {
  // x (4) -> conv1x1 (4096) + relu = wide -> conv1x1 (8) = narrow; out = narrow + conv1x1(x) (8).
  // wide takes 1024 array layers per image, so a 2048-layer device holds 2 of them per Image; the
  // inputs and outputs fit 5 at once, so a batch of 5 is one encode (or any chunks the caller
  // likes), with wide in pieces of 2, 2, 1 and every other image whole.
  const uint32_t wideChannels = 4096, batch = 5;
  const std::vector<float> w1 = randomFloats(wideChannels * 4, 40, -0.5f, 0.5f);
  const std::vector<float> b1 = randomFloats(wideChannels, 41);
  const std::vector<float> w2 = randomFloats(8 * wideChannels, 42, -0.05f, 0.05f);
  const std::vector<float> w3 = randomFloats(8 * 4, 43, -0.5f, 0.5f);
  const uint32_t perImage = Image::maxNumberOfImages(context(), wideChannels);
  CAPTURE(perImage);
  REQUIRE(perImage >= 1);
  const Tensor x = randomTensor(batch, 4, 2, 3, 44);
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    Graph g(context(), GraphOptions{format});
    GraphTensor in = g.input("x", {3, 2, 4});
    GraphTensor wide =
        g.convolution(in, ConvolutionDescriptor::make(1, 1, 4, wideChannels), w1, b1, {}, "wide");
    wide = g.neuron(wide, NeuronDescriptor::relu(), "relu");
    GraphTensor narrow =
        g.convolution(wide, ConvolutionDescriptor::make(1, 1, wideChannels, 8), w2, {}, {}, "n");
    GraphTensor side = g.convolution(in, ConvolutionDescriptor::make(1, 1, 4, 8), w3, {}, {}, "s");
    g.output(g.arithmetic(narrow, side, ArithmeticOperation::add, "sum"), "y");
    g.compile();
    CHECK(g.maxNumberOfImages() >= batch);

    const Tensor xr = roundedTo(x, format);
    Tensor reference = convolve(
        map(convolve(xr, wideChannels, 1, w1, b1), [](double v) { return std::max(v, 0.0); }), 8, 1,
        w2, {});
    const Tensor sideRef = convolve(xr, 8, 1, w3, {});
    for (size_t i = 0; i < reference.data.size(); ++i) reference.data[i] += sideRef.data[i];
    const double tol = format == ChannelFormat::float32 ? 1e-5 : 4e-3;

    // One encode of the whole batch.
    CommandBuffer one(context());
    Image y = makePoisoned(context(), {3, 2, 8, batch, format});
    g.encode(one, {makeImage(x, format, "x")}, {y});
    one.commit();
    one.waitUntilCompleted();
    CHECK(relativeL2(download(y), reference) <= tol);
    // The same batch in chunks of 3 and 2, whose edges fall inside wide's pieces.
    std::vector<std::vector<Image>> inputs, outputs;
    std::vector<Tensor> parts{Tensor(3, 4, 2, 3), Tensor(2, 4, 2, 3)};
    for (uint32_t i = 0; i < batch; ++i)
      for (uint32_t c = 0; c < 4; ++c)
        for (uint32_t p = 0; p < 6; ++p)
          parts[i / 3].at(i % 3, c, p / 3, p % 3) = x.at(i, c, p / 3, p % 3);
    for (const Tensor& t : parts) {
      inputs.push_back({makeImage(t, format, "x")});
      outputs.push_back({makePoisoned(context(), {3, 2, 8, t.n, format})});
    }
    CommandBuffer chunks(context());
    g.encodeBatch(chunks, inputs, outputs);
    chunks.commit();
    chunks.waitUntilCompleted();
    Tensor joined(batch, 8, 2, 3);
    for (size_t part = 0; part < parts.size(); ++part) {
      const Tensor got = download(outputs[part][0]);
      for (uint32_t i = 0; i < got.n; ++i)
        for (uint32_t c = 0; c < 8; ++c)
          for (uint32_t p = 0; p < 6; ++p)
            joined.at(i + 3 * uint32_t(part), c, p / 3, p % 3) = got.at(i, c, p / 3, p % 3);
    }
    CHECK(relativeL2(joined, reference) <= tol);
    // The levels are the same however the batch is cut; the wide layers run once per piece (or
    // per segment where the chunks cut them).
    CHECK(chunks.encodingStatistics().barriers == one.encodingStatistics().barriers);
    if (perImage < batch)
      CHECK(chunks.encodingStatistics().dispatches > one.encodingStatistics().dispatches);
  }
}

TEST_CASE("graph: fully connected layers over a batch in pieces read their weights once") {
  // x (2x2x6) -> fc 4096 + relu = wide -> fc 2048 + relu = wide2 -> fc 10 = y, a batch of 5. wide
  // takes 1024 layers per image (pieces of 2, 2, 1), wide2 512 (4, 1), so each layer runs over
  // several pieces: FullyConnected::encodeBatch gathers them into one Tensor, runs one dispatch
  // and scatters the results (P pieces: 2P + 1 dispatches). Forced to the per-piece path
  // (the choice VKCNN_FULLY_CONNECTED=pieces forces), the same results.
  const uint32_t batch = 5;
  const std::vector<float> w1 = randomFloats(4096 * 24, 60, -0.4f, 0.4f),
                           b1 = randomFloats(4096, 61);
  const std::vector<float> w2 = randomFloats(2048 * 4096, 62, -0.03f, 0.03f);
  const std::vector<float> b2 = randomFloats(2048, 63);
  const std::vector<float> w3 = randomFloats(10 * 2048, 64, -0.05f, 0.05f);
  const Tensor x = randomTensor(batch, 6, 2, 2, 65);
  // y[i][o] = b[o] + sum over the window of w[o][ky][kx][c] x[i][c][ky][kx], then relu or not.
  auto fc = [](const Tensor& in, uint32_t out, const std::vector<float>& w,
               const std::vector<float>& b, bool relu) {
    ReferenceConvolution c;  // the window spans the source
    c.kernelWidth = in.w, c.kernelHeight = in.h;
    c.inputChannels = in.c, c.outputChannels = out;
    Tensor y = test::convolve(in, c, w, b, 1, 1);
    if (relu)
      for (double& v : y.data) v = std::max(v, 0.0);
    return y;
  };
  const bool pieces = Image::maxNumberOfImages(context(), 4096) == 2 &&
                      Image::maxNumberOfImages(context(), 2048) == 4;
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    Graph g(context(), GraphOptions{format});
    GraphTensor in = g.input("x", {2, 2, 6});
    GraphTensor wide = g.fullyConnected(
        in, ConvolutionDescriptor::make(2, 2, 6, 4096, NeuronDescriptor::relu()), w1, b1, "fc1");
    GraphTensor wide2 = g.fullyConnected(
        wide, ConvolutionDescriptor::make(1, 1, 4096, 2048, NeuronDescriptor::relu()), w2, b2,
        "fc2");
    g.output(g.fullyConnected(wide2, ConvolutionDescriptor::make(1, 1, 2048, 10), w3, {}, "fc3"),
             "y");
    g.compile();
    REQUIRE(g.maxNumberOfImages() >= batch);
    const Tensor xr = roundedTo(x, format);
    const Tensor reference =
        fc(fc(fc(xr, 4096, w1, b1, true), 2048, w2, b2, true), 10, w3, {}, false);
    const double tol = format == ChannelFormat::float32 ? 1e-5 : 4e-3;
    for (const char* mode : {"", "pieces"}) {
      CAPTURE(std::string(mode));
      ScopedChoice forced;
      if (*mode) forceChoice(&detail::ChoiceOverrides::fullyConnected, mode);
      CommandBuffer cb(context());
      Image y = makePoisoned(context(), {1, 1, 10, batch, format});
      g.encode(cb, {makeImage(x, format, "x")}, {y});
      cb.commit();
      cb.waitUntilCompleted();
      CHECK(relativeL2(download(y), reference) <= tol);
      // fc1 and fc2 over 3 segments, fc3 over 2: 3 + 7 + 5 batched (fc1's 6 input channels, not
      // whole slices, take one encode per piece), 3 + 3 + 2 per piece. On matrix units a float16
      // batch takes one dispatch more a layer (fully_connected_matrix, then the splits added).
      const DeviceCapabilities& caps = context().capabilities();
      const uint32_t matrix =
          caps.matrixUnits && caps.subgroupSize == 32 && format == ChannelFormat::float16 ? 2 : 0;
      if (pieces) CHECK(cb.encodingStatistics().dispatches == (*mode ? 8u : 15u + matrix));
    }
  }
}

TEST_CASE("graph: residual adds fold into the convolution producing one of their inputs") {
  // x(6) -> conv1 3x3 + relu = a; relu(conv2 3x3(a) + a) = s1 (identity shortcut);
  // relu(conv3b 3x3(conv3a 1x1(s1)) + conv4 1x1(s1)) = s2 (a projection shortcut built after the
  // main path, as torchvision's resnets export it: conv3b, on the longer chain, takes the add and
  // reads conv4's result, which comes after it in build order; conv4 runs beside conv3a);
  // conv5 1x1(s2) + s2 = s3, where conv5's result is also an output and keeps its own image.
  const std::vector<float> w1 = randomFloats(6 * 9 * 6, 1, -0.4f, 0.4f), b1 = randomFloats(6, 2);
  const std::vector<float> w2 = randomFloats(6 * 9 * 6, 3, -0.4f, 0.4f), b2 = randomFloats(6, 4);
  const std::vector<float> w3 = randomFloats(8 * 6, 5, -0.5f, 0.5f), b3 = randomFloats(8, 6);
  const std::vector<float> w3b = randomFloats(8 * 9 * 8, 11, -0.3f, 0.3f);
  const std::vector<float> w4 = randomFloats(8 * 6, 7, -0.5f, 0.5f);
  const std::vector<float> w5 = randomFloats(8 * 8, 8, -0.5f, 0.5f), b5 = randomFloats(8, 9);
  auto build = [&](const GraphOptions& options) {
    Graph g(context(), options);
    GraphTensor x = g.input("x", {9, 7, 6});
    GraphTensor a = g.convolution(x, ConvolutionDescriptor::make(3, 3, 6, 6), w1, b1, {}, "conv1");
    a = g.neuron(a, NeuronDescriptor::relu(), "relu1");
    GraphTensor b = g.convolution(a, ConvolutionDescriptor::make(3, 3, 6, 6), w2, b2, {}, "conv2");
    GraphTensor s1 = g.arithmetic(b, a, ArithmeticOperation::add, "add1");
    s1 = g.neuron(s1, NeuronDescriptor::relu(), "relu2");
    GraphTensor m =
        g.convolution(s1, ConvolutionDescriptor::make(1, 1, 6, 8), w3, b3, {}, "conv3a");
    m = g.convolution(m, ConvolutionDescriptor::make(3, 3, 8, 8), w3b, {}, {}, "conv3b");
    GraphTensor d = g.convolution(s1, ConvolutionDescriptor::make(1, 1, 6, 8), w4, {}, {}, "conv4");
    GraphTensor s2 = g.arithmetic(m, d, ArithmeticOperation::add, "add2");
    s2 = g.neuron(s2, NeuronDescriptor::relu(), "relu3");
    GraphTensor e = g.convolution(s2, ConvolutionDescriptor::make(1, 1, 8, 8), w5, b5, {}, "conv5");
    GraphTensor s3 = g.arithmetic(s2, e, ArithmeticOperation::add, "add3");
    g.output(s3, "s3");
    g.output(e, "e");
    return g;
  };
  auto relu = [](double v) { return std::max(v, 0.0); };
  auto reference = [&](const Tensor& x) {
    const Tensor a = map(convolve(x, 6, 3, w1, b1), relu);
    Tensor s1 = convolve(a, 6, 3, w2, b2);
    for (size_t i = 0; i < s1.data.size(); ++i) s1.data[i] = relu(s1.data[i] + a.data[i]);
    Tensor s2 = convolve(convolve(s1, 8, 1, w3, b3), 8, 3, w3b, {});
    const Tensor d = convolve(s1, 8, 1, w4, {});
    for (size_t i = 0; i < s2.data.size(); ++i) s2.data[i] = relu(s2.data[i] + d.data[i]);
    const Tensor e = convolve(s2, 8, 1, w5, b5);
    Tensor s3 = e;
    for (size_t i = 0; i < s3.data.size(); ++i) s3.data[i] += s2.data[i];
    return std::pair{s3, e};
  };
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    const Tensor x = roundedTo(randomTensor(2, 6, 7, 9, 10), format);
    const Image input = makeImage(x, format, "x");
    const auto [s3, e] = reference(x);
    for (bool optimize : {true, false}) {
      CAPTURE(optimize);
      GraphOptions options;
      options.channelFormat = format;
      options.optimize = optimize;
      Graph g = build(options);
      CommandBuffer cb(context());
      std::vector<Image> out = g.encode(cb, {input});
      cb.commit();
      cb.waitUntilCompleted();
      const double tol = format == ChannelFormat::float32 ? 1e-5 : 4e-3;
      CHECK(relativeL2(download(out[0]), s3) <= tol);
      CHECK(relativeL2(download(out[1]), e) <= tol);
      const GraphStatistics stats = g.statistics();
      if (optimize) {
        CHECK(stats.fusedResiduals == 2);
        CHECK(stats.kernels ==
              7);  // conv1, conv2 + a, conv3a, conv3b + conv4's, conv4, conv5, add3
        const std::vector<std::string> lines = g.describe();
        CHECK(std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
                return l.find("+ residual") != std::string::npos;
              }) == 2);
        CHECK(std::find(lines.begin(), lines.end(),
                        "conv3b (convolution + residual 'conv4' + relu) -> 9x7x8") != lines.end());
      } else {
        CHECK(stats.fusedResiduals == 0);
        CHECK(stats.kernels == 12);
      }
    }
  }
}

// The optimizer alone fuses: batch normalisations and affines (per-channel or scalar) fold into
// the convolution before them, compose with the affine or batch normalisation before them, and a
// scalar affine left alone is a linear neuron; the neuron after them is fused too.
TEST_CASE("graph: batch normalisations and affines fold into convolutions or compose") {
  const uint32_t c = 5;
  const auto w = randomFloats(c * 3 * 3 * 3, 40, -0.5f, 0.5f), b = randomFloats(c, 41);
  const auto s1 = randomFloats(c, 42, 0.5f, 2.f), t1 = randomFloats(c, 43);
  const auto s2 = randomFloats(c, 44, -2.f, -0.5f), t2 = randomFloats(c, 45);
  BatchNormalizationParameters bn;
  bn.mean = randomFloats(c, 46);
  bn.variance = randomFloats(c, 47, 0.5f, 2.f);
  bn.gamma = randomFloats(c, 48, 0.5f, 1.5f);
  bn.beta = randomFloats(c, 49);
  bn.epsilon = 1e-3f;
  // a = relu(0.5 * bn(s1 * conv(x) + t1) - 0.25)    everything in conv1
  // e = relu(2 * (s2 * y + t2) + 1)                  one affine (a depthwise convolution)
  // f = 3 * y                                        a linear neuron
  // d = s1 * bn(y) + t1                              one affine
  auto build = [&](const GraphOptions& options) {
    Graph g(context(), options);
    GraphTensor x = g.input("x", {9, 7, 3}), y = g.input("y", {6, 4, c});
    GraphTensor a = g.convolution(x, ConvolutionDescriptor::make(3, 3, 3, c), w, b, {}, "conv1");
    a = g.affine(a, s1, t1, "scale1");
    a = g.batchNormalization(a, bn, "bn1");
    a = g.affine(a, {0.5f}, {-0.25f}, "half");
    a = g.neuron(a, NeuronDescriptor::relu(), "relu1");
    GraphTensor e = g.affine(y, s2, t2, "scale2");
    e = g.affine(e, {2.f}, {1.f}, "double");
    e = g.neuron(e, NeuronDescriptor::relu(), "relu2");
    GraphTensor f = g.affine(y, {3.f}, {0.f}, "triple");
    GraphTensor d = g.batchNormalization(y, bn, "bn2");
    d = g.affine(d, s1, t1, "scale3");
    g.output(a, "a");
    g.output(e, "e");
    g.output(f, "f");
    g.output(d, "d");
    return g;
  };
  auto normalize = [&](double v, uint32_t ch) {
    return (v - bn.mean[ch]) / std::sqrt(double(bn.variance[ch]) + bn.epsilon) * bn.gamma[ch] +
           bn.beta[ch];
  };
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    const Tensor x = roundedTo(randomTensor(2, 3, 7, 9, 50), format);
    const Tensor y = roundedTo(randomTensor(2, c, 4, 6, 51), format);
    Tensor a = convolve(x, c, 3, w, b), e = y, f = y, d = y;
    for (uint32_t i = 0; i < 2; ++i)
      for (uint32_t ch = 0; ch < c; ++ch) {
        for (uint32_t p = 0; p < 7 * 9; ++p) {
          double& v = a.at(i, ch, p / 9, p % 9);
          v = std::max(0.5 * normalize(s1[ch] * v + t1[ch], ch) - 0.25, 0.0);
        }
        for (uint32_t p = 0; p < 4 * 6; ++p) {
          const double v = y.at(i, ch, p / 6, p % 6);
          e.at(i, ch, p / 6, p % 6) = std::max(2 * (s2[ch] * v + t2[ch]) + 1, 0.0);
          f.at(i, ch, p / 6, p % 6) = 3 * v;
          d.at(i, ch, p / 6, p % 6) = s1[ch] * normalize(v, ch) + t1[ch];
        }
      }
    for (bool optimize : {true, false}) {
      CAPTURE(optimize);
      GraphOptions options;
      options.channelFormat = format;
      options.optimize = optimize;
      Graph g = build(options);
      std::vector<Image> outputs;
      for (const auto& [width, height] : {std::pair{9u, 7u}, {6u, 4u}, {6u, 4u}, {6u, 4u}})
        outputs.push_back(makePoisoned(context(), {width, height, c, 2, format}));
      runOnce([&](CommandBuffer& cb) {
        g.encode(cb, {makeImage(x, format), makeImage(y, format)}, outputs);
      });
      const double tol = format == ChannelFormat::float32 ? 1e-5 : 4e-3;
      CHECK(relativeL2(download(outputs[0]), a) <= tol);
      CHECK(relativeL2(download(outputs[1]), e) <= tol);
      CHECK(relativeL2(download(outputs[2]), f) <= tol);
      CHECK(relativeL2(download(outputs[3]), d) <= tol);
      const GraphStatistics stats = g.statistics();
      if (optimize) {
        CHECK(stats.kernels == 4);
        CHECK(stats.foldedBatchNormalizations == 1);
        CHECK(stats.foldedAffines == 4);  // two into conv1, "double" and "scale3" composed
        CHECK(stats.fusedNeurons == 2);
        const std::vector<std::string> lines = g.describe();
        CHECK(std::find(lines.begin(), lines.end(),
                        "conv1 (convolution + batch norm + affine + relu) -> 9x7x5") !=
              lines.end());
        CHECK(std::find(lines.begin(), lines.end(), "scale2 (affine + relu) -> 6x4x5") !=
              lines.end());
        CHECK(std::find(lines.begin(), lines.end(), "triple (neuron) -> 6x4x5") == lines.end());
      } else {
        CHECK(stats.kernels == 11);
        CHECK(stats.foldedAffines == 0);
      }
    }
  }
  Graph g(context());
  GraphTensor y = g.input("y", {6, 4, c});
  VKCNN_CHECK_ERROR(g.affine(y, {1.f, 2.f}, {0.f, 0.f}), ErrorCode::invalidArgument,
                    "2 scales and 2 shifts for 5 channels");
  VKCNN_CHECK_ERROR(g.affine(y, {1.f}, {}), ErrorCode::invalidArgument, "1 scales and 0 shifts");
  BatchNormalizationParameters negative = bn;
  negative.variance[3] = -1.f;
  VKCNN_CHECK_ERROR(g.batchNormalization(y, negative), ErrorCode::invalidArgument,
                    "variance[3] + epsilon");
}
