// SqueezeExcitation against a double-precision reference written here (the MLP per image, the
// scale per channel), over channel counts that are and are not multiples of 4, reduced widths, map
// sizes from 1x1 to large enough that the map is split into layer groups and pixel chunks, batch
// 1 to 3 and sub-ranges, both gates, an unaligned destination channel offset, float32 and float16,
// into poisoned destinations; the errors for what does not fit; and the Graph's fusion of a
// squeeze-and-excitation block (and of x * sigmoid(x) into a silu neuron) against the same graph
// with the fusions off; NaN and infinities in the map and in the means.
#include <vkcnn/arithmetic.h>
#include <vkcnn/graph.h>
#include <vkcnn/pooling.h>
#include <vkcnn/squeeze_excitation.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "scoped_choice.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Weights {
  std::vector<float> fc1, b1, fc2, b2;
};

Weights randomWeights(uint32_t C, uint32_t R, uint32_t seed, bool biases = true) {
  const float s1 = 2.f / std::sqrt(float(C)), s2 = 2.f / std::sqrt(float(R));
  Weights w{randomFloats(size_t(R) * C, seed, -s1, s1),
            {},
            randomFloats(size_t(C) * R, seed + 1, -s2, s2),
            {}};
  if (biases) {
    w.b1 = randomFloats(R, seed + 2, -0.5f, 0.5f);
    w.b2 = randomFloats(C, seed + 3, -0.5f, 0.5f);
  }
  return w;
}

// gate(fc2(inner(fc1(mean)))) for one image, written out independently of the library.
std::vector<double> gates(const SqueezeExcitationDescriptor& d, const Weights& w,
                          const std::vector<double>& mean) {
  const uint32_t C = d.featureChannels, R = d.reducedChannels;
  std::vector<double> hidden(R), g(C);
  for (uint32_t j = 0; j < R; ++j) {
    double s = w.b1.empty() ? 0 : w.b1[j];
    for (uint32_t c = 0; c < C; ++c) s += double(w.fc1[size_t(j) * C + c]) * mean[c];
    hidden[j] = d.inner.type == NeuronType::relu   ? nanMax(s, 0.0)
                : d.inner.type == NeuronType::silu ? s / (1 + std::exp(-s))
                                                   : applyNeuron(d.inner, s, j);
  }
  for (uint32_t c = 0; c < C; ++c) {
    double s = w.b2.empty() ? 0 : w.b2[c];
    for (uint32_t j = 0; j < R; ++j) s += double(w.fc2[size_t(c) * R + j]) * hidden[j];
    g[c] = d.gate.type == NeuronType::sigmoid
               ? 1 / (1 + std::exp(-s))
               : std::clamp(double(d.gate.a) * s + d.gate.b, 0.0, 1.0);
  }
  return g;
}

struct Case {
  uint32_t C, R, width, height, images;
  NeuronDescriptor inner, gate;
  ChannelFormat format = ChannelFormat::float32;
  // Batch sub-range: source images from offsetZ, means from meansZ, destination from clipZ.
  uint32_t offsetZ = 0, meansZ = 0, clipZ = 0, depth = kWholeExtent;
  uint32_t destinationChannelOffset = 0, destinationExtraChannels = 0;
  uint32_t seed = 1;
};

