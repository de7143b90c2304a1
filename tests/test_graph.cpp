// Graph: build, optimise (BN folding, neuron fusion, concatenation removal, identity removal) and
// encode; results equal a CPU reference and the same graph unoptimised, with fewer kernels.
#include <cmath>

#include "test_support.h"
#include "vkcnn/graph.h"
#include "vkcnn/pooling.h"
#include "vkcnn/softmax.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// Same-padded convolution (MPS default, stride 1, odd kernel) in double precision, MPS weight
// order.
Tensor convolve(const Tensor& x, uint32_t outChannels, uint32_t k, const std::vector<float>& w,
                const std::vector<float>& b) {
  Tensor y(x.n, outChannels, x.h, x.w);
  const int r = int(k / 2);
  for (uint32_t i = 0; i < x.n; ++i)
    for (uint32_t o = 0; o < outChannels; ++o)
      for (uint32_t yy = 0; yy < x.h; ++yy)
        for (uint32_t xx = 0; xx < x.w; ++xx) {
          double acc = b.empty() ? 0 : b[o];
          for (uint32_t ky = 0; ky < k; ++ky)
            for (uint32_t kx = 0; kx < k; ++kx)
              for (uint32_t c = 0; c < x.c; ++c)
                acc += w[((size_t(o) * k + ky) * k + kx) * x.c + c] *
                       x.atOrZero(i, c, int64_t(yy) + ky - r, int64_t(xx) + kx - r);
          y.at(i, o, yy, xx) = acc;
        }
  return y;
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