void runCase(const Case& k) {
  CAPTURE(k.C);
  CAPTURE(k.R);
  CAPTURE(k.width);
  CAPTURE(k.height);
  CAPTURE(k.images);
  CAPTURE(k.format);
  CAPTURE(k.inner.type);
  CAPTURE(k.gate.type);
  const uint32_t n = k.depth == kWholeExtent ? k.images - k.offsetZ : k.depth;
  const Tensor x = roundedTo(randomTensor(k.images, k.C, k.height, k.width, k.seed), k.format);
  const Tensor means =
      roundedTo(randomTensor(k.meansZ + n, k.C, 1, 1, k.seed + 11, -2, 2), k.format);
  const Weights w = randomWeights(k.C, k.R, k.seed + 20, k.seed % 3 != 0);
  const SqueezeExcitationDescriptor d{k.C, k.R, k.inner, k.gate};
  SqueezeExcitation se(context(), d, w.fc1, w.b1, w.fc2, w.b2);
  se.offset.z = int32_t(k.offsetZ);
  se.secondaryOffset.z = int32_t(k.meansZ);
  se.clipRect.z = k.clipZ;
  se.clipRect.depth = k.depth;
  se.destinationFeatureChannelOffset = k.destinationChannelOffset;
  Image xi = makeImage(x, k.format, "x"), mi = makeImage(means, k.format, "means");
  ImageDescriptor dd;
  dd.width = k.width;
  dd.height = k.height;
  dd.featureChannels = k.destinationChannelOffset + k.C + k.destinationExtraChannels;
  dd.numberOfImages = k.clipZ + n + (k.depth == kWholeExtent ? 0 : 1);
  dd.channelFormat = k.format;
  Image y = makePoisoned(context(), dd);
  runOnce([&](CommandBuffer& cb) { se.encode(cb, xi, mi, y); });

  Tensor want(dd.numberOfImages, dd.featureChannels, dd.height, dd.width, kNaN);
  for (uint32_t i = 0; i < n; ++i) {
    std::vector<double> mean(k.C);
    for (uint32_t c = 0; c < k.C; ++c) mean[c] = means.at(k.meansZ + i, c, 0, 0);
    const std::vector<double> g = gates(d, w, mean);
    for (uint32_t c = 0; c < k.C; ++c) {
      for (uint32_t yy = 0; yy < k.height; ++yy)
        for (uint32_t xx = 0; xx < k.width; ++xx)
          want.at(k.clipZ + i, k.destinationChannelOffset + c, yy, xx) =
              x.at(k.offsetZ + i, c, yy, xx) * g[c];
    }
  }
  compare(download(y), want, tolerance(k.format));
}

const NeuronDescriptor kRelu = NeuronDescriptor::relu();
const NeuronDescriptor kSilu = NeuronDescriptor::of(NeuronType::silu);
const NeuronDescriptor kSigmoid = NeuronDescriptor::of(NeuronType::sigmoid);
const NeuronDescriptor kHardSigmoid = NeuronDescriptor::of(NeuronType::hardSigmoid, 1 / 6.f, 0.5f);

}  // namespace

TEST_CASE("squeeze excitation: channels, reduced widths, map sizes, batches and gates, float32") {
  const uint32_t channels[] = {1, 3, 4, 5, 13, 16, 17, 37};
  const uint32_t reduced[] = {1, 2, 8, 3};
  const uint32_t sizes[][2] = {{1, 1}, {3, 5}, {7, 7}, {17, 9}, {2, 1}};
  uint32_t k = 0;
  for (uint32_t C : channels)
    for (const NeuronDescriptor& gate : {kSigmoid, kHardSigmoid}) {
      const auto& s = sizes[k % 5];
      runCase({C, reduced[k % 4], s[0], s[1], 1 + k % 3, k % 2 ? kSilu : kRelu, gate,
               ChannelFormat::float32, 0, 0, 0, kWholeExtent, 0, 0, 100 + k});
      ++k;
    }
}

TEST_CASE("squeeze excitation: maps split into pixel chunks and layer groups") {
  // 64x64 of one layer: several pixel chunks of one layer group.
  runCase({4, 2, 64, 64, 2, kRelu, kSigmoid, ChannelFormat::float32});
  // 61x37, 6 layers: chunks of a layer group that do not divide the map evenly.
  runCase({23, 5, 61, 37, 1, kSilu, kHardSigmoid, ChannelFormat::float32, 0, 0, 0, kWholeExtent, 0,
           0, 7});
  // A wide MLP (1100 -> 300) caps the workgroups: groups of many layers over a 7x7 map.
  runCase({1100, 300, 7, 7, 1, kRelu, kSigmoid, ChannelFormat::float32, 0, 0, 0, kWholeExtent, 0, 0,
           9});
  // The largest widths the shader holds.
  runCase({SqueezeExcitation::kMaxFeatureChannels, 16, 2, 2, 1, kSilu, kSigmoid,
           ChannelFormat::float32, 0, 0, 0, kWholeExtent, 0, 0, 10});
  runCase({40, SqueezeExcitation::kMaxReducedChannels, 3, 3, 1, kRelu, kHardSigmoid,
           ChannelFormat::float32, 0, 0, 0, kWholeExtent, 0, 0, 11});
}

TEST_CASE("squeeze excitation: batch sub-ranges and an unaligned destination channel window") {
  for (uint32_t offset : {0u, 1u, 2u, 5u})
    runCase({13, 4, 5, 6, 3, kSilu, kSigmoid, ChannelFormat::float32, 1, 2, 1, 2, offset, 3,
             200 + offset});
}

TEST_CASE("squeeze excitation: float16 on small shapes") {
  uint32_t k = 0;
  for (uint32_t C : {3u, 8u, 13u})
    for (const NeuronDescriptor& gate : {kSigmoid, kHardSigmoid}) {
      runCase({C, 1 + C / 4, 5, 4, 1 + k % 2, k % 2 ? kRelu : kSilu, gate, ChannelFormat::float16,
               0, 0, 0, kWholeExtent, k % 3 == 2 ? 2u : 0u, 0, 300 + k});
      ++k;
    }
}

TEST_CASE("squeeze excitation: NaN and infinities propagate as in PyTorch") {
  // Image 0: a +inf mean (the MLP's infinities go through relu and the gates: relu(-inf) = 0,
  // sigmoid(+-inf) = 1 or 0, inf - inf = NaN); image 1: NaN, +inf and -inf pixels with finite
  // means; image 2: a NaN mean, so every gate and output of it is NaN.
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16})
    for (const NeuronDescriptor& gate : {kSigmoid, kHardSigmoid}) {
      CAPTURE(format);
      CAPTURE(gate.type);
      const uint32_t C = 6, R = 3, W = 4, H = 3;
      Tensor x = roundedTo(randomTensor(3, C, H, W, 61), format);
      Tensor means = roundedTo(randomTensor(3, C, 1, 1, 62, -2, 2), format);
      means.at(0, 2, 0, 0) = INFINITY;
      x.at(1, 0, 1, 1) = NAN;
      x.at(1, 3, 0, 2) = INFINITY;
      x.at(1, 4, 2, 3) = -INFINITY;
      means.at(2, 5, 0, 0) = NAN;
      const Weights w = randomWeights(C, R, 63);
      const SqueezeExcitationDescriptor d{C, R, kRelu, gate};
      SqueezeExcitation se(context(), d, w.fc1, w.b1, w.fc2, w.b2);
      Image xi = makeImage(x, format, "x"), mi = makeImage(means, format, "means");
      Image y(context(), {W, H, C, 3, format});
      fill(y, 1234.f);
      runOnce([&](CommandBuffer& cb) { se.encode(cb, xi, mi, y); });
      Tensor want(3, C, H, W);
      for (uint32_t i = 0; i < 3; ++i) {
        std::vector<double> mean(C);
        for (uint32_t c = 0; c < C; ++c) mean[c] = means.at(i, c, 0, 0);
        const std::vector<double> g = gates(d, w, mean);
        for (uint32_t c = 0; c < C; ++c)
          for (uint32_t yy = 0; yy < H; ++yy)
            for (uint32_t xx = 0; xx < W; ++xx) want.at(i, c, yy, xx) = x.at(i, c, yy, xx) * g[c];
      }
      compareSpecials(download(y), want, format == ChannelFormat::float32 ? 1e-5 : 2e-3);
    }
}

TEST_CASE("squeeze excitation: within 16 KiB of shared memory, the 2048-channel shader runs") {
  // The 4096-channel shader holds 24 KiB of means and hidden values (reflected from its SPIR-V);
  // within 16 KiB (VKCNN_MAX_SHARED_MEMORY, as devices with Vulkan's least, and the mobile device
  // profile) a block of at most 2048 channels reduced to 512 runs on squeeze_excitation_small
  // (12 KiB), and a larger one's pipeline is refused by name instead of failing in the driver.
  setenv("VKCNN_MAX_SHARED_MEMORY", "16384", 1);
  Context small = makeContext();
  unsetenv("VKCNN_MAX_SHARED_MEMORY");
  for (uint32_t C : {8u, 2048u}) {
    CAPTURE(C);
    const uint32_t R = C == 8 ? 2 : 3;
    const SqueezeExcitationDescriptor d{C, R, kRelu, kSigmoid};
    const Weights w = randomWeights(C, R, C);
    SqueezeExcitation se(small, d, w.fc1, w.b1, w.fc2, w.b2);
    Image x(small, {3, 3, C, 2, ChannelFormat::float32, ImageUsage::all, "x"});
    Image means(small, {1, 1, C, 2, ChannelFormat::float32, ImageUsage::all, "means"});
    Image y(small, {3, 3, C, 2, ChannelFormat::float32, ImageUsage::all, "y"});
    fill(x, 2.f);
    fill(means, 0.5f);
    CommandBuffer cb(small);
    se.encode(cb, x, means, y);
    cb.commit();
    cb.waitUntilCompleted();
    const std::vector<double> g = gates(d, w, std::vector<double>(C, 0.5));
    Tensor want(2, C, 3, 3);
    for (uint32_t i = 0; i < 2; ++i)
      for (uint32_t c = 0; c < C; ++c)
        for (uint32_t p = 0; p < 9; ++p) want.at(i, c, p / 3, p % 3) = 2 * g[c];
    compare(download(y), want, 1e-5);
  }
  const uint32_t C = 2052;
  const Weights w = randomWeights(C, 2, 1);
  SqueezeExcitation se(small, {C, 2, kRelu, kSigmoid}, w.fc1, w.b1, w.fc2, w.b2);
  Image x(small, {3, 3, C, 1, ChannelFormat::float32, ImageUsage::all, "x"});
  Image means(small, {1, 1, C, 1, ChannelFormat::float32, ImageUsage::all, "means"});
  Image y(small, {3, 3, C, 1, ChannelFormat::float32, ImageUsage::all, "y"});
  CommandBuffer cb(small);
  VKCNN_CHECK_ERROR(se.encode(cb, x, means, y), ErrorCode::unsupported,
                    "bytes of shared memory, more than the device's 16384");
}

TEST_CASE("squeeze excitation: errors name what does not fit") {
  const Weights w = randomWeights(8, 2, 1);
  const SqueezeExcitationDescriptor d{8, 2, kRelu, kSigmoid};
  VKCNN_CHECK_ERROR((void)SqueezeExcitation(context(), d, w.b2, w.b1, w.fc2, w.b2),
                    ErrorCode::invalidArgument, "8 fc1 weight values; expected 16");
  VKCNN_CHECK_ERROR(
      (void)SqueezeExcitation(context(), {8, 2, kRelu, kSigmoid}, w.fc1, w.b2, w.fc2, w.b2),
      ErrorCode::invalidArgument, "fc1 bias");
  VKCNN_CHECK_ERROR(
      (void)SqueezeExcitation(context(), {0, 2, kRelu, kSigmoid}, w.fc1, w.b1, w.fc2, w.b2),
      ErrorCode::invalidArgument, "0 channels reduced to 2");
  VKCNN_CHECK_ERROR(
      (void)SqueezeExcitation(context(), {8, 2000, kRelu, kSigmoid}, w.fc1, w.b1, w.fc2, w.b2),
      ErrorCode::invalidArgument, "1 to 1024 reduced");
  NeuronDescriptor prelu{NeuronType::prelu};
  prelu.preluSlopes = {0.1f};
  VKCNN_CHECK_ERROR(
      (void)SqueezeExcitation(context(), {8, 2, prelu, kSigmoid}, w.fc1, w.b1, w.fc2, w.b2),
      ErrorCode::invalidArgument, "inner neuron prelu");
  VKCNN_CHECK_ERROR((void)SqueezeExcitation(
                        context(), {8, 2, kRelu, NeuronDescriptor::of(NeuronType::power, 1, 1, 2)},
                        w.fc1, w.b1, w.fc2, w.b2),
                    ErrorCode::invalidArgument, "gate neuron power");
  SqueezeExcitation se(context(), d, w.fc1, w.b1, w.fc2, w.b2);
  Image x = makeImage(randomTensor(1, 8, 3, 3, 1), ChannelFormat::float32, "x");
  Image wide = makeImage(randomTensor(1, 8, 2, 1, 2), ChannelFormat::float32, "wide means");
  Image few = makeImage(randomTensor(1, 5, 1, 1, 3), ChannelFormat::float32, "few means");
  ImageDescriptor dd;
  dd.width = dd.height = 3;
  dd.featureChannels = 8;
  dd.channelFormat = ChannelFormat::float32;
  Image y = makePoisoned(context(), dd);
  CommandBuffer cb(context());
  VKCNN_CHECK_ERROR(se.encode(cb, x, wide, y), ErrorCode::invalidArgument, "must be 1x1");
  VKCNN_CHECK_ERROR(se.encode(cb, x, few, y), ErrorCode::invalidArgument,
                    "a means window of 5 channels");
}

namespace {

// x -> [GlobalAveragePool -> 1x1 conv + inner -> 1x1 conv -> gate] -> x * gate (the product's
// operands in either order); a SiLU inner neuron as Mul(h, Sigmoid(h)), as ONNX has it.
Graph buildSe(uint32_t C, uint32_t R, const Weights& w, bool siluAsMul, bool hardGate,
              bool gateFirst, bool gateAlsoOutput) {
  GraphOptions o;
  o.channelFormat = ChannelFormat::float32;
  Graph g(context(), o);
  GraphTensor x = g.input("x", {9, 7, C});
  GraphTensor mean = g.unary(x, std::make_shared<GlobalPoolingAverage>(context()), "pool");
  ConvolutionDescriptor d1 = ConvolutionDescriptor::make(1, 1, C, R);
  if (!siluAsMul) d1.neuron = NeuronDescriptor::relu();
  GraphTensor h = g.convolution(mean, d1, w.fc1, w.b1, {}, "fc1");
  if (siluAsMul)
    h = g.arithmetic(h, g.neuron(h, kSigmoid, "sigmoid"), ArithmeticOperation::multiply, "silu");
  GraphTensor s = g.convolution(h, ConvolutionDescriptor::make(1, 1, R, C), w.fc2, w.b2, {}, "fc2");
  s = g.neuron(s, hardGate ? kHardSigmoid : kSigmoid, "gate");
  GraphTensor y = gateFirst ? g.arithmetic(s, x, ArithmeticOperation::multiply, "scale")
                            : g.arithmetic(x, s, ArithmeticOperation::multiply, "scale");
  g.output(y, "y");
  if (gateAlsoOutput) g.output(s, "gate");
  return g;
}

Tensor runGraph(Graph& g, const Tensor& x) {
  Image xi = makeImage(x, ChannelFormat::float32, "x");
  std::vector<Image> out;
  runOnce([&](CommandBuffer& cb) { out = g.encode(cb, {xi}); });
  return download(out[0]);
}

}  // namespace

TEST_CASE("graph: a squeeze-and-excitation block is fused and gives the unfused result") {
  const uint32_t C = 13, R = 4;
  const Weights w = randomWeights(C, R, 77);
  const Tensor x = randomTensor(1, C, 7, 9, 78);
  for (bool siluAsMul : {false, true})
    for (bool hardGate : {false, true})
      for (bool gateFirst : {false}) {  // Mul(gate, x): the ONNX test (the importer swaps)
        CAPTURE(siluAsMul);
        CAPTURE(hardGate);
        CAPTURE(gateFirst);
        Graph fused = buildSe(C, R, w, siluAsMul, hardGate, gateFirst, false);
        fused.compile();
        const GraphStatistics s = fused.statistics();
        CHECK(s.fusedSqueezeExcitations == 1);
        CHECK(s.fusedSilus == (siluAsMul ? 1u : 0u));
        CHECK(s.kernels == 2);  // the pool and the SqueezeExcitation
        const Tensor got = runGraph(fused, x);

        ScopedFusion unfused;
        forceFusion(&detail::Overrides::fuseSqueezeExcitation, false);
        forceFusion(&detail::Overrides::fuseSilu, false);
        Graph plain = buildSe(C, R, w, siluAsMul, hardGate, gateFirst, false);
        plain.compile();
        CHECK(plain.statistics().fusedSqueezeExcitations == 0);
        CHECK(plain.statistics().kernels == (siluAsMul ? 6u : 4u));
        const Tensor want = runGraph(plain, x);
        CHECK(relativeL2(got, want) <= 1e-5);
        // And the reference of the kernel test.
        std::vector<double> mean(C, 0.0);
        for (uint32_t c = 0; c < C; ++c) {
          for (double v :
               std::vector<double>(x.data.begin() + c * 63, x.data.begin() + (c + 1) * 63))
            mean[c] += v / 63;
        }
        const std::vector<double> gv =
            gates({C, R, siluAsMul ? kSilu : kRelu, hardGate ? kHardSigmoid : kSigmoid}, w, mean);
        Tensor ref = x;
        for (uint32_t c = 0; c < C; ++c)
          for (size_t k = 0; k < 63; ++k) ref.data[c * 63 + k] *= gv[c];
        CHECK(relativeL2(got, ref) <= 1e-5);
      }
}

TEST_CASE("graph: a block whose intermediate values are read elsewhere is not fused") {
  const uint32_t C = 8, R = 2;
  const Weights w = randomWeights(C, R, 5);
  Graph g = buildSe(C, R, w, false, false, false, true);
  g.compile();
  CHECK(g.statistics().fusedSqueezeExcitations == 0);
  CHECK(g.statistics().kernels == 4);
}

TEST_CASE("graph: a block with more fc1 weights than the fusion limit stays as it is") {
  const uint32_t C = 160, R = SqueezeExcitation::kFusedWeightLimit / 160 + 1;
  Graph g = buildSe(C, R, randomWeights(C, R, 6), false, false, false, false);
  g.compile();
  CHECK(g.statistics().fusedSqueezeExcitations == 0);
  // VKCNN_SE_MAX_WEIGHTS=C*R, as the Context reads it when it starts.
  ScopedFusion limit;
  detail::Overrides raised = detail::overrides(context());
  raised.squeezeExcitationMaxWeights = uint64_t(C) * R;
  detail::setFusionOverrides(context(), raised);
  Graph h = buildSe(C, R, randomWeights(C, R, 6), false, false, false, false);
  h.compile();
  CHECK(h.statistics().fusedSqueezeExcitations == 1);
}

TEST_CASE("graph: x * sigmoid(x) after a convolution is one kernel") {
  const uint32_t C = 6;
  GraphOptions o;
  o.channelFormat = ChannelFormat::float32;
  Graph g(context(), o);
  GraphTensor x = g.input("x", {5, 4, 3});
  const auto w = randomFloats(size_t(C) * 3 * 3 * 3, 3), b = randomFloats(C, 4);
  GraphTensor c = g.convolution(x, ConvolutionDescriptor::make(3, 3, 3, C), w, b, {}, "conv");
  g.output(g.arithmetic(g.neuron(c, kSigmoid, "sigmoid"), c, ArithmeticOperation::multiply, "mul"),
           "y");
  g.compile();
  CHECK(g.statistics().fusedSilus == 1);
  CHECK(g.statistics().kernels == 1);
  const Tensor xt = randomTensor(1, 3, 4, 5, 9);
  const Tensor got = runGraph(g, xt);
  // The convolution alone, then x * sigmoid(x) on the host.
  Graph conv(context(), o);
  GraphTensor xc = conv.input("x", {5, 4, 3});
  conv.output(conv.convolution(xc, ConvolutionDescriptor::make(3, 3, 3, C), w, b, {}, "conv"), "y");
  Tensor want = runGraph(conv, xt);
  for (double& v : want.data) v = v / (1 + std::exp(-v));
  CHECK(relativeL2(got, want) <= 1e-5);
}
