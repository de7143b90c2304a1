// Convolution family against a double-precision CPU reference: dense, grouped and depthwise
// convolution over a sampled sweep of kernel sizes, strides, dilations, groups, channel counts,
// sizes and both padding modes; MPS batch geometry, channel windows and concatenation offsets;
// every fused neuron, PReLU, batch normalisation folding; fully connected layers; .dat weight
// files; and every descriptor error.
#include <unistd.h>
#include <vkcnn/convolution.h>
#include <vkcnn/convolution_tuning.h>
#include <vkcnn/neuron.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <type_traits>

#include "convolution_tiles.h"
#include "kernels/weights.h"
#include "scoped_choice.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// One encode of a Convolution (or FullyConnected) with everything the reference needs.
struct Case {
  ConvolutionDescriptor descriptor;
  Padding padding;
  bool fullyConnected = false;
  bool withBias = true;
  ChannelFormat format = ChannelFormat::float32;
  ChannelFormat sourceFormat = ChannelFormat::float32;  // same as format unless set apart
  bool separateSourceFormat = false;
  uint32_t width = 5, height = 5;
  uint32_t sourceImages = 1;
  uint32_t extraSourceChannels = 0;  // beyond the window, split around it
  uint32_t sourceChannelOffset = 0;  // window start (the window holds inputFeatureChannels)
  uint32_t destinationChannelOffset = 0;
  uint32_t extraDestinationChannels = 0;                 // after the written channels
  uint32_t destinationImages = 0;                        // 0: as many as the clip depth needs
  uint32_t destinationWidth = 0, destinationHeight = 0;  // 0: the kernel's output size
  Offset offset;
  ClipRect clip;
  uint32_t seed = 1;
  // Convolution::encodeWithResidual: a residual of the destination's shape, as a window at this
  // channel of a larger image (extra channels on both sides) when residualChannelOffset > 0.
  bool residual = false;
  uint32_t residualChannelOffset = 0;
  uint32_t imagesSideBySide = 0;  // Convolution::imagesSideBySide
};

std::vector<float> randomWeights(const ConvolutionDescriptor& d, uint32_t seed) {
  // Scaled by fan-in so that outputs stay near 1 whatever the window (neurons like power and
  // logarithm need a*x + b > 0).
  const double fanIn = double(d.kernelWidth) * d.kernelHeight * (d.inputFeatureChannels / d.groups);
  const float a = float(1.5 / std::sqrt(fanIn));
  return randomFloats(d.weightCount(), seed, -a, a);
}

// The destination as the kernel should leave it: NaN (the poison) outside what it writes.
// `residual` (the residual window's channels only) is added before the neuron.
Tensor reference(const Case& c, const Tensor& x, const std::vector<float>& w,
                 const std::vector<float>& bias, uint32_t dstW, uint32_t dstH, uint32_t dstN,
                 uint32_t dstC, const Tensor* residual = nullptr) {
  const ConvolutionDescriptor& d = c.descriptor;
  Tensor y(dstN, dstC, dstH, dstW, std::numeric_limits<double>::quiet_NaN());
  const uint32_t clipW = c.clip.width == kWholeExtent ? dstW - c.clip.x : c.clip.width;
  const uint32_t clipH = c.clip.height == kWholeExtent ? dstH - c.clip.y : c.clip.height;
  const uint32_t n = c.clip.depth == kWholeExtent ? dstN - c.clip.z : c.clip.depth;
  int64_t left = 0, top = 0;
  if (!c.fullyConnected) {
    const bool mps = c.padding.mode == Padding::Mode::mpsDefault;
    left = mps ? int64_t(d.dilatedKernelWidth() >> 1) : int64_t(c.padding.left);
    top = mps ? int64_t(d.dilatedKernelHeight() >> 1) : int64_t(c.padding.top);
  }
  const uint32_t inPerGroup = d.inputFeatureChannels / d.groups;
  const uint32_t outPerGroup = d.outputFeatureChannels / d.groups;
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t o = 0; o < d.outputFeatureChannels; ++o) {
      double scale = 1, shift = 0;
      if (d.batchNormalization) {
        const auto& bn = *d.batchNormalization;
        const double gamma = bn.gamma.empty() ? 1 : bn.gamma[o];
        const double beta = bn.beta.empty() ? 0 : bn.beta[o];
        scale = gamma / std::sqrt(double(bn.variance[o]) + bn.epsilon);
        shift = beta - scale * bn.mean[o];
      }
      const uint32_t g = o / outPerGroup;
      for (uint32_t py = 0; py < clipH; ++py)
        for (uint32_t px = 0; px < clipW; ++px) {
          const int64_t x0 = int64_t(px) * d.strideInPixelsX + c.offset.x - left;
          const int64_t y0 = int64_t(py) * d.strideInPixelsY + c.offset.y - top;
          double sum = 0;
          for (uint32_t ky = 0; ky < d.kernelHeight; ++ky)
            for (uint32_t kx = 0; kx < d.kernelWidth; ++kx)
              for (uint32_t ic = 0; ic < inPerGroup; ++ic) {
                const int64_t sy = y0 + int64_t(ky) * d.dilationRateY;
                const int64_t sx = x0 + int64_t(kx) * d.dilationRateX;
                const uint32_t windowChannel = g * inPerGroup + ic;
                double v = x.atOrZero(uint32_t(c.offset.z) + i,
                                      c.sourceChannelOffset + windowChannel, sy, sx);
                // The activated source; padding stays zero.
                if (const auto& a = d.sourceActivation;
                    a && sy >= 0 && sx >= 0 && sy < int64_t(x.h) && sx < int64_t(x.w)) {
                  v = double(a->scale[windowChannel]) * v + double(a->shift[windowChannel]);
                  if (a->neuron == NeuronType::relu) v = std::max(v, 0.0);
                }
                sum +=
                    v *
                    w[((size_t(o) * d.kernelHeight + ky) * d.kernelWidth + kx) * inPerGroup + ic];
              }
          const double b = bias.empty() ? 0 : bias[o];
          const double r =
              residual ? residual->at(c.clip.z + i, o, c.clip.y + py, c.clip.x + px) : 0;
          y.at(c.clip.z + i, c.destinationChannelOffset + o, c.clip.y + py, c.clip.x + px) =
              applyNeuron(d.neuron, (sum + b) * scale + shift + r, o);
        }
    }
  return y;
}

// Encodes `kernel` (made in `ctx`) once in a command buffer of its own, from float32 images of
// `ctx` holding `x` to a poisoned destination of the same size, and checks it against `expected`
// (whose channel count is the destination's).
void runInContext(const Context& ctx, Convolution& kernel, const Tensor& x,
                  const Tensor& expected) {
  Image source(ctx, {x.w, x.h, x.c, x.n, ChannelFormat::float32, ImageUsage::all, "x"});
  upload(source, x);
  Image destination =
      makePoisoned(ctx, {x.w, x.h, expected.c, x.n, ChannelFormat::float32, ImageUsage::all, "y"});
  CommandBuffer cb(ctx);
  kernel.encode(cb, source, destination);
  cb.commit();
  cb.waitUntilCompleted();
  compare(download(destination), expected, tolerance(ChannelFormat::float32));
}

// Written elements match by relative L2; unwritten ones are still NaN.

template <typename K>
void applyGeometry(K& kernel, const Case& c) {
  kernel.offset = c.offset;
  kernel.clipRect = c.clip;
  kernel.sourceFeatureChannelOffset = c.sourceChannelOffset;
  kernel.sourceFeatureChannelMaxCount = c.descriptor.inputFeatureChannels;
  kernel.destinationFeatureChannelOffset = c.destinationChannelOffset;
}

template <typename K>
void runWith(K& kernel, const Case& c, const Tensor& x, const std::vector<float>& w,
             const std::vector<float>& bias) {
  applyGeometry(kernel, c);
  const ChannelFormat sourceFormat = c.separateSourceFormat ? c.sourceFormat : c.format;
  Image source = makeImage(x, sourceFormat, "x");
  const uint32_t dstW = c.destinationWidth ? c.destinationWidth : kernel.destinationWidth(c.width);
  const uint32_t dstH =
      c.destinationHeight ? c.destinationHeight : kernel.destinationHeight(c.height);
  const uint32_t depth =
      c.clip.depth == kWholeExtent ? c.sourceImages - uint32_t(c.offset.z) : c.clip.depth;
  const uint32_t dstN = c.destinationImages ? c.destinationImages : c.clip.z + depth;
  const uint32_t dstC =
      c.destinationChannelOffset + c.descriptor.outputFeatureChannels + c.extraDestinationChannels;
  Image destination =
      makePoisoned(context(), {dstW, dstH, dstC, dstN, c.format, ImageUsage::all, "y"});
  if (!c.residual) {
    runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
    compare(download(destination), reference(c, x, w, bias, dstW, dstH, dstN, dstC),
            tolerance(c.format));
    return;
  }
  if constexpr (std::is_same_v<K, Convolution>) {
    const uint32_t outC = c.descriptor.outputFeatureChannels;
    const uint32_t around = c.residualChannelOffset ? 3 : 0;  // channels after the window
    const Tensor whole = roundedTo(
        randomTensor(dstN, c.residualChannelOffset + outC + around, dstH, dstW, c.seed + 3),
        c.format);
    Tensor window(dstN, outC, dstH, dstW);
    for (uint32_t i = 0; i < dstN; ++i)
      for (uint32_t o = 0; o < outC; ++o)
        for (uint32_t yy = 0; yy < dstH; ++yy)
          for (uint32_t xx = 0; xx < dstW; ++xx)
            window.at(i, o, yy, xx) = whole.at(i, c.residualChannelOffset + o, yy, xx);
    Image stored = makeImage(whole, c.format, "shortcut");
    const Image residual = c.residualChannelOffset || around
                               ? stored.subImage({c.residualChannelOffset, outC})
                               : stored;
    runOnce(
        [&](CommandBuffer& cb) { kernel.encodeWithResidual(cb, source, residual, destination); });
    compare(download(destination), reference(c, x, w, bias, dstW, dstH, dstN, dstC, &window),
            tolerance(c.format));
  } else {
    FAIL("only Convolution takes a residual");
  }
}

// Builds the kernel from random weights and checks one encode against the reference.
// Checks one case against the reference; returns the configuration the convolution ran.
std::string run(const Case& c) {
  const ConvolutionDescriptor& d = c.descriptor;
  const ChannelFormat sourceFormat = c.separateSourceFormat ? c.sourceFormat : c.format;
  const double lo = sourceFormat == ChannelFormat::unorm8 ? 0 : -1;
  Tensor x = roundedTo(randomTensor(c.sourceImages, d.inputFeatureChannels + c.extraSourceChannels,
                                    c.height, c.width, c.seed, lo, 1),
                       sourceFormat);
  std::vector<float> w = randomWeights(d, c.seed + 1);
  std::vector<float> bias =
      c.withBias ? randomFloats(d.outputFeatureChannels, c.seed + 2) : std::vector<float>{};
  if (c.fullyConnected) {
    FullyConnected kernel(context(), d, w, bias);
    runWith(kernel, c, x, w, bias);
    return {};
  }
  Convolution kernel(context(), d, w, bias);
  kernel.padding = c.padding;
  kernel.imagesSideBySide = c.imagesSideBySide;
  runWith(kernel, c, x, w, bias);
  return kernel.configuration();
}

std::string describe(const Case& c) {
  const ConvolutionDescriptor& d = c.descriptor;
  std::string s =
      std::to_string(d.kernelWidth) + "x" + std::to_string(d.kernelHeight) + " " +
      std::to_string(d.inputFeatureChannels) + "->" + std::to_string(d.outputFeatureChannels) +
      " groups " + std::to_string(d.groups) + " stride " + std::to_string(d.strideInPixelsX) + "x" +
      std::to_string(d.strideInPixelsY) + " dilation " + std::to_string(d.dilationRateX) + "x" +
      std::to_string(d.dilationRateY) + " source " + std::to_string(c.width) + "x" +
      std::to_string(c.height) + "x" + std::to_string(c.sourceImages) + " " +
      (c.padding.mode == Padding::Mode::mpsDefault ? "mpsDefault" : "explicit") + " neuron " +
      toString(d.neuron.type) + " srcOffset " + std::to_string(c.sourceChannelOffset) +
      " dstOffset " + std::to_string(c.destinationChannelOffset) + " " + toString(c.format);
  return s;
}

// Random inference statistics for every output channel, drawn from seeds seed..seed + 3.
void sampleBatchNormalization(ConvolutionDescriptor& d, uint32_t seed) {
  const uint32_t out = d.outputFeatureChannels;
  d.setBatchNormalizationParametersForInference(
      randomFloats(out, seed, -0.5f, 0.5f), randomFloats(out, seed + 1, 0.5f, 2.f),
      randomFloats(out, seed + 2, 0.5f, 1.5f), randomFloats(out, seed + 3, -0.5f, 0.5f), 1e-3f);
}

const uint32_t kChannels[] = {1, 3, 4, 5, 8, 13, 16, 17, 32};

// The multiprocessors the selector counts with: the device's where it tells, else 132.
uint32_t selectorMultiprocessors() {
  const uint32_t reported = context().capabilities().multiprocessorCount;
  return reported ? reported : 132;
}

// Whether the matrix units' cost model runs where its constants were fitted (32-wide subgroups,
// 100-200 multiprocessors): the tests check its choices there only, its results everywhere.
bool matrixCostModelFitted() {
  const DeviceCapabilities& caps = context().capabilities();
  const uint32_t multiprocessors = selectorMultiprocessors();
  return caps.matrixUnits && caps.subgroupSize == 32 && multiprocessors >= 100 &&
         multiprocessors <= 200;
}

}  // namespace

TEST_CASE("convolution: sampled sweep of kernel sizes, strides, dilations, groups and channels") {
  // A fixed-seed sample of the cartesian product: kernel sizes cycle through 1..7 in each axis,
  // strides and dilations through 1..3, groups through dense / 2 / depthwise, so every value of
  // each occurs; the rest is drawn at random.
  std::mt19937 rng(2024);
  auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
  const uint32_t cases = 84;
  for (uint32_t i = 0; i < cases; ++i) {
    Case c;
    c.seed = 1000 + i * 7;
    ConvolutionDescriptor& d = c.descriptor;
    d.kernelWidth = 1 + i % 7;
    d.kernelHeight = 1 + (i / 7 + i) % 7;
    d.strideInPixelsX = 1 + i % 3;
    d.strideInPixelsY = 1 + (i / 3) % 3;
    d.dilationRateX = 1 + (i / 2) % 3;
    d.dilationRateY = 1 + (i / 5) % 3;
    const uint32_t groupKind = (i / 4) % 3;  // dense, 2 groups, depthwise
    if (groupKind == 0) {
      d.inputFeatureChannels = kChannels[pick(9)];
      d.outputFeatureChannels = kChannels[pick(9)];
    } else if (groupKind == 1) {
      static const uint32_t even[] = {4, 8, 16, 32, 2, 6, 10, 26, 34};  // 13 and 17 per group too
      d.groups = 2;
      d.inputFeatureChannels = even[pick(9)];
      d.outputFeatureChannels = even[pick(9)];
    } else {
      d.inputFeatureChannels = kChannels[pick(9)];
      d.groups = d.inputFeatureChannels;
      d.outputFeatureChannels = d.inputFeatureChannels * (1 + pick(3));
    }
    c.width = 3 + pick(9);
    c.height = 3 + pick(9);
    if (i % 2) {
      c.padding = Padding::explicitPadding(pick(4), pick(4), pick(4), pick(4));
      // The explicit output size must be at least one pixel.
      c.width = std::max(c.width, d.dilatedKernelWidth());
      c.height = std::max(c.height, d.dilatedKernelHeight());
      c.padding.ceilMode = pick(4) == 0;
    }
    c.sourceImages = 1 + pick(2);
    c.withBias = pick(3) != 0;
    if (pick(3) == 0) d.neuron = NeuronDescriptor::relu();
    if (pick(4) == 0) {
      c.extraSourceChannels = 1 + pick(6);
      c.sourceChannelOffset = pick(c.extraSourceChannels + 1);
    }
    if (pick(3) == 0) c.destinationChannelOffset = pick(9);
    if (pick(4) == 0) c.extraDestinationChannels = 1 + pick(4);
    CAPTURE(i);
    CAPTURE(describe(c));
    run(c);
  }
}

TEST_CASE(
    "convolution: every kernel size 1..7 with strides and dilations on an odd and an even size") {
  // The sweep samples; this covers square kernels exhaustively in both padding modes.
  for (uint32_t k = 1; k <= 7; ++k)
    for (uint32_t s = 1; s <= 3; ++s) {
      Case c;
      c.seed = 50 + k * 3 + s;
      c.descriptor = ConvolutionDescriptor::make(k, k, 5, 8);
      c.descriptor.strideInPixelsX = c.descriptor.strideInPixelsY = s;
      c.descriptor.dilationRateX = c.descriptor.dilationRateY = 1 + (k + s) % 3;
      c.width = 7 + k % 2 + c.descriptor.dilatedKernelWidth();
      c.height = 6 + k % 2;
      if (s == 2) c.padding = Padding::explicitPadding(k / 2, k / 2, (k - 1) / 2, (k - 1) / 2);
      c.height = std::max(c.height, c.descriptor.dilatedKernelHeight());
      CAPTURE(describe(c));
      run(c);
    }
}

TEST_CASE("convolution: the MPS batch example, 16 to 32 channels, source batch 5, destination 4") {
  // offset.z = 2, clipRect.z = 1, depth 2: source images 2..3 go to destination images 1..2 and
  // destination images 0 and 3 stay untouched (checked by compare through the poison).
  Case c;
  c.descriptor = ConvolutionDescriptor::make(3, 3, 16, 32, NeuronDescriptor::relu());
  c.sourceImages = 5;
  c.destinationImages = 4;
  c.width = 6;
  c.height = 5;
  c.offset.z = 2;
  c.clip.z = 1;
  c.clip.depth = 2;
  run(c);
}

TEST_CASE("convolution: every GEMM tile shape") {
  // Dense convolutions run as an implicit GEMM whose tiles depend on the shape
  // (convolution.cpp, gemmShader). Portable shaders: 128 pixels x 32 slices, 64 x 16 or 16 x 8
  // with the reduction split 8 ways by the number of tiles ("every portable GEMM tile, forced"
  // forces each). Matrix units (float16 destinations, on GPUs that
  // have them): 64 x 16, 32 x 8 split 4 ways or 16 x 8 split 8 ways by a latency model; the
  // comments below say which shape takes which. Reduction lengths (taps x input slices) are not
  // multiples of the chunks.
  Case c;  // few outputs, a long reduction (576 steps): 16 x 8 split 8 ways on both paths
  c.descriptor = ConvolutionDescriptor::make(3, 3, 64, 40, NeuronDescriptor::relu());
  c.width = 6;
  c.height = 5;
  c.sourceImages = 2;
  Case d;  // 1600 pixels, a short reduction (64 steps): 32 x 8 split 4 ways on matrix units
  d.descriptor = ConvolutionDescriptor::make(1, 1, 64, 32);
  d.width = d.height = 40;
  d.seed = 11;
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    c.format = d.format = format;
    CAPTURE(describe(c));
    run(c);
    CAPTURE(describe(d));
    run(d);
  }
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    Case a;  // 1x1, 3 images of 110x110: 568 large tiles of one column, on both paths
    a.descriptor = ConvolutionDescriptor::make(1, 1, 5, 20, NeuronDescriptor::relu());
    a.width = a.height = 110;
    a.sourceImages = 3;
    a.format = format;
    CAPTURE(describe(a));
    run(a);
    Case b;  // 3x3 stride 2 to 130x130, two columns of tiles, a partial last slice
    b.descriptor = ConvolutionDescriptor::make(3, 3, 17, 70);
    b.descriptor.strideInPixelsX = b.descriptor.strideInPixelsY = 2;
    b.width = 259;
    b.height = 260;
    b.seed = 7;
    b.format = format;
    CAPTURE(describe(b));
    run(b);
  }
}

TEST_CASE("convolution: every matrix-unit configuration, forced") {
  // VKCNN_CONVOLUTION_TILE forces what the selector (convolution.cpp, gemmShader) may pick on a
  // GPU with matrix units: each tile of convolution_tiles.h (convolution_tiled.glsl), with each
  // of its epilogues (VKCNN_CONVOLUTION_EPILOGUE), and each split-k shader of
  // convolution_matrix.glsl. Elsewhere (lavapipe) the variables change nothing and these run
  // once on the portable shaders; docs/testing.md names the GPU command. The shapes
  // cover partial row and column tiles (more than one of each), a reduction ending inside a
  // chunk, channels not a multiple of 4, stride, dilation, padding, several images and a residual.
  // Each tile also on the split module with its reduction whole ("<tile>s1", as the batch-1
  // latency model runs it) and split over 2 and 3 workgroups ("<tile>s2": a split of uneven
  // shares), and one over more workgroups (16) than case a has chunks (5).
  std::vector<std::string> configurations = {"matrix_large", "matrix_medium", "matrix_small",
                                             "legacy"};
  for (const detail::MatrixTile& tile : detail::kMatrixTiles)
    for (const char* splits : {"", "s1", "s2", "s3"})
      configurations.push_back(tile.name + std::string(splits));
  configurations.push_back("64x64s16");
  // Without matrix units every configuration is the same portable shader: once is enough (fp16
  // is slow on lavapipe).
  if (!context().capabilities().matrixUnits) configurations = {"portable"};
  for (const std::string& configuration : configurations) {
    CAPTURE(configuration);
    forceChoice(&detail::ChoiceOverrides::tile, configuration.c_str());
    Case a;  // 3x3, 2 images of 13x11 (286 rows), 13 -> 70 channels, a residual and ReLU
    a.descriptor = ConvolutionDescriptor::make(3, 3, 13, 70, NeuronDescriptor::relu());
    a.padding = Padding::explicitPadding(1, 1, 1, 1);
    a.width = 13;
    a.height = 11;
    a.sourceImages = 2;
    a.residual = true;
    a.format = ChannelFormat::float16;
    a.seed = 21;
    Case b;  // 1x1 stride 2 to 15x15, 40 -> 136 channels (two column tiles of 128)
    b.descriptor = ConvolutionDescriptor::make(1, 1, 40, 136);
    b.descriptor.strideInPixelsX = b.descriptor.strideInPixelsY = 2;
    b.padding = Padding::explicitPadding(0, 0, 0, 0);
    b.width = b.height = 29;
    b.format = ChannelFormat::float16;
    b.seed = 22;
    Case c;  // 5x5 dilated 2, 8 -> 24 channels, mpsDefault padding: 25 taps x 2 slices
    c.descriptor = ConvolutionDescriptor::make(5, 5, 8, 24);
    c.descriptor.dilationRateX = c.descriptor.dilationRateY = 2;
    c.width = 17;
    c.height = 10;
    c.format = ChannelFormat::float16;
    c.seed = 23;
    // The tiles' epilogue as these small layers get it (inline, its operations fixed in the
    // pipeline), then forced to read ahead, as layers of several waves get it (with a residual in
    // a, without in b and c), and with the operations in the push constants ("inline").
    const bool tile = configuration.find("matrix_") != 0 && configuration != "legacy" &&
                      configuration != "portable";
    for (const char* epilogue : {"", "ahead", "inline"}) {
      if (*epilogue && !tile) continue;
      CAPTURE(epilogue);
      forceChoice(&detail::ChoiceOverrides::epilogue, epilogue);
      for (const Case* x : {&a, &b, &c}) {
        CAPTURE(describe(*x));
        run(*x);
      }
    }
    forceChoice(&detail::ChoiceOverrides::epilogue, "");
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
}

TEST_CASE("convolution: float16 stores round to nearest even and saturate on every shader") {
  // A 1x1 convolution adding two channels whose sums fall between float16 values: below a tie,
  // on ties (to even both ways), past 65504 (saturated, as writeBytes does), an infinity and NaN
  // (kept). Where the device writes float16 bits (float16BitStores) packHalf2x16 rounds; into a
  // float view (a wrapped application image) the shaders round in integer arithmetic, because the
  // stores truncate on the H200 and lavapipe and a conversion to float16 and back was folded away
  // by NVIDIA's driver (bench/NOTES.md, 2026-11-28, session 31). Both are written whole and as one
  // channel between two kept ones (merged with the texel's old contents). Each shader the selector
  // can pick for a dense layer is forced (the split module whole and split), and with matrix units
  // the selector's own choice runs too.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::array<float, 3>> sums = {
      // channel 0, channel 1, the float16 the destination holds
      {1.0f, 3.0f / 4096, 1.0f + 1.0f / 1024},  // 0.75 of a unit in the last place: up
      {1.0f, 1.0f / 2048, 1.0f},                // a tie: to the even 1.0
      {1.0f, 3.0f / 2048, 1.0f + 2.0f / 1024},  // a tie: to the even 1 + 2/1024
      {1.0f, -1.0f / 4096, 1.0f},               // a tie below 1.0: to the even 1.0
      {-1.0f, -1.0f / 4096, -1.0f},             // and its negative
      {1.0f, 1.0f / 8192, 1.0f},                // a quarter: down
      {65504.0f, 16.0f, 65504.0f},              // rounds to infinity in float16: saturated
      {-65504.0f, -64.0f, -65504.0f},           // likewise below
      {inf, 0.0f, inf},                         // an infinity stays one
      {nan, 1.0f, nan},                         // NaN stays NaN
      {0.5f, 0.25f, 0.75f}};                    // exact
  const uint32_t width = uint32_t(sums.size());
  Tensor x(1, 2, 1, width);
  for (uint32_t i = 0; i < width; ++i) {
    x.at(0, 0, 0, i) = sums[i][0];
    x.at(0, 1, 0, i) = sums[i][1];
  }
  const ConvolutionDescriptor descriptor = ConvolutionDescriptor::make(1, 1, 2, 1);
  Convolution sum(context(), descriptor, std::vector<float>{1.0f, 1.0f}, std::vector<float>{0.0f});
  std::vector<std::string> configurations = {"", "matrix_large", "matrix_medium", "matrix_small"};
  for (const detail::MatrixTile& tile : detail::kMatrixTiles) {
    configurations.push_back(tile.name);
    configurations.push_back(tile.name + std::string("s2"));
  }
  if (!context().capabilities().matrixUnits) configurations = {""};
  // The bit path is on where packHalf2x16 is known to round to nearest even (this case shows it
  // does): lavapipe and NVIDIA's driver, unless VKCNN_FLOAT16_BIT_STORES=0 turned it off.
  const DeviceCapabilities& caps = context().capabilities();
  if ((caps.driverName == "llvmpipe" || caps.vendorId == 0x10DE) && !caps.adopted &&
      detail::overrides(context()).float16BitStores)
    CHECK(caps.float16BitStores);
  Image source = makeImage(x, ChannelFormat::float16, "x");
  const float kept = -2.5f;
  for (const std::string& configuration : configurations) {
    for (const bool wrapped : {false, true}) {
      for (const uint32_t channel : {0u, 1u}) {
        CAPTURE(configuration);
        CAPTURE(wrapped);
        CAPTURE(channel);
        const uint32_t channels = channel ? 3 : 1;
        Image own = makePoisoned(
            context(), {width, 1, channels, 1, ChannelFormat::float16, ImageUsage::all, "y"});
        if (channel) fill(own, kept);
        Image destination =
            wrapped ? Image::wrap(context(), own.vkImage(), own.vkFormat(), width, 1, 1, channels,
                                  VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT)
                    : own;
        sum.destinationFeatureChannelOffset = channel;
        if (!configuration.empty())
          forceChoice(&detail::ChoiceOverrides::tile, configuration.c_str());
        runOnce([&](CommandBuffer& cb) { sum.encode(cb, source, destination); });
        forceChoice(&detail::ChoiceOverrides::tile, "");
        CAPTURE(sum.configuration());
        const Tensor y = download(own);
        for (uint32_t i = 0; i < width; ++i) {
          CAPTURE(i);
          if (std::isnan(sums[i][2]))
            CHECK(std::isnan(y.at(0, channel, 0, i)));
          else
            CHECK(y.at(0, channel, 0, i) == double(sums[i][2]));
          if (channel) {
            CHECK(y.at(0, 0, 0, i) == double(kept));
            CHECK(y.at(0, 2, 0, i) == double(kept));
          }
        }
      }
    }
  }
  sum.destinationFeatureChannelOffset = 0;
}

TEST_CASE("convolution: a reduction split over workgroups gives the same bits every run") {
  // The last workgroup of a tile adds the partial sums in a fixed order, whichever finishes last:
  // five runs of a long reduction (3x3 128 -> 64, 36 chunks) split 4 and 5 ways give identical
  // bytes, and match the reference. Without matrix units the forced tile is not used (the portable
  // shader, deterministic anyway).
  Case c;
  c.descriptor = ConvolutionDescriptor::make(3, 3, 128, 64, NeuronDescriptor::relu());
  c.padding = Padding::explicitPadding(1, 1, 1, 1);
  c.width = 11;
  c.height = 9;
  c.sourceImages = 2;
  c.format = ChannelFormat::float16;
  const ConvolutionDescriptor& d = c.descriptor;
  const Tensor x = roundedTo(randomTensor(2, 128, 9, 11, 51, -1, 1), ChannelFormat::float16);
  const std::vector<float> w = randomWeights(d, 52), bias = randomFloats(64, 53);
  const Tensor expected = reference(c, x, w, bias, 11, 9, 2, 64);
  for (const char* configuration : {"64x64s4", "32x64s5"}) {
    CAPTURE(configuration);
    forceChoice(&detail::ChoiceOverrides::tile, configuration);
    Convolution kernel(context(), d, w, bias);
    kernel.padding = c.padding;
    Image source = makeImage(x, ChannelFormat::float16, "x");
    std::vector<std::vector<double>> runs;
    for (int run = 0; run < 5; ++run) {
      Image destination =
          makePoisoned(context(), {11, 9, 64, 2, ChannelFormat::float16, ImageUsage::all, "y"});
      runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
      const Tensor y = download(destination);
      if (run == 0) compare(y, expected, tolerance(ChannelFormat::float16));
      runs.push_back(y.data);
      CHECK(runs.back() == runs.front());
    }
    if (context().capabilities().matrixUnits && context().capabilities().subgroupSize == 32)
      CHECK(kernel.configuration() == configuration);
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
}

TEST_CASE("convolution: pieces of a batch side by side choose for all of them, same results") {
  // A Graph encodes the pieces of a batch the layer limit splits with no barrier between them and
  // sets imagesSideBySide to the whole batch: the cost model then counts every piece's tiles.
  // 1x1 512 -> 256 on 4 images of 7x7 alone has too few tiles for the matrix-unit tiles (a
  // split-k shader, or a tile whose reduction is split over workgroups); beside 7 more such
  // pieces it fills the device with them. Either way the
  // result is the convolution's. Without matrix units (lavapipe) both run the portable shader.
  const bool matrixUnits = context().capabilities().matrixUnits;
  Case c;
  c.descriptor = ConvolutionDescriptor::make(1, 1, 512, 256, NeuronDescriptor::relu());
  c.width = c.height = 7;
  c.sourceImages = 4;
  c.format = matrixUnits ? ChannelFormat::float16 : ChannelFormat::float32;
  c.seed = 41;
  const std::string alone = run(c);
  c.imagesSideBySide = 32;
  const std::string sideBySide = run(c);
  c.imagesSideBySide = 4;  // no more than its own images: the same as alone
  const std::string ownImages = run(c);
  CAPTURE(alone);
  CAPTURE(sideBySide);
  CHECK(ownImages == alone);
  // Few tiles: a split-k shader or a tile with its reduction split over workgroups ("32x64s2").
  auto fewTiles = [](const std::string& c) {
    return c.rfind("matrix_", 0) == 0 ||
           (c.size() > 2 && c[c.size() - 2] == 's' && std::isdigit(c.back()));
  };
  if (matrixUnits && context().capabilities().subgroupSize == 32) {
    CHECK(fewTiles(alone));
    CHECK(!fewTiles(sideBySide));
  }
  // The portable tiles (float32 everywhere) count the pieces too: 1x1 512 -> 256 on 4 images of
  // 14x14 alone has too few tiles for the 128 x 32 one and takes the split-k 16 x 8; beside 7
  // more such pieces it takes the 128 x 32 tile (14 tiles a piece). Checked where the rule's
  // thresholds fall between the two: 104 < multiprocessors <= 224 (none reported: 132 assumed).
  Case f;
  f.descriptor = ConvolutionDescriptor::make(1, 1, 512, 256, NeuronDescriptor::relu());
  f.width = f.height = 14;
  f.sourceImages = 4;
  f.format = ChannelFormat::float32;
  f.seed = 42;
  const std::string portableAlone = run(f);
  f.imagesSideBySide = 32;
  const std::string portableSideBySide = run(f);
  CAPTURE(portableAlone);
  CAPTURE(portableSideBySide);
  const uint32_t multiprocessors = selectorMultiprocessors();
  if (multiprocessors > 104 && multiprocessors <= 224) {
    CHECK(portableAlone == "gemm_small");
    CHECK(portableSideBySide == "gemm_128x32w16");
  }
}

TEST_CASE("convolution: a pipeline already run in the command buffer is preferred when close") {
  // A pipeline's first dispatch in a submission costs a batch-1 layer about 8 us (its code
  // fetched into every multiprocessor), so the cost models add that to a candidate whose pipeline
  // has no dispatch yet in the command buffer. 1x1 64 -> 64 on one 56x56 image alone takes the
  // 64 x 16 tile; after 1x1 64 -> 256 on the same image (the 64 x 64 tile, the same epilogue) it
  // takes 64 x 64, whose model cost is within those 8 us. Either way the result is the
  // convolution's. Without matrix units (lavapipe) both run the portable shaders.
  const bool matrixUnits = context().capabilities().matrixUnits;
  const ChannelFormat format = matrixUnits ? ChannelFormat::float16 : ChannelFormat::float32;
  Case wide, narrow;
  wide.descriptor = ConvolutionDescriptor::make(1, 1, 64, 256, NeuronDescriptor::relu());
  narrow.descriptor = ConvolutionDescriptor::make(1, 1, 64, 64, NeuronDescriptor::relu());
  for (Case* c : {&wide, &narrow}) {
    c->width = c->height = 56;
    c->format = format;
  }
  wide.seed = 51;
  narrow.seed = 53;
  const std::string alone = run(narrow);
  const std::string wideAlone = run(wide);

  const Tensor x = roundedTo(randomTensor(1, 64, 56, 56, narrow.seed, -1, 1), format);
  const std::vector<float> wideWeights = randomWeights(wide.descriptor, wide.seed + 1);
  const std::vector<float> narrowWeights = randomWeights(narrow.descriptor, narrow.seed + 1);
  const std::vector<float> bias = randomFloats(64, narrow.seed + 2);
  Convolution first(context(), wide.descriptor, wideWeights, randomFloats(256, wide.seed + 2));
  Convolution second(context(), narrow.descriptor, narrowWeights, bias);
  Image source = makeImage(x, format, "x");
  Image wideDestination = makePoisoned(context(), {56, 56, 256, 1, format, ImageUsage::all, "w"});
  Image destination = makePoisoned(context(), {56, 56, 64, 1, format, ImageUsage::all, "y"});
  runOnce([&](CommandBuffer& cb) {
    first.encode(cb, source, wideDestination);
    second.encode(cb, source, destination);
  });
  compare(download(destination), reference(narrow, x, narrowWeights, bias, 56, 56, 1, 64),
          tolerance(format));
  CAPTURE(alone);
  CAPTURE(wideAlone);
  CAPTURE(second.configuration());
  CHECK(first.configuration() == wideAlone);
  if (!matrixUnits) {
    CHECK(second.configuration() == alone);  // the portable shaders' rule has no such cost
  } else if (matrixCostModelFitted()) {
    CHECK(alone == "64x16");
    CHECK(wideAlone == "64x64");
    CHECK(second.configuration() == "64x64");
  }
  // The same when the first layer's pipeline has its epilogue's operations fixed (as by default)
  // and the second's does not (VKCNN_CONVOLUTION_EPILOGUE=inline): a tile and epilogue already
  // run count, whatever the operations.
  Image again = makePoisoned(context(), {56, 56, 64, 1, format, ImageUsage::all, "y2"});
  runOnce([&](CommandBuffer& cb) {
    forceChoice(&detail::ChoiceOverrides::epilogue, "inline-fixed");
    first.encode(cb, source, wideDestination);
    forceChoice(&detail::ChoiceOverrides::epilogue, "inline");
    second.encode(cb, source, again);
    forceChoice(&detail::ChoiceOverrides::epilogue, "");
  });
  compare(download(again), reference(narrow, x, narrowWeights, bias, 56, 56, 1, 64),
          tolerance(format));
  CAPTURE(second.configuration());
  CHECK(first.configuration() == wideAlone);
  if (!matrixUnits)
    CHECK(second.configuration() == alone);
  else if (matrixCostModelFitted())
    CHECK(second.configuration() == "64x64");
}

TEST_CASE(
    "convolution: short reductions over few tiles take a tile, long ones the split-k shader") {
  // Below the cost model's regime the split-k shaders of convolution_matrix.glsl took every layer;
  // where the reduction is too short for matrix_small's 8-way split (1x1 96 -> 576 on one 14x14
  // image: 3 chunks), the tiled cost model now chooses (64x16: 10.4 -> 8.2 us on an H200), while
  // 1x1 1024 -> 256 (32 chunks) stays on matrix_small. Both results are the convolution's; the
  // choices are checked where the cost model's constants were fitted (matrix units, 32-wide
  // subgroups, 100-200 multiprocessors). Without matrix units (lavapipe) the portable shaders run.
  const ChannelFormat format =
      context().capabilities().matrixUnits ? ChannelFormat::float16 : ChannelFormat::float32;
  Case shortReduction, longReduction;
  shortReduction.descriptor = ConvolutionDescriptor::make(1, 1, 96, 576, NeuronDescriptor::relu());
  longReduction.descriptor = ConvolutionDescriptor::make(1, 1, 1024, 256);
  for (Case* c : {&shortReduction, &longReduction}) {
    c->width = c->height = 14;
    c->format = format;
  }
  shortReduction.seed = 71;
  longReduction.seed = 73;
  const std::string shortChoice = run(shortReduction);
  const std::string longChoice = run(longReduction);
  CAPTURE(shortChoice);
  CAPTURE(longChoice);
  if (matrixCostModelFitted()) {
    CHECK(shortChoice == "64x16");
    CHECK(longChoice == "matrix_small");
  }
}

TEST_CASE("convolution: a tile fitted at batch 32 takes only layers with waves of work") {
  // 128x64w4k16 is in the cost model from two waves of its workgroups on (denseWaves,
  // convolution_tiles.h): 1x1 64 -> 64 on 32 images of 56x56 (784 of its tiles) takes it, one
  // image (25) does not. Both results are the convolution's. The 32 images run where there are
  // matrix units only: in float32 on lavapipe they would take minutes, and its portable shaders
  // never take the tile.
  const DeviceCapabilities& caps = context().capabilities();
  const bool matrixUnits = caps.matrixUnits && caps.subgroupSize == 32;
  const uint32_t multiprocessors = selectorMultiprocessors();
  for (const uint32_t images : {1u, 32u}) {
    if (images == 32 && !matrixUnits) continue;
    CAPTURE(images);
    Case c;
    c.descriptor = ConvolutionDescriptor::make(1, 1, 64, 64, NeuronDescriptor::relu());
    c.width = c.height = 56;
    c.sourceImages = images;
    c.format = matrixUnits ? ChannelFormat::float16 : ChannelFormat::float32;
    c.seed = 61;
    const std::string configuration = run(c);
    CAPTURE(configuration);
    // Elsewhere the waves fall differently; the results above are the check there.
    if (images == 1 || (multiprocessors >= 100 && multiprocessors <= 200))
      CHECK((configuration == "128x64w4k16") == (images == 32));
  }
}

TEST_CASE("convolution: every portable GEMM tile, forced") {
  // VKCNN_CONVOLUTION_TILE forces each portable GEMM shader (float32 destinations everywhere,
  // float16 ones on devices without matrix units): the two-stage 128 x 32 and 128 x 16 tiles
  // (convolution_gemm_staged.glsl) and convolution_gemm.glsl's 64 x 16 and split-k 16 x 8. The
  // shapes cover partial row and column tiles (more than one of each), reductions ending inside a
  // chunk (one chunk, a few, many), channels not a multiple of 4 on both sides, stride, dilation,
  // padding, several images, a residual, every fused epilogue (bias, neuron, batch norm), and a
  // source window.
  std::vector<Case> cases;
  {
    Case a;  // 3x3, 2 images of 13x11 (286 rows: 3 row tiles), 13 -> 70 (a partial column)
    a.descriptor = ConvolutionDescriptor::make(3, 3, 13, 70, NeuronDescriptor::relu());
    a.padding = Padding::explicitPadding(1, 1, 1, 1);
    a.width = 13;
    a.height = 11;
    a.sourceImages = 2;
    a.residual = true;
    a.seed = 31;
    cases.push_back(a);
    Case b;  // 1x1 stride 2 to 15x15, 40 -> 262 (3 column tiles of 128, the last partial)
    b.descriptor = ConvolutionDescriptor::make(1, 1, 40, 262);
    b.descriptor.strideInPixelsX = b.descriptor.strideInPixelsY = 2;
    b.padding = Padding::explicitPadding(0, 0, 0, 0);
    b.width = b.height = 29;
    b.seed = 32;
    cases.push_back(b);
    Case c;  // 5x5 dilated 2, 3 images, 7 -> 131: 25 taps x 2 slices, asymmetric padding
    c.descriptor = ConvolutionDescriptor::make(5, 5, 7, 131);
    c.descriptor.dilationRateX = 2;
    c.descriptor.dilationRateY = 3;
    c.descriptor.strideInPixelsY = 2;
    c.descriptor.neuron = NeuronDescriptor::of(NeuronType::leakyRelu, 0.1f);
    c.padding = Padding::explicitPadding(2, 5, 1, 3);
    c.width = 17;
    c.height = 10;
    c.sourceImages = 3;
    c.seed = 33;
    cases.push_back(c);
    Case d;  // batch norm folded, no bias, a 1-chunk reduction (1x1, 3 channels), 9 -> 3 outputs
    d.descriptor = ConvolutionDescriptor::make(1, 1, 3, 9);
    d.descriptor.neuron = NeuronDescriptor::of(NeuronType::leakyRelu, 0.2f);
    d.descriptor.setBatchNormalizationParametersForInference(
        randomFloats(9, 40, -0.5f, 0.5f), randomFloats(9, 41, 0.2f, 2.f),
        randomFloats(9, 42, 0.5f, 1.5f), randomFloats(9, 43), 1e-3f);
    d.withBias = false;
    d.width = 31;
    d.height = 9;
    d.seed = 34;
    cases.push_back(d);
    Case e;  // a window of the source's channels, 3x3 stride 2, 36 -> 64, 2 images
    e.descriptor = ConvolutionDescriptor::make(3, 3, 36, 64, NeuronDescriptor::relu());
    e.descriptor.strideInPixelsX = e.descriptor.strideInPixelsY = 2;
    e.extraSourceChannels = 6;
    e.sourceChannelOffset = 3;
    e.width = 23;
    e.height = 19;
    e.sourceImages = 2;
    e.seed = 35;
    cases.push_back(e);
  }
  for (const char* configuration :
       {"gemm_128x32w16", "gemm_128x32w8", "gemm_128x16w8", "gemm_large", "gemm_small"}) {
    CAPTURE(configuration);
    forceChoice(&detail::ChoiceOverrides::tile, configuration);
    for (const Case& c : cases) {
      CAPTURE(describe(c));
      run(c);
    }
    // Float16 on a small shape (slow on lavapipe); matrix units, where present, ignore the name.
    Case h = cases[0];
    h.format = ChannelFormat::float16;
    CAPTURE(describe(h));
    run(h);
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
}

TEST_CASE("convolution: grouped convolutions on the matrix units, every tile forced") {
  // Groups whose channels start at layers on both sides (a multiple of 4 per group) run on
  // convolution_tiled.glsl, one GEMM per group along the dispatch's z, on GPUs with matrix units
  // (float16); VKCNN_CONVOLUTION_TILE forces each tile whose width divides a group's padded width
  // (others fall back to the selector) and "legacy" the direct shader. Elsewhere (lavapipe) every
  // configuration is the direct shader: run once. Shapes: ResNeXt's 8 and RegNet's 16 channels
  // per group, partial row tiles, stride, a residual, channels past a group's 16-column padding.
  // (Groups of 4 channels stay on the direct shader: the sweep and the residual test cover it.)
  std::vector<std::string> configurations = {"auto", "legacy"};
  for (const detail::MatrixTile& tile : detail::kMatrixTiles) configurations.push_back(tile.name);
  if (!context().capabilities().matrixUnits) configurations = {"portable"};
  for (const std::string& configuration : configurations) {
    CAPTURE(configuration);
    forceChoice(&detail::ChoiceOverrides::tile, configuration.c_str());
    Case a;  // 3x3, 16 groups of 8 (ResNeXt's second stage), 2 images of 13x11, residual, ReLU
    a.descriptor = ConvolutionDescriptor::make(3, 3, 128, 128, NeuronDescriptor::relu());
    a.descriptor.groups = 16;
    a.padding = Padding::explicitPadding(1, 1, 1, 1);
    a.width = 13;
    a.height = 11;
    a.sourceImages = 2;
    a.residual = true;
    a.format = ChannelFormat::float16;
    a.seed = 31;
    Case b;  // 3x3 stride 2, 3 groups of 16 (RegNet's width), to 12x12
    b.descriptor = ConvolutionDescriptor::make(3, 3, 48, 48);
    b.descriptor.groups = 3;
    b.descriptor.strideInPixelsX = b.descriptor.strideInPixelsY = 2;
    b.padding = Padding::explicitPadding(1, 1, 1, 1);
    b.width = b.height = 23;
    b.format = ChannelFormat::float16;
    b.seed = 32;
    Case c;  // 1x1, 2 groups of 40 -> 36 channels (36 padded to 48 columns)
    c.descriptor = ConvolutionDescriptor::make(1, 1, 80, 72, NeuronDescriptor::relu());
    c.descriptor.groups = 2;
    c.width = 17;
    c.height = 10;
    c.format = ChannelFormat::float16;
    c.seed = 33;
    Case e;  // 3x3, 2 groups of 32 (ResNeXt's last stage) from a source channel window
    e.descriptor = ConvolutionDescriptor::make(3, 3, 64, 64);
    e.descriptor.groups = 2;
    e.sourceChannelOffset = 4;
    e.extraSourceChannels = 8;
    e.width = 9;
    e.height = 7;
    e.format = ChannelFormat::float16;
    e.seed = 34;
    for (const Case* x : {&a, &b, &c, &e}) {
      CAPTURE(describe(*x));
      run(*x);
    }
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
}

namespace {

// A 3x3 in -> out case, padding 1, over `images` of width x height (the Winograd cases).
Case paddedThreeByThree(uint32_t in, uint32_t out, const NeuronDescriptor& neuron, uint32_t width,
                        uint32_t height, uint32_t images, uint32_t seed) {
  Case c;
  c.descriptor = ConvolutionDescriptor::make(3, 3, in, out, neuron);
  c.padding = Padding::explicitPadding(1, 1, 1, 1);
  c.width = width;
  c.height = height;
  c.sourceImages = images;
  c.seed = seed;
  return c;
}

// A float32 3x3 64 -> 64 layer over 4 images of 60x60 that F(4x4,3x3) takes by default (1.06
// GFLOP), its source, weights and bias from seeds `seed`, `seed` + 1 and `seed` + 2, and the CPU's
// result.
struct WinogradLayer {
  Case c;
  Tensor x;
  std::vector<float> w, bias;
  Tensor expected;
};
WinogradLayer winogradLayer(const NeuronDescriptor& neuron, uint32_t seed) {
  WinogradLayer l{paddedThreeByThree(64, 64, neuron, 60, 60, 4, seed),
                  randomTensor(4, 64, 60, 60, seed),
                  {},
                  {},
                  {}};
  l.c.descriptor.destinationFormat = ChannelFormat::float32;
  l.w = randomWeights(l.c.descriptor, seed + 1);
  l.bias = randomFloats(64, seed + 2);
  l.expected = reference(l.c, l.x, l.w, l.bias, 60, 60, 4, 64);
  return l;
}

}  // namespace

TEST_CASE("convolution: Winograd F(4x4,3x3), forced") {
  // VKCNN_CONVOLUTION_TILE=winograd (set when the kernel is made, which then builds the
  // transformed weights) runs 3x3 stride-1 convolutions as an input transform, 36 per-position
  // GEMMs and an output transform (winograd.h). Shapes: odd and even sizes (partial 4x4 blocks on
  // the right and bottom), padding 0 and 1 and asymmetric, channels not a multiple of 4 on both
  // sides, bias, every epilogue (neuron, PReLU, batch norm, residual), batches of 1..3 with an
  // offset and clip depth, a source channel window, a destination at a layer offset, a batch in
  // rounds, GEMMs of 16- and 32-slice tiles over several row tiles, and an unaligned destination
  // (not taken). Tolerance: the buffers between the steps are float32, so the result differs
  // from the direct sum by float32 rounding of sums with coefficients up to 8 (A^T) and 5 (B^T):
  // the usual 1e-5 holds in float32, and float16 rounds only the images, as the direct path.
  const auto padded = paddedThreeByThree;
  std::vector<Case> cases;
  {
    // 13 -> 21, 11x9 odd sizes, ReLU, 2 images
    cases.push_back(padded(13, 21, NeuronDescriptor::relu(), 11, 9, 2, 51));
    Case b;  // 16 -> 8, padding 0 (output 8x5), no bias, batch norm, 3 images
    b.descriptor = ConvolutionDescriptor::make(3, 3, 16, 8);
    b.descriptor.neuron = NeuronDescriptor::of(NeuronType::leakyRelu, 0.1f);
    b.descriptor.setBatchNormalizationParametersForInference(
        randomFloats(8, 60, -0.5f, 0.5f), randomFloats(8, 61, 0.2f, 2.f),
        randomFloats(8, 62, 0.5f, 1.5f), randomFloats(8, 63), 1e-3f);
    b.withBias = false;
    b.padding = Padding::explicitPadding(0, 0, 0, 0);
    b.width = 10;
    b.height = 7;
    b.sourceImages = 3;
    b.seed = 52;
    cases.push_back(b);
    Case c;  // mpsDefault padding, 5 -> 3, PReLU per channel, a residual
    c.descriptor = ConvolutionDescriptor::make(3, 3, 5, 3);
    c.descriptor.neuron = sampleNeuron(NeuronType::prelu, 3);
    c.width = 7;
    c.height = 6;
    c.residual = true;
    c.seed = 53;
    cases.push_back(c);
    Case d;  // asymmetric padding, a source channel window, destination at channel 8 of 40
    d.descriptor = ConvolutionDescriptor::make(3, 3, 24, 28, NeuronDescriptor::relu());
    d.padding = Padding::explicitPadding(2, 0, 1, 1);
    d.extraSourceChannels = 6;
    d.sourceChannelOffset = 3;
    d.destinationChannelOffset = 8;
    d.extraDestinationChannels = 4;
    d.width = 9;
    d.height = 12;
    d.seed = 54;
    cases.push_back(d);
    Case e;  // images 1..2 of 3 into a clip of images 0..1 at x 1, y 2
    e.descriptor = ConvolutionDescriptor::make(3, 3, 8, 12);
    e.padding = Padding::explicitPadding(1, 1, 1, 1);
    e.width = 8;
    e.height = 8;
    e.sourceImages = 3;
    e.offset = {0, 0, 1};
    e.clip = {1, 2, 0, 5, 5, 2};
    e.destinationImages = 2;
    e.destinationWidth = 8;
    e.destinationHeight = 8;
    e.seed = 55;
    cases.push_back(e);
    // 128 -> 8 over 6 images of 2 blocks: with VKCNN_WINOGRAD_ROUND_BYTES at 2 images' buffers
    // (36 positions x 2 blocks x 32 slices x 16 bytes each) the batch runs in 3 rounds.
    cases.push_back(padded(128, 8, NeuronDescriptor::relu(), 5, 3, 6, 56));
    // A destination offset inside a layer: Winograd does not apply (winogradFits), the
    // convolution runs its usual path.
    Case g;
    g.descriptor = ConvolutionDescriptor::make(3, 3, 8, 6);
    g.destinationChannelOffset = 3;
    g.extraDestinationChannels = 2;
    g.seed = 57;
    cases.push_back(g);
  }
  {
    // 40 -> 136 over 20x18: 30 blocks an image, 2 images; T = 34 slices takes the 32-slice GEMM
    // tile over two column tiles.
    cases.push_back(padded(40, 136, NeuronDescriptor::relu(), 20, 18, 2, 58));
    // 64 -> 64 over 3 images of 40x36: 90 blocks an image, 270 rows: three row tiles of the
    // 16-slice GEMM, the last partial.
    cases.push_back(padded(64, 64, NeuronDescriptor{}, 40, 36, 3, 59));
  }
  forceChoice(&detail::ChoiceOverrides::tile, "winograd");
  forceChoice(&detail::ChoiceOverrides::winogradRoundBytes, uint64_t(73728));
  for (const Case& c : cases) {
    CAPTURE(describe(c));
    run(c);
  }
  {
    // The rounds really ran: three of three dispatches each for case f's batch.
    const Case& f = cases[5];
    Convolution probe(context(), f.descriptor, randomWeights(f.descriptor, 5));
    probe.padding = f.padding;
    const Image x =
        makeImage(randomTensor(6, 128, f.height, f.width, 7), ChannelFormat::float32, "x");
    const Image y(context(),
                  {f.width, f.height, 8, 6, ChannelFormat::float32, ImageUsage::all, "y"});
    CommandBufferOptions options;
    options.profile = true;
    CommandBuffer cb(context(), "winograd rounds", options);
    probe.encode(cb, x, y);
    cb.commit();
    cb.waitUntilCompleted();
    CHECK(probe.configuration() == "winograd");
    CHECK(cb.kernelTimings().size() == 9);
  }
  forceChoice(&detail::ChoiceOverrides::winogradRoundBytes, uint64_t(0));
  // Float16, small shapes (lavapipe is slow there): odd sizes, a residual, 2 images.
  for (Case c : {cases[0], cases[2]}) {
    c.format = ChannelFormat::float16;
    CAPTURE(describe(c));
    run(c);
  }
  // The path really ran: the kernel reports it (and a 1x1 or strided kernel does not take it).
  for (uint32_t kernel : {3u, 1u}) {
    const ConvolutionDescriptor d = ConvolutionDescriptor::make(kernel, kernel, 8, 8);
    Convolution probe(context(), d, randomWeights(d, 5));
    const Image x = makeImage(randomTensor(1, 8, 6, 6, 7), ChannelFormat::float32, "x");
    const Image y(context(), {6, 6, 8, 1, ChannelFormat::float32, ImageUsage::all, "y"});
    runOnce([&](CommandBuffer& cb) { probe.encode(cb, x, y); });
    CHECK((probe.configuration() == "winograd") == (kernel == 3));
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
  // Unforced, the portable path takes it for 3x3 stride-1 layers of at least 48 input and 32
  // output channels, 1 GFLOP of direct work and 32 blocks of 4x4 outputs three quarters full,
  // alone or as a batch's pieces through encodeBatch (encoded one by one side by side, each piece
  // would need barriers of its own).
  struct Probe {
    uint32_t in, out, size, images, sideBySide;
    bool batch, chosen;
  };
  for (const Probe& p : {Probe{64, 64, 60, 4, 0, false, true},     // 1.06 GFLOP, 900 blocks
                         Probe{48, 32, 96, 4, 0, false, true},     // 1.02 GFLOP, least channels
                         Probe{48, 32, 80, 4, 0, false, false},    // 0.71 GFLOP
                         Probe{32, 64, 60, 4, 0, false, false},    // 32 input channels
                         Probe{64, 16, 60, 4, 0, false, false},    // 16 output channels
                         Probe{256, 256, 12, 8, 0, false, true},   // 1.36 GFLOP, blocks full
                         Probe{256, 256, 13, 5, 0, false, false},  // 1.0 GFLOP, blocks 66% full
                         Probe{64, 64, 60, 4, 8, false, false},    // a piece encoded alone
                         Probe{64, 64, 60, 2, 0, true, true}}) {   // 2 pieces of 2 images
    CAPTURE(p.in);
    CAPTURE(p.out);
    CAPTURE(p.size);
    CAPTURE(p.sideBySide);
    CAPTURE(p.batch);
    ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, p.in, p.out);
    d.destinationFormat = ChannelFormat::float32;
    Convolution probe(context(), d, randomWeights(d, 6));
    probe.padding = Padding::explicitPadding(1, 1, 1, 1);
    probe.imagesSideBySide = p.sideBySide;
    const Image x =
        makeImage(randomTensor(p.images, p.in, p.size, p.size, 8), ChannelFormat::float32, "x");
    const Image y(context(),
                  {p.size, p.size, p.out, p.images, ChannelFormat::float32, ImageUsage::all, "y"});
    const Image x2 =
        makeImage(randomTensor(p.images, p.in, p.size, p.size, 9), ChannelFormat::float32, "x2");
    const Image y2(context(), {p.size, p.size, p.out, p.images, ChannelFormat::float32,
                               ImageUsage::all, "y2"});
    runOnce([&](CommandBuffer& cb) {
      if (p.batch)
        probe.encodeBatch(cb, {x, x2}, {y, y2});
      else
        probe.encode(cb, x, y);
    });
    CHECK((probe.configuration() == "winograd") == p.chosen);
  }
}

TEST_CASE("convolution: Winograd F(2x2,3x3) on the matrix units, forced") {
  // On a device with matrix units, float16 destinations run Winograd as F(2x2,3x3): the input
  // transform into float16 [row block][16][128 rows][K padded to 32], 16 cooperative-matrix GEMMs
  // into float32, the output transform (winograd.h). Shapes: odd sizes (partial 2x2 blocks),
  // padding 0 and 1, channels not a multiple of 4 or of the padded K and N on both sides, every
  // epilogue (batch norm with leaky ReLU, PReLU, a residual), clip and offset, GEMMs of 64 and
  // 128 columns over several row and column tiles, rounds whose pieces start at a row tile, and a
  // batch's pieces as one (encodeBatch), and the rule that takes it unforced. Tolerance:
  // float16's; F(2x2)'s B^T and A^T are 0 and +-1, so the float16 transformed input adds about
  // half the direct path's rounding. Without matrix units (lavapipe) the first case runs on the
  // portable F(4x4,3x3) in float16, once.
  const bool matrixUnits =
      context().capabilities().matrixUnits && context().capabilities().subgroupSize == 32;
  auto padded = [](uint32_t in, uint32_t out, const NeuronDescriptor& neuron, uint32_t width,
                   uint32_t height, uint32_t images, uint32_t seed) {
    Case c = paddedThreeByThree(in, out, neuron, width, height, images, seed);
    c.format = ChannelFormat::float16;
    return c;
  };
  std::vector<Case> cases;
  cases.push_back(padded(13, 21, NeuronDescriptor::relu(), 11, 9, 2, 151));  // K 32, N 64
  {
    Case b = padded(40, 136, NeuronDescriptor::of(NeuronType::leakyRelu, 0.1f), 20, 17, 2, 152);
    b.descriptor.setBatchNormalizationParametersForInference(
        randomFloats(136, 160, -0.5f, 0.5f), randomFloats(136, 161, 0.2f, 2.f),
        randomFloats(136, 162, 0.5f, 1.5f), randomFloats(136, 163), 1e-3f);
    b.withBias = false;
    b.padding = Padding::explicitPadding(0, 0, 0, 0);  // 18x15: N 192 in three 64-column tiles
    cases.push_back(b);
    // 128 -> 128 over 3 images of 29x31 (240 blocks each): six row tiles, a 128-column tile, a
    // residual.
    Case c = padded(128, 128, NeuronDescriptor{}, 29, 31, 3, 153);
    c.residual = true;
    cases.push_back(c);
    Case d;  // images 1..2 of 3 into a clip of images 0..1 at x 1, y 2, PReLU
    d.descriptor = ConvolutionDescriptor::make(3, 3, 8, 12);
    d.descriptor.neuron = sampleNeuron(NeuronType::prelu, 12);
    d.padding = Padding::explicitPadding(1, 1, 1, 1);
    d.width = d.height = 8;
    d.sourceImages = 3;
    d.offset = {0, 0, 1};
    d.clip = {1, 2, 0, 5, 5, 2};
    d.destinationImages = 2;
    d.destinationWidth = d.destinationHeight = 8;
    d.format = ChannelFormat::float16;
    d.seed = 154;
    cases.push_back(d);
    // 64 -> 64 over 6 images of 10x10 (25 blocks): rounds of 146 rows (VKCNN_WINOGRAD_ROUND_BYTES
    // below, 16 positions x 64 channels x 4 bytes a row) hold 5 images padded to 128 rows, then 1.
    cases.push_back(padded(64, 64, NeuronDescriptor::relu(), 10, 10, 6, 155));
  }
  if (!matrixUnits) cases.resize(1);
  forceChoice(&detail::ChoiceOverrides::tile, "winograd");
  for (size_t k = 0; k < cases.size(); ++k) {
    CAPTURE(describe(cases[k]));
    if (k == 4) forceChoice(&detail::ChoiceOverrides::winogradRoundBytes, uint64_t(146 * 4096));
    run(cases[k]);
    forceChoice(&detail::ChoiceOverrides::winogradRoundBytes, uint64_t(0));
  }
  // The path really ran: its GEMM's label, and the rounds: two of three dispatches.
  {
    const Case& e = cases.back();
    Convolution probe(context(), e.descriptor, randomWeights(e.descriptor, 5));
    probe.padding = e.padding;
    const uint32_t in = e.descriptor.inputFeatureChannels, out = e.descriptor.outputFeatureChannels;
    const uint32_t images = e.sourceImages;
    const Image x =
        makeImage(randomTensor(images, in, e.height, e.width, 7), ChannelFormat::float16, "x");
    const Image y(context(),
                  {e.width, e.height, out, images, ChannelFormat::float16, ImageUsage::all, "y"});
    CommandBufferOptions options;
    options.profile = true;
    if (matrixUnits)
      forceChoice(&detail::ChoiceOverrides::winogradRoundBytes, uint64_t(146 * 4096));
    CommandBuffer cb(context(), "winograd matrix", options);
    probe.encode(cb, x, y);
    cb.commit();
    cb.waitUntilCompleted();
    forceChoice(&detail::ChoiceOverrides::winogradRoundBytes, uint64_t(0));
    CHECK(probe.configuration() == "winograd");
    std::vector<std::string> labels;
    for (const KernelTiming& t : cb.kernelTimings()) labels.push_back(t.label);
    CAPTURE(labels.size());
    if (matrixUnits) {
      REQUIRE(labels.size() == 6);
      CHECK(labels[1].find("(winograd matrix gemm 64)") != std::string::npos);
    } else {
      CHECK(labels.size() == 3);
    }
  }
  // A batch's pieces (1, 2 and 3 images of 9x7, 48 -> 136, residuals) as one: an input transform
  // per piece, each starting at a row tile, around one GEMM.
  if (matrixUnits) {
    Case c = padded(48, 136, NeuronDescriptor::relu(), 9, 7, 1, 156);
    const std::vector<float> w = randomWeights(c.descriptor, 171);
    const std::vector<float> bias = randomFloats(136, 172);
    Convolution kernel(context(), c.descriptor, w, bias);
    kernel.padding = c.padding;
    std::vector<Tensor> xs, residualTensors;
    std::vector<Image> sources, destinations, residuals;
    for (uint32_t n : {1u, 2u, 3u}) {
      xs.push_back(randomTensor(n, 48, 7, 9, 173 + n));
      sources.push_back(makeImage(xs.back(), ChannelFormat::float16, "x"));
      destinations.push_back(
          makePoisoned(context(), {9, 7, 136, n, ChannelFormat::float16, ImageUsage::all, "y"}));
      residualTensors.push_back(randomTensor(n, 136, 7, 9, 180 + n));
      residuals.push_back(makeImage(residualTensors.back(), ChannelFormat::float16, "r"));
    }
    CommandBufferOptions options;
    options.profile = true;
    CommandBuffer cb(context(), "pieces", options);
    kernel.encodeBatch(cb, sources, destinations, residuals);
    cb.commit();
    cb.waitUntilCompleted();
    CHECK(kernel.configuration() == "winograd");
    CHECK(cb.kernelTimings().size() == 7);
    for (size_t k = 0; k < 3; ++k) {
      Case piece = c;
      piece.sourceImages = uint32_t(k + 1);
      compare(download(destinations[k]),
              reference(piece, xs[k], w, bias, 9, 7, uint32_t(k + 1), 136, &residualTensors[k]),
              tolerance(ChannelFormat::float16));
    }
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
  // Unforced, float16 on the matrix units takes it with 256 channels a side from 1.5 GFLOP of
  // direct work, and with fewer than 512 input channels only below 8192 destination pixels.
  struct Probe {
    uint32_t in, out, size, images;
    bool chosen;
  };
  if (matrixUnits)
    for (const Probe& p : {Probe{256, 256, 14, 8, true},      // 1.85 GFLOP
                           Probe{256, 256, 14, 4, false},     // 0.92 GFLOP
                           Probe{128, 256, 28, 32, false},    // 128 channels in, 14.8 GFLOP
                           Probe{256, 128, 28, 32, false},    // 128 channels out
                           Probe{128, 128, 112, 16, false},   // 128 channels, 200704 pixels
                           Probe{256, 256, 28, 16, false},    // 256 channels in, 12544 pixels
                           Probe{512, 256, 28, 16, true}}) {  // 512 channels in, 12544 pixels
      CAPTURE(p.in);
      CAPTURE(p.images);
      const ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, p.in, p.out);
      Convolution probe(context(), d, randomWeights(d, 6));
      probe.padding = Padding::explicitPadding(1, 1, 1, 1);
      const Image x(context(),
                    {p.size, p.size, p.in, p.images, ChannelFormat::float16, ImageUsage::all, "x"});
      const Image y(context(), {p.size, p.size, p.out, p.images, ChannelFormat::float16,
                                ImageUsage::all, "y"});
      runOnce([&](CommandBuffer& cb) { probe.encode(cb, x, y); });
      CHECK((probe.configuration() == "winograd") == p.chosen);
    }
  // The benchmark hook VKCNN_WINOGRAD_MATRIX_TILE refuses a GEMM configuration whose loads do not
  // split evenly over its workgroup (2 x 8 warps of 4 x 1 fragments: 512 invocations for 256
  // loads of A a stage) with a message naming it, before anything is recorded.
  if (matrixUnits) {
    const ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 128, 128);
    forceChoice(&detail::ChoiceOverrides::tile, "winograd");
    Convolution kernel(context(), d, randomWeights(d, 7));
    kernel.padding = Padding::explicitPadding(1, 1, 1, 1);
    const Image x(context(), {8, 8, 128, 1, ChannelFormat::float16, ImageUsage::all, "x"});
    const Image y(context(), {8, 8, 128, 1, ChannelFormat::float16, ImageUsage::all, "y"});
    forceChoice(&detail::ChoiceOverrides::winogradMatrixTile, "8x2/1x4/1/1");
    CommandBuffer cb(context(), "bad Winograd tile");
    VKCNN_CHECK_ERROR(kernel.encode(cb, x, y), ErrorCode::invalidArgument,
                      "VKCNN_WINOGRAD_MATRIX_TILE=8x2/1x4/1/1 does not split its loads evenly");
    CHECK(cb.encodingStatistics().dispatches == 0);
    forceChoice(&detail::ChoiceOverrides::winogradMatrixTile, "");
    forceChoice(&detail::ChoiceOverrides::tile, "");
  }
}

TEST_CASE("convolution: a device with less shared memory gets the tiles that fit, else direct") {
  // VKCNN_MAX_SHARED_MEMORY (read when a Context starts) lowers maxComputeSharedMemorySize as
  // devices with Vulkan's least (16 KiB) have it. The portable tiles take 16-32 KiB and Winograd's
  // GEMM 32 (reflected from their SPIR-V): a float32 3x3 64 -> 64 layer that takes Winograd
  // takes the 64x16 tile (16 KiB) within 16 KiB, and the direct shader within 8; each matches the
  // CPU. The matrix units need 48 KiB (their tiles): below, a Context does not use them.
  const WinogradLayer layer = winogradLayer(NeuronDescriptor::relu(), 81);
  const Case& c = layer.c;
  const Tensor& x = layer.x;
  const std::vector<float>&w = layer.w, &bias = layer.bias;
  const Tensor& expected = layer.expected;
  for (const auto& [limit, configuration] :
       {std::pair<const char*, const char*>{nullptr, "winograd"},
        {"16384", "gemm_large"},
        {"8192", "direct"}}) {
    CAPTURE(configuration);
    if (limit) setenv("VKCNN_MAX_SHARED_MEMORY", limit, 1);
    Context small = makeContext();
    unsetenv("VKCNN_MAX_SHARED_MEMORY");
    if (limit) CHECK_FALSE(small.capabilities().matrixUnits);
    Convolution kernel(small, c.descriptor, w, bias);
    kernel.padding = c.padding;
    runInContext(small, kernel, x, expected);
    CHECK(kernel.configuration() == configuration);
  }
}

TEST_CASE("convolution: ContextOptions::winograd false keeps 3x3 layers on the GEMM tiles") {
  // The layer Winograd takes by default (the probe above), in a Context with the option off: no
  // transformed weights are made, a GEMM tile runs it, and it matches the CPU; on the matrix
  // units, the float16 layer F(2x2,3x3) takes likewise.
  const WinogradLayer layer = winogradLayer(NeuronDescriptor{}, 84);
  const Case& c = layer.c;
  const Tensor& x = layer.x;
  const std::vector<float>&w = layer.w, &bias = layer.bias;
  const Tensor& expected = layer.expected;
  for (bool winograd : {true, false}) {
    CAPTURE(winograd);
    ContextOptions options;
    options.winograd = winograd;
    Context ctx = makeContext(options);
    Convolution kernel(ctx, c.descriptor, w, bias);
    kernel.padding = c.padding;
    runInContext(ctx, kernel, x, expected);
    CHECK((kernel.configuration() == "winograd") == winograd);
    // On the matrix units, float16's F(2x2,3x3) likewise (the probe of its own test case).
    if (ctx.capabilities().matrixUnits && ctx.capabilities().subgroupSize == 32) {
      const ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 256, 256);
      Convolution half(ctx, d, randomWeights(d, 87));
      half.padding = c.padding;
      const Image hx(ctx, {14, 14, 256, 8, ChannelFormat::float16, ImageUsage::all, "x"});
      const Image hy(ctx, {14, 14, 256, 8, ChannelFormat::float16, ImageUsage::all, "y"});
      CommandBuffer cb(ctx, "float16");
      half.encode(cb, hx, hy);
      cb.commit();
      cb.waitUntilCompleted();
      CHECK((half.configuration() == "winograd") == winograd);
    }
  }
}

TEST_CASE("convolution: encodeBatch runs a batch's pieces as one") {
  // A Graph holds a wide value's batch in pieces (Convolution::encodeBatch). Each piece must come
  // out as encode() would write it, with and without residuals, both where F(4x4,3x3) runs the
  // layer (3x3 32 -> 40, forced: one input and one output transform per piece around ONE GEMM
  // dispatch for all of them) and where it does not (1x1).
  const std::vector<uint32_t> imagesPerPiece{1, 2, 3};
  for (uint32_t kernelSize : {3u, 1u})
    for (bool withResidual : {false, true}) {
      CAPTURE(kernelSize);
      CAPTURE(withResidual);
      Case c;
      c.descriptor =
          ConvolutionDescriptor::make(kernelSize, kernelSize, 32, 40, NeuronDescriptor::relu());
      c.descriptor.destinationFormat = ChannelFormat::float32;
      c.padding =
          Padding::explicitPadding(kernelSize / 2, kernelSize / 2, kernelSize / 2, kernelSize / 2);
      c.width = 9;
      c.height = 7;
      const std::vector<float> w = randomWeights(c.descriptor, 71);
      const std::vector<float> bias = randomFloats(40, 72);
      // Forced when the kernel is made and encoded: the selector leaves so small a layer alone.
      if (kernelSize == 3) forceChoice(&detail::ChoiceOverrides::tile, "winograd");
      Convolution kernel(context(), c.descriptor, w, bias);
      kernel.padding = c.padding;
      std::vector<Tensor> xs, residualTensors;
      std::vector<Image> sources, destinations, residuals;
      for (size_t k = 0; k < imagesPerPiece.size(); ++k) {
        const uint32_t n = imagesPerPiece[k];
        xs.push_back(randomTensor(n, 32, 7, 9, 73 + uint32_t(k)));
        sources.push_back(makeImage(xs.back(), ChannelFormat::float32, "x"));
        destinations.push_back(
            makePoisoned(context(), {9, 7, 40, n, ChannelFormat::float32, ImageUsage::all, "y"}));
        if (withResidual) {
          residualTensors.push_back(randomTensor(n, 40, 7, 9, 80 + uint32_t(k)));
          residuals.push_back(makeImage(residualTensors.back(), ChannelFormat::float32, "r"));
        }
      }
      CommandBufferOptions options;
      options.profile = true;
      CommandBuffer cb(context(), "pieces", options);
      kernel.encodeBatch(cb, sources, destinations, residuals);
      forceChoice(&detail::ChoiceOverrides::tile, "");
      cb.commit();
      cb.waitUntilCompleted();
      if (kernelSize == 3) {
        CHECK(kernel.configuration() == "winograd");
        std::vector<std::string> labels;
        for (const KernelTiming& t : cb.kernelTimings()) labels.push_back(t.label);
        CAPTURE(labels.size());
        REQUIRE(labels.size() == 7);
        CHECK(labels[3].find("(winograd gemm") != std::string::npos);
      } else {
        CHECK(kernel.configuration() != "winograd");
        CHECK(cb.kernelTimings().size() == 3);
      }
      for (size_t k = 0; k < imagesPerPiece.size(); ++k) {
        Case piece = c;
        piece.sourceImages = imagesPerPiece[k];
        compare(download(destinations[k]),
                reference(piece, xs[k], w, bias, 9, 7, imagesPerPiece[k], 40,
                          withResidual ? &residualTensors[k] : nullptr),
                tolerance(ChannelFormat::float32));
      }
    }
  // Misuse: pairs that do not match.
  const ConvolutionDescriptor d = ConvolutionDescriptor::make(1, 1, 4, 4);
  Convolution kernel(context(), d, randomWeights(d, 90));
  const Image x = makeImage(randomTensor(1, 4, 3, 3, 91), ChannelFormat::float32, "x");
  const Image y(context(), {3, 3, 4, 1, ChannelFormat::float32, ImageUsage::all, "y"});
  CommandBuffer cb(context(), "misuse");
  CHECK_THROWS_WITH_AS(kernel.encodeBatch(cb, {x, x}, {y}),
                       doctest::Contains("as many destination Images as sources"), Error);
  CHECK_THROWS_WITH_AS(kernel.encodeBatch(cb, {x}, {y}, {x, x}),
                       doctest::Contains("as many residuals or none"), Error);
}

TEST_CASE("convolution: a batch's pieces in one matrix-unit dispatch") {
  // Where the layer limit splits a batch, a Graph hands the pieces to encodeBatch; on the matrix
  // units, pieces laid out alike run as ONE dispatch of convolution_tiled_pieces, its rows over
  // every piece's images, each row reading and writing its own piece's images. Pieces of 3, 3 and
  // 2 images of 9x7 (tiles holding rows of two or three pieces, the last piece smaller), 1x1 and
  // 3x3 with stride 1 and 2, with and without residuals, a grouped layer, 9 pieces (8 in one
  // dispatch, the ninth alone), forced tiles and the selector's choice; each piece against the
  // reference with VKCNN_CONVOLUTION_PIECES=one (one dispatch wherever it can), =separate (one a
  // piece) and unset (one where that saves a wave: none of these small layers). Without matrix
  // units (lavapipe) the pieces run one by one in float32, checked alike.
  const DeviceCapabilities& caps = context().capabilities();
  const bool oneDispatch =
      caps.matrixUnits && caps.subgroupSize == 32 && caps.imageArrayNonUniformIndexing;
  const ChannelFormat format = caps.matrixUnits ? ChannelFormat::float16 : ChannelFormat::float32;
  struct Shape {
    uint32_t kernel, stride, in, out, groups;
    std::vector<uint32_t> pieces;
    bool residual;
    std::string tile;  // forced, or empty: the selector's
  };
  const std::vector<Shape> shapes{
      {1, 1, 64, 136, 1, {3, 3, 2}, true, "128x128"},
      {3, 2, 40, 72, 1, {3, 3, 2}, true, "64x64"},
      {3, 1, 32, 24, 1, {2, 2, 2}, false, "128x64w4k16"},
      {3, 1, 64, 64, 2, {3, 3, 2}, true, "64x32"},
      {1, 1, 16, 20, 1, {1, 1, 1, 1, 1, 1, 1, 1, 1}, false, "64x64"},
      {1, 1, 64, 136, 1, {3, 3, 2}, false, ""},
  };
  uint32_t seed = 300;
  for (const Shape& shape : shapes) {
    CAPTURE(shape.kernel);
    CAPTURE(shape.in);
    CAPTURE(shape.tile);
    Case c;
    c.descriptor = ConvolutionDescriptor::make(shape.kernel, shape.kernel, shape.in, shape.out,
                                               NeuronDescriptor::relu());
    c.descriptor.strideInPixelsX = c.descriptor.strideInPixelsY = shape.stride;
    c.descriptor.groups = shape.groups;
    c.descriptor.destinationFormat = format;
    const uint32_t pad = shape.kernel / 2;
    c.padding = Padding::explicitPadding(pad, pad, pad, pad);
    c.width = 9;
    c.height = 7;
    const std::vector<float> w = randomWeights(c.descriptor, ++seed);
    const std::vector<float> bias = randomFloats(shape.out, ++seed);
    Convolution kernel(context(), c.descriptor, w, bias);
    kernel.padding = c.padding;
    const uint32_t outW = kernel.destinationWidth(9), outH = kernel.destinationHeight(7);
    std::vector<Tensor> xs, residualTensors;
    std::vector<Image> sources, residuals;
    for (uint32_t n : shape.pieces) {
      xs.push_back(roundedTo(randomTensor(n, shape.in, 7, 9, ++seed), format));
      sources.push_back(makeImage(xs.back(), format, "x"));
      if (shape.residual) {
        residualTensors.push_back(
            roundedTo(randomTensor(n, shape.out, outH, outW, ++seed), format));
        residuals.push_back(makeImage(residualTensors.back(), format, "r"));
      }
    }
    for (const std::string mode : {"one", "separate", ""}) {
      CAPTURE(mode);
      std::vector<Image> destinations;
      for (uint32_t n : shape.pieces)
        destinations.push_back(
            makePoisoned(context(), {outW, outH, shape.out, n, format, ImageUsage::all, "y"}));
      if (!shape.tile.empty()) forceChoice(&detail::ChoiceOverrides::tile, shape.tile.c_str());
      if (!mode.empty()) forceChoice(&detail::ChoiceOverrides::pieces, mode.c_str());
      // One dispatch with the epilogue reading ahead, as layers of several waves get it: the
      // neuron and the residual fixed in the pipeline (EPILOGUE_OPS).
      if (mode == "one") forceChoice(&detail::ChoiceOverrides::epilogue, "ahead");
      CommandBufferOptions options;
      options.profile = true;
      CommandBuffer cb(context(), "pieces", options);
      kernel.encodeBatch(cb, sources, destinations, residuals);
      forceChoice(&detail::ChoiceOverrides::tile, "");
      forceChoice(&detail::ChoiceOverrides::pieces, "");
      forceChoice(&detail::ChoiceOverrides::epilogue, "");
      cb.commit();
      cb.waitUntilCompleted();
      const size_t pieces = shape.pieces.size();
      if (oneDispatch && mode == "one" && !shape.tile.empty()) {
        // 8 pieces at most a dispatch: the ninth runs alone, and names the configuration last.
        const std::string expected = pieces > 8
                                         ? shape.tile
                                         : (shape.groups > 1 ? "grouped " : "") + shape.tile +
                                               ", " + std::to_string(pieces) + " pieces";
        CHECK(kernel.configuration() == expected);
        CHECK(cb.kernelTimings().size() == (pieces > 8 ? 2u : 1u));
      } else if (mode == "separate" || !oneDispatch) {
        CHECK(kernel.configuration().find("pieces") == std::string::npos);
        CHECK(cb.kernelTimings().size() == pieces);
      }
      for (size_t k = 0; k < pieces; ++k) {
        CAPTURE(k);
        Case piece = c;
        piece.sourceImages = shape.pieces[k];
        compare(download(destinations[k]),
                reference(piece, xs[k], w, bias, outW, outH, shape.pieces[k], shape.out,
                          shape.residual ? &residualTensors[k] : nullptr),
                tolerance(format));
      }
    }
  }
}

TEST_CASE("convolution: a residual added before the neuron, on every shader") {
  // Each path adds it in its own epilogue (convolution_bindings.glsl): GEMM tiles large and small
  // (and the matrix-unit tiles for float16 on GPUs that have them), the direct shader (groups, an
  // unaligned destination offset), depthwise; residuals whole and as windows of larger images,
  // clip rectangles over a batch.
  uint32_t seed = 900;
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    std::vector<Case> cases;
    Case large;  // 1x1 over 2 x 100x100: large GEMM tiles
    large.descriptor = ConvolutionDescriptor::make(1, 1, 8, 20, NeuronDescriptor::relu());
    large.width = large.height = 100;
    large.sourceImages = 2;
    cases.push_back(large);
    Case small;  // few pixels, long reduction, the residual a window from channel 4
    small.descriptor = ConvolutionDescriptor::make(3, 3, 24, 13, NeuronDescriptor::relu());
    small.width = 6;
    small.height = 5;
    small.residualChannelOffset = 4;
    cases.push_back(small);
    Case grouped;  // direct shader, PReLU, clip over images 1..2 of 3
    grouped.descriptor = ConvolutionDescriptor::make(3, 3, 6, 9);
    grouped.descriptor.groups = 3;
    grouped.descriptor.neuron = sampleNeuron(NeuronType::prelu, 9);
    grouped.sourceImages = 3;
    grouped.offset = {0, 0, 1};
    grouped.clip = {1, 0, 1, 3, kWholeExtent, 2};
    grouped.destinationImages = 3;
    grouped.destinationWidth = 5;
    grouped.destinationHeight = 5;
    grouped.residualChannelOffset = 8;
    cases.push_back(grouped);
    Case unaligned;  // direct shader: an unaligned destination offset (concatenation)
    unaligned.descriptor = ConvolutionDescriptor::make(3, 3, 5, 7, NeuronDescriptor::relu());
    unaligned.destinationChannelOffset = 3;
    unaligned.extraDestinationChannels = 2;
    unaligned.residualChannelOffset = 4;
    cases.push_back(unaligned);
    Case depthwise;  // depthwise, stride 2, batch normalisation folded first
    depthwise.descriptor = ConvolutionDescriptor::depthwise(3, 3, 10, 1, NeuronDescriptor::relu());
    depthwise.descriptor.strideInPixelsX = depthwise.descriptor.strideInPixelsY = 2;
    depthwise.descriptor.setBatchNormalizationParametersForInference(
        randomFloats(10, 5), randomFloats(10, 6, 0.5f, 1.5f), randomFloats(10, 7),
        randomFloats(10, 8), 1e-5f);
    depthwise.width = 9;
    depthwise.height = 7;
    cases.push_back(depthwise);
    for (Case c : cases) {
      c.format = format;
      c.residual = true;
      c.seed = seed++;
      CAPTURE(describe(c));
      CAPTURE(c.residualChannelOffset);
      run(c);
    }
  }
}

// A source activation for d's input channels: scales in [0.5, 1.5) of random sign, shifts in
// [-0.5, 0.5) (about half the ReLU's inputs negative), from seeds seed and seed + 1.
void sampleSourceActivation(ConvolutionDescriptor& d, uint32_t seed, NeuronType neuron) {
  SourceActivation a;
  a.scale = randomFloats(d.inputFeatureChannels, seed, 0.5f, 1.5f);
  for (size_t c = 0; c < a.scale.size(); c += 3) a.scale[c] = -a.scale[c];
  a.shift = randomFloats(d.inputFeatureChannels, seed + 1, -0.5f, 0.5f);
  a.neuron = neuron;
  d.sourceActivation = a;
}

TEST_CASE("convolution: a source activation (batch norm and ReLU before it) on every shader") {
  // ConvolutionDescriptor::sourceActivation: each shader applies it where it reads the source
  // (convolution_bindings.glsl): the GEMM tiles (and, in float16 on GPUs with matrix units, the
  // tiles and split-k shaders), the direct shader (groups, an unaligned destination), depthwise
  // (its unrolled rows and its loop). Padding must stay zero, not become relu(shift): the shifts
  // are half positive. Channel windows that start inside a layer, residuals, batch norm folded
  // after, and the affine alone.
  uint32_t seed = 2000;
  std::vector<Case> cases;
  Case dense;  // 1x1 40 -> 36 @14x14, as DenseNet's bottlenecks
  dense.descriptor = ConvolutionDescriptor::make(1, 1, 40, 36, NeuronDescriptor::relu());
  dense.width = dense.height = 14;
  cases.push_back(dense);
  Case padded;  // 3x3 padded on every side, 2 images, a residual: padding reads zero
  padded.descriptor = ConvolutionDescriptor::make(3, 3, 13, 70, NeuronDescriptor::relu());
  padded.padding = Padding::explicitPadding(1, 1, 1, 1);
  padded.width = 13;
  padded.height = 11;
  padded.sourceImages = 2;
  padded.residual = true;
  cases.push_back(padded);
  Case window;  // a window from channel 3 of 42, 3x3 stride 2, batch norm after, affine only
  window.descriptor = ConvolutionDescriptor::make(3, 3, 36, 20);
  window.descriptor.strideInPixelsX = window.descriptor.strideInPixelsY = 2;
  sampleBatchNormalization(window.descriptor, 77);
  window.extraSourceChannels = 6;
  window.sourceChannelOffset = 3;
  window.width = 11;
  window.height = 9;
  cases.push_back(window);
  Case grouped;  // direct shader: 3 groups of 2 input channels
  grouped.descriptor = ConvolutionDescriptor::make(3, 3, 6, 9, NeuronDescriptor::relu());
  grouped.descriptor.groups = 3;
  cases.push_back(grouped);
  Case groupedAligned;  // groups of 8 channels: convolution_tiled per group on matrix units
  groupedAligned.descriptor = ConvolutionDescriptor::make(3, 3, 16, 32);
  groupedAligned.descriptor.groups = 2;
  groupedAligned.width = groupedAligned.height = 9;
  cases.push_back(groupedAligned);
  Case unaligned;  // direct shader: an unaligned destination offset (concatenation)
  unaligned.descriptor = ConvolutionDescriptor::make(1, 1, 5, 7, NeuronDescriptor::relu());
  unaligned.destinationChannelOffset = 3;
  unaligned.extraDestinationChannels = 2;
  cases.push_back(unaligned);
  Case depthwise;  // the unrolled rows: one output per input channel, whole slices
  depthwise.descriptor = ConvolutionDescriptor::depthwise(3, 3, 8, 1, NeuronDescriptor::relu());
  depthwise.padding = Padding::explicitPadding(1, 1, 1, 1);
  cases.push_back(depthwise);
  Case multiplier;  // the loop: a channel multiplier of 2, a window from channel 1
  multiplier.descriptor = ConvolutionDescriptor::depthwise(3, 3, 5, 2);
  multiplier.extraSourceChannels = 2;
  multiplier.sourceChannelOffset = 1;
  cases.push_back(multiplier);
  Case oneChannel;  // dense with one input channel: the depthwise shader too
  oneChannel.descriptor = ConvolutionDescriptor::make(3, 3, 1, 6, NeuronDescriptor::relu());
  cases.push_back(oneChannel);
  {
    // A tuning key of its own: other pipelines, and Winograd cannot run it.
    ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 8, 8);
    const std::vector<float> w = randomWeights(d, 3);
    Convolution plain(context(), d, w);
    sampleSourceActivation(d, 5, NeuronType::relu);
    Convolution activated(context(), d, w);
    Image x(context(), {6, 5, 8, 1, ChannelFormat::float32, ImageUsage::all, "x"});
    Image y(context(), {6, 5, 8, 1, ChannelFormat::float32});
    CommandBuffer cb(context());
    plain.encode(cb, x, y);
    activated.encode(cb, x, y);
    CHECK(activated.tuningKey() == plain.tuningKey() + " activated");
  }
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16})
    for (const NeuronType neuron : {NeuronType::relu, NeuronType::none})
      for (Case c : cases) {
        c.format = format;
        c.seed = seed++;
        sampleSourceActivation(c.descriptor, seed++, neuron);
        CAPTURE(describe(c));
        CAPTURE(toString(neuron));
        run(c);
      }
}

TEST_CASE("convolution: a source activation on every configuration, forced") {
  // VKCNN_CONVOLUTION_TILE forces each portable GEMM tile (float32), and on GPUs with matrix units
  // each tile of convolution_tiles.h, split or whole, and each split-k shader (float16); the
  // shapes: a 1x1 bottleneck over 3 row tiles, and a padded 3x3 with a residual. Lavapipe runs the
  // portable tiles only (docs/testing.md names the GPU command).
  std::vector<std::string> configurations = {"gemm_128x32w16", "gemm_128x32w8", "gemm_128x16w8",
                                             "gemm_large", "gemm_small"};
  const bool matrixUnits = context().capabilities().matrixUnits;
  if (matrixUnits) {
    configurations.insert(configurations.end(), {"matrix_large", "matrix_medium", "matrix_small"});
    for (const detail::MatrixTile& tile : detail::kMatrixTiles)
      for (const char* splits : {"", "s2"})
        configurations.push_back(tile.name + std::string(splits));
  }
  Case a;  // 1x1 72 -> 40 over 2 images of 12x13 (312 rows)
  a.descriptor = ConvolutionDescriptor::make(1, 1, 72, 40, NeuronDescriptor::relu());
  a.width = 12;
  a.height = 13;
  a.sourceImages = 2;
  Case b;  // 3x3 padded, 13 -> 70, a residual
  b.descriptor = ConvolutionDescriptor::make(3, 3, 13, 70, NeuronDescriptor::relu());
  b.padding = Padding::explicitPadding(1, 1, 1, 1);
  b.width = 13;
  b.height = 11;
  b.residual = true;
  uint32_t seed = 2100;
  for (const std::string& configuration : configurations) {
    CAPTURE(configuration);
    forceChoice(&detail::ChoiceOverrides::tile, configuration.c_str());
    const bool portable = configuration.rfind("gemm_", 0) == 0;
    for (Case c : {a, b}) {
      c.format = portable ? ChannelFormat::float32 : ChannelFormat::float16;
      c.seed = seed++;
      sampleSourceActivation(c.descriptor, seed++, NeuronType::relu);
      CAPTURE(describe(c));
      run(c);
    }
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
}

TEST_CASE("convolution: a temporary residual is one read; bad residuals are errors") {
  const ConvolutionDescriptor d = ConvolutionDescriptor::make(1, 1, 4, 4, NeuronDescriptor::relu());
  Convolution kernel(context(), d, randomFloats(d.weightCount(), 3));
  const Tensor x = randomTensor(2, 4, 3, 3, 4);
  const Image source = makeImage(x, ChannelFormat::float32, "x");

  // A temporary residual goes back to the pool after its one read, as if an Arithmetic add read
  // it; a source that is also the residual is read once.
  runOnce([&](CommandBuffer& cb) {
    TemporaryImage shortcut(cb, {3, 3, 4, 2, ChannelFormat::float32});
    Neuron copy(context(), NeuronDescriptor{});
    copy.encode(cb, source, shortcut);
    shortcut.setReadCount(2);
    TemporaryImage y = kernel.encodeWithResidual(cb, source, shortcut);
    CHECK(shortcut.readCount() == 1);
    TemporaryImage z = kernel.encodeWithResidual(cb, shortcut, shortcut);
    CHECK(shortcut.readCount() == 0);
    VKCNN_CHECK_ERROR(kernel.encodeWithResidual(cb, source, shortcut, y), ErrorCode::misuse,
                      "residual");
    CHECK(y.readCount() == 1);
    CHECK(z.readCount() == 1);
  });

  Image destination(context(), {3, 3, 8, 2, ChannelFormat::float32, ImageUsage::all, "y"});
  auto wrong = [&](ImageDescriptor descriptor, const char* fragment) {
    descriptor.label = "r";
    const Image residual(context(), descriptor);
    CAPTURE(fragment);
    runOnce([&](CommandBuffer& cb) {
      VKCNN_CHECK_ERROR(kernel.encodeWithResidual(cb, source, residual, destination),
                        ErrorCode::invalidArgument, fragment);
    });
  };
  wrong({4, 3, 4, 2}, "residual 'r' is 4x3x4 with 2 images but must be 3x3x4 with 2 images");
  wrong({3, 2, 4, 2}, "residual 'r' is 3x2x4 with 2 images");
  wrong({3, 3, 5, 2}, "residual 'r' is 3x3x5 with 2 images");
  wrong({3, 3, 4, 1}, "residual 'r' is 3x3x4 with 1 images");
  // The residual may not be the layers the kernel writes.
  runOnce([&](CommandBuffer& cb) {
    VKCNN_CHECK_ERROR(
        kernel.encodeWithResidual(cb, source, destination.subImage({0, 4}), destination),
        ErrorCode::invalidArgument, "in-place kernels are not supported");
    VKCNN_CHECK_ERROR(kernel.encodeWithResidual(cb, source, Image{}), ErrorCode::invalidArgument,
                      "the residual is empty");
  });
  // Other layers of the destination's image are fine: channels [4, 8) into [0, 4).
  Image both = makeImage(randomTensor(2, 8, 3, 3, 5), ChannelFormat::float32, "both");
  const Tensor before = download(both);
  runOnce([&](CommandBuffer& cb) {
    kernel.encodeWithResidual(cb, source, both.subImage({4, 4}), both);
  });
  const Tensor after = download(both);
  CHECK(after.at(1, 5, 2, 2) == before.at(1, 5, 2, 2));
  const std::vector<float> w = randomFloats(d.weightCount(), 3);
  double sum = before.at(1, 6, 2, 1);
  for (uint32_t ic = 0; ic < 4; ++ic) sum += x.at(1, ic, 2, 1) * w[2 * 4 + ic];
  CHECK(std::abs(after.at(1, 2, 2, 1) - std::max(sum, 0.0)) < 1e-5);
}

TEST_CASE("convolution: clip rectangle and offset in x and y") {
  for (uint32_t stride : {1u, 2u}) {
    Case c;
    c.seed = 70 + stride;
    c.descriptor = ConvolutionDescriptor::make(3, 2, 4, 5);
    c.descriptor.strideInPixelsX = c.descriptor.strideInPixelsY = stride;
    c.width = 9;
    c.height = 8;
    c.destinationWidth = 9;
    c.destinationHeight = 8;
    c.clip = {2, 3, 0, 4, 3, kWholeExtent};
    c.offset = {-1, 2, 0};
    CAPTURE(stride);
    run(c);
  }
}

TEST_CASE("convolution: source channel windows into any destination channel offset") {
  // Dense, grouped and depthwise; aligned and unaligned on both sides (concatenation).
  uint32_t seed = 300;
  for (uint32_t kind = 0; kind < 3; ++kind)
    for (uint32_t sourceOffset : {0u, 1u, 4u, 6u})
      for (uint32_t destinationOffset : {0u, 3u, 4u, 5u}) {
        Case c;
        c.seed = seed++;
        if (kind == 0) c.descriptor = ConvolutionDescriptor::make(3, 3, 5, 7);
        if (kind == 1) {
          c.descriptor = ConvolutionDescriptor::make(3, 3, 6, 10);
          c.descriptor.groups = 2;
        }
        if (kind == 2) c.descriptor = ConvolutionDescriptor::depthwise(3, 3, 5, 2);
        c.width = 4;
        c.height = 3;
        c.sourceImages = 2;
        c.extraSourceChannels = 7;
        c.sourceChannelOffset = sourceOffset;
        c.destinationChannelOffset = destinationOffset;
        c.extraDestinationChannels = 3;
        CAPTURE(kind);
        CAPTURE(sourceOffset);
        CAPTURE(destinationOffset);
        run(c);
      }
}

TEST_CASE("convolution: depthwise with channel multipliers 1, 2 and 3") {
  uint32_t seed = 400;
  for (uint32_t channels : {1u, 3u, 4u, 5u, 13u, 16u, 17u})
    for (uint32_t multiplier : {1u, 2u, 3u}) {
      Case c;
      c.seed = seed++;
      c.descriptor = ConvolutionDescriptor::depthwise(3, 3, channels, multiplier);
      c.descriptor.strideInPixelsX = 1 + channels % 2;
      c.width = 7;
      c.height = 6;
      CAPTURE(channels);
      CAPTURE(multiplier);
      run(c);
    }
}

TEST_CASE("convolution: depthwise rows of 1 to 7 taps, dilated, strided, windows, float16") {
  // One output channel per input channel and whole source slices take the unrolled rows of up to
  // 5 taps (depthwise_convolution.comp); wider kernels, channel windows not starting at a layer
  // and a last partial slice take the loop. Edges on every side (padding), dilation and stride
  // put taps outside the source.
  uint32_t seed = 450;
  for (auto [kw, kh] : {std::pair{1u, 1u}, {3u, 3u}, {5u, 5u}, {5u, 3u}, {2u, 4u}, {7u, 7u}})
    for (uint32_t variant = 0; variant < 4; ++variant) {
      Case c;
      c.seed = seed++;
      const uint32_t channels = variant == 3 ? 14 : 8 + 4 * variant;
      c.descriptor =
          ConvolutionDescriptor::depthwise(kw, kh, channels, 1, NeuronDescriptor::relu());
      c.descriptor.strideInPixelsX = 1 + variant % 2;
      c.descriptor.strideInPixelsY = 1 + (variant / 2) % 2;
      c.descriptor.dilationRateX = variant == 1 ? 2 : 1;
      c.descriptor.dilationRateY = variant == 2 ? 2 : 1;
      c.width = 11;
      c.height = 9;
      if (variant == 2) {  // a window starting inside a layer: the loop
        c.extraSourceChannels = 3;
        c.sourceChannelOffset = 1;
      }
      c.format = variant == 1 ? ChannelFormat::float16 : ChannelFormat::float32;
      CAPTURE(kw);
      CAPTURE(kh);
      CAPTURE(variant);
      run(c);
    }
}

TEST_CASE("convolution: groups with channels per group not a multiple of 4") {
  uint32_t seed = 500;
  for (auto [in, out, groups] : {std::tuple{6u, 9u, 3u},
                                 {10u, 4u, 2u},
                                 {15u, 5u, 5u},
                                 {8u, 8u, 4u},
                                 {32u, 16u, 2u},
                                 {34u, 26u, 2u}}) {
    Case c;
    c.seed = seed++;
    c.descriptor = ConvolutionDescriptor::make(3, 3, in, out);
    c.descriptor.groups = groups;
    c.width = 5;
    c.height = 4;
    CAPTURE(in);
    CAPTURE(out);
    CAPTURE(groups);
    run(c);
  }
}

TEST_CASE("convolution: every neuron type fused, PReLU per channel and shared") {
  for (uint32_t t = 0; t < kNeuronTypeCount; ++t) {
    const auto type = NeuronType(t);
    CAPTURE(toString(type));
    Case c;
    c.seed = 600 + t;
    c.descriptor = ConvolutionDescriptor::make(3, 3, 5, 7, sampleNeuron(type, 7));
    c.width = 5;
    c.height = 4;
    c.destinationChannelOffset = t % 4;
    run(c);
    // Depthwise and fully connected fuse it through their own shaders.
    Case depthwise = c;
    depthwise.descriptor = ConvolutionDescriptor::depthwise(3, 3, 7, 1, sampleNeuron(type, 7));
    run(depthwise);
    Case fullyConnected = c;
    fullyConnected.fullyConnected = true;
    fullyConnected.descriptor.kernelWidth = 5;
    fullyConnected.descriptor.kernelHeight = 4;
    run(fullyConnected);
  }
  // One slope for all channels; and the MPS setter.
  Case shared;
  shared.descriptor = ConvolutionDescriptor::make(3, 3, 4, 6);
  shared.descriptor.setNeuronToPReLUWithParametersA(std::vector<float>{0.25f});
  run(shared);
  Case perChannel;
  perChannel.descriptor = ConvolutionDescriptor::make(1, 1, 8, 13);
  std::vector<float> slopes = randomFloats(13, 9, 0.f, 1.f);
  perChannel.descriptor.setNeuronToPReLUWithParametersA(slopes);
  perChannel.destinationChannelOffset = 2;
  run(perChannel);
}

TEST_CASE(
    "convolution: every neuron type, with and without a residual, fixed in a tile's pipeline") {
  // The neuron's type and the residual are specialization constants of the tiles' pipelines
  // (convolution_tiled.glsl's EPILOGUE_OPS): every type, each with and without a residual, on a
  // 64x64 tile whose epilogue reads ahead ("ahead") or as it goes ("inline-fixed", what small
  // layers get), and with both in the push constants ("inline"); the pieces shader's in "a
  // batch's pieces in one matrix-unit dispatch". On a GPU without matrix units (lavapipe) the
  // same cases run on the portable shaders.
  for (const char* epilogue : {"ahead", "inline-fixed", "inline"}) {
    // Lavapipe runs the portable shaders, which the variable does not change: twice is enough.
    if (std::string(epilogue) == "inline" && !context().capabilities().matrixUnits) continue;
    CAPTURE(epilogue);
    forceChoice(&detail::ChoiceOverrides::epilogue, epilogue);
    for (uint32_t t = 0; t < kNeuronTypeCount; ++t) {
      const auto type = NeuronType(t);
      CAPTURE(toString(type));
      for (bool residual : {false, true}) {
        CAPTURE(residual);
        forceChoice(&detail::ChoiceOverrides::tile, "64x64");
        Case c;
        c.seed = 1700 + 2 * t + (residual ? 1 : 0);
        c.descriptor = ConvolutionDescriptor::make(3, 3, 16, 24, sampleNeuron(type, 24));
        c.padding = Padding::explicitPadding(1, 1, 1, 1);
        c.width = 9;
        c.height = 7;
        c.sourceImages = 2;
        c.residual = residual;
        c.format = ChannelFormat::float16;
        run(c);
      }
    }
  }
  forceChoice(&detail::ChoiceOverrides::tile, "");
  forceChoice(&detail::ChoiceOverrides::epilogue, "");
}

TEST_CASE("convolution: batch normalization folded at init, with and without gamma, beta, bias") {
  uint32_t seed = 700;
  for (uint32_t variant = 0; variant < 8; ++variant) {
    const bool gamma = variant & 1, beta = variant & 2, bias = variant & 4;
    CAPTURE(gamma);
    CAPTURE(beta);
    CAPTURE(bias);
    for (bool depthwise : {false, true}) {
      Case c;
      c.seed = seed++;
      c.descriptor = depthwise ? ConvolutionDescriptor::depthwise(3, 3, 6, 2)
                               : ConvolutionDescriptor::make(3, 3, 5, 12);
      const uint32_t out = c.descriptor.outputFeatureChannels;
      // BN before a neuron: leaky ReLU shows whether the order is right.
      c.descriptor.neuron = NeuronDescriptor::of(NeuronType::leakyRelu, 0.1f);
      c.descriptor.setBatchNormalizationParametersForInference(
          randomFloats(out, c.seed + 10, -0.5f, 0.5f), randomFloats(out, c.seed + 11, 0.2f, 2.f),
          gamma ? randomFloats(out, c.seed + 12, 0.5f, 1.5f) : std::vector<float>{},
          beta ? randomFloats(out, c.seed + 13) : std::vector<float>{}, 1e-3f);
      c.withBias = bias;
      c.width = 6;
      c.height = 5;
      run(c);
    }
  }
}

TEST_CASE("convolution: fully connected over whole sources") {
  uint32_t seed = 800;
  for (auto [w, h, in, out] : {std::tuple{1u, 1u, 13u, 17u},
                               {3u, 3u, 4u, 5u},
                               {4u, 3u, 17u, 8u},
                               {2u, 5u, 32u, 3u},
                               {7u, 7u, 8u, 16u},
                               {1u, 1u, 64u, 10u},
                               {3u, 2u, 1u, 5u}}) {  // one input channel: the depthwise shader
    Case c;
    c.seed = seed++;
    c.fullyConnected = true;
    c.descriptor = ConvolutionDescriptor::make(w, h, in, out, NeuronDescriptor::relu());
    c.width = w;
    c.height = h;
    c.sourceImages = 3;
    c.offset.z = 1;
    c.clip.z = 0;
    c.clip.depth = 2;
    c.destinationImages = 3;
    c.destinationChannelOffset = out % 5;
    CAPTURE(w);
    CAPTURE(h);
    CAPTURE(in);
    CAPTURE(out);
    run(c);
  }
  // Grouped fully connected (in groups of 2).
  Case grouped;
  grouped.fullyConnected = true;
  grouped.descriptor = ConvolutionDescriptor::make(3, 2, 10, 6);
  grouped.descriptor.groups = 2;
  grouped.width = 3;
  grouped.height = 2;
  run(grouped);
}

TEST_CASE("fully connected: the batched shader, forced, over swept shapes and batches") {
  // VKCNN_FULLY_CONNECTED forces fully_connected_batched (convolution.cpp) with the host's row
  // count or 1, 2, 4 or 8 rows of invocations per slice; "legacy" the convolution path. Batches of
  // 1, 2, 5 and 33 images (two workgroups of 32 along the batch), windows inside larger sources
  // (unaligned starts read two layers), partial last slices, neurons, batch normalization. The two
  // last shapes have longer reductions (280 and 1176 weight blocks a slice), several steps of one
  // image's loop with 1 and 8 rows.
  struct Shape {
    uint32_t w, h, in, out;
  };
  const Shape shapes[] = {{1, 1, 13, 10}, {3, 2, 5, 17},  {2, 2, 17, 9},
                          {4, 3, 32, 64}, {5, 4, 56, 24}, {7, 7, 96, 8}};
  const char* modes[] = {"batched", "batched1", "batched2", "batched4", "batched8", "legacy"};
  uint32_t seed = 1900, index = 0;
  for (const char* mode : modes) {
    forceChoice(&detail::ChoiceOverrides::fullyConnected, mode);
    for (const Shape& s : shapes)
      for (uint32_t batch : {1u, 2u, 5u, 33u}) {
        ++index;
        // The full sweep with the host's rows; a rotating sample of it for the others.
        if (std::string(mode) != "batched" && index % 3 != 0) continue;
        Case c;
        c.seed = seed++;
        c.fullyConnected = true;
        const NeuronType neurons[] = {NeuronType::none, NeuronType::relu, NeuronType::sigmoid};
        c.descriptor = ConvolutionDescriptor::make(s.w, s.h, s.in, s.out,
                                                   NeuronDescriptor::of(neurons[index % 3]));
        if (index % 4 == 1) sampleBatchNormalization(c.descriptor, seed);
        c.withBias = index % 5 != 0;
        c.width = s.w;
        c.height = s.h;
        c.sourceImages = batch + (index % 2);
        c.offset.z = int32_t(index % 2);
        c.clip.depth = batch;
        c.destinationImages = batch + 1;
        c.clip.z = 1;
        // Windows: at a layer, one channel in (two layers per slice), or after 4 channels.
        c.extraSourceChannels = index % 3 == 0 ? 0 : 5;
        c.sourceChannelOffset = index % 3 == 1 ? 1 : index % 3 == 2 ? 4 : 0;
        c.destinationChannelOffset = index % 2 ? 4 : 0;
        c.extraDestinationChannels = index % 3;
        // float16 on the small shapes only (lavapipe is slow there).
        c.format =
            s.in * s.out <= 200 && index % 2 ? ChannelFormat::float16 : ChannelFormat::float32;
        const std::string forced = mode;
        CAPTURE(forced);
        CAPTURE(batch);
        INFO(describe(c));
        run(c);
      }
  }
  forceChoice(&detail::ChoiceOverrides::fullyConnected, "");
}

// FullyConnected::encodeBatch of case `c` (its window w x h) over pieces of `split` images, each
// destination poisoned and compared with the reference of its own piece; the dispatches encoded.
uint32_t fullyConnectedBatch(const Case& c, const std::vector<uint32_t>& split) {
  const ConvolutionDescriptor& d = c.descriptor;
  const uint32_t in = d.inputFeatureChannels, out = d.outputFeatureChannels;
  const std::vector<float> w = randomWeights(d, c.seed + 1);
  const std::vector<float> bias = c.withBias ? randomFloats(out, c.seed + 2) : std::vector<float>{};
  FullyConnected kernel(context(), d, w, bias);
  applyGeometry(kernel, c);
  const uint32_t dstC = c.destinationChannelOffset + out + c.extraDestinationChannels;
  std::vector<Tensor> xs;
  std::vector<Image> sources, destinations;
  for (size_t k = 0; k < split.size(); ++k) {
    xs.push_back(roundedTo(randomTensor(split[k], in + c.extraSourceChannels, c.height, c.width,
                                        c.seed + 5 + uint32_t(k), -1, 1),
                           c.format));
    sources.push_back(makeImage(xs.back(), c.format, "x" + std::to_string(k)));
    destinations.push_back(makePoisoned(
        context(), {1, 1, dstC, split[k], c.format, ImageUsage::all, "y" + std::to_string(k)}));
  }
  EncodingStatistics statistics;
  runOnce([&](CommandBuffer& cb) {
    kernel.encodeBatch(cb, sources, destinations);
    statistics = cb.encodingStatistics();
  });
  INFO(describe(c));
  for (size_t k = 0; k < split.size(); ++k) {
    Case piece = c;
    piece.sourceImages = split[k];
    CAPTURE(k);
    compare(download(destinations[k]), reference(piece, xs[k], w, bias, 1, 1, split[k], dstC),
            tolerance(c.format));
  }
  return statistics.dispatches;
}

// Whether a float16 batch of fully connected layers runs on the matrix units here
// (fully_connected_matrix.comp and fully_connected_reduce.comp: one dispatch more).
bool fullyConnectedOnMatrixUnits(const Case& c) {
  const DeviceCapabilities& caps = context().capabilities();
  return caps.matrixUnits && caps.subgroupSize == 32 && c.format == ChannelFormat::float16 &&
         c.descriptor.destinationFormat != ChannelFormat::float32;
}

TEST_CASE("fully connected: encodeBatch over a batch held in several Images") {
  // FullyConnected::encodeBatch gathers the pieces' windows into one Tensor, runs
  // fully_connected_tensor once over the whole batch (float16 on matrix units: the two dispatches
  // of fully_connected_matrix and fully_connected_reduce) and scatters the results into each
  // destination: 2P + 1 (2P + 2) dispatches for P pieces. A layer it does not take (grouped
  // weights, input channels not a multiple of 4) encodes each pair: P dispatches. Pieces of 9
  // images and more take two workgroups along the batch (FC_IMAGES 8).
  struct Shape {
    uint32_t w, h, in, out, groups;
  };
  const Shape shapes[] = {{1, 1, 12, 10, 1}, {3, 2, 8, 17, 1}, {2, 2, 16, 9, 1}, {4, 3, 32, 64, 1},
                          {7, 7, 8, 16, 1},  {2, 2, 13, 9, 1}, {3, 2, 10, 6, 2}};
  const std::vector<uint32_t> splits[] = {{2, 3}, {1, 1, 1, 4}, {9, 1}};
  uint32_t seed = 2300, index = 0;
  for (const Shape& s : shapes)
    for (const std::vector<uint32_t>& split : splits) {
      ++index;
      Case c;
      c.seed = seed;
      seed += 10;
      c.fullyConnected = true;
      const NeuronType neurons[] = {NeuronType::none, NeuronType::relu, NeuronType::sigmoid,
                                    NeuronType::prelu};
      c.descriptor = ConvolutionDescriptor::make(s.w, s.h, s.in, s.out,
                                                 sampleNeuron(neurons[index % 4], s.out));
      c.descriptor.groups = s.groups;
      if (index % 5 == 1) sampleBatchNormalization(c.descriptor, seed);
      c.withBias = index % 3 != 0;
      c.width = s.w;
      c.height = s.h;
      // Windows: at a layer, one channel in, or after 4 channels; destinations at any channel.
      c.extraSourceChannels = index % 3 == 0 ? 0 : 5;
      c.sourceChannelOffset = index % 3 == 1 ? 1 : index % 3 == 2 ? 4 : 0;
      c.destinationChannelOffset = index % 2 ? 3 : 0;
      c.extraDestinationChannels = index % 3;
      // float16 on the small shapes only (lavapipe is slow there); one float16 network whose
      // weights are float32 only (fully_connected_tensor in the float16 variant).
      c.format = s.in * s.out <= 200 && index % 2 ? ChannelFormat::float16 : ChannelFormat::float32;
      if (index == 3) {
        c.format = ChannelFormat::float16;
        c.descriptor.destinationFormat = ChannelFormat::float32;
      }
      CAPTURE(index);
      const uint32_t pieces = uint32_t(split.size());
      const bool onTensors = s.groups == 1 && s.in % 4 == 0;
      const uint32_t dispatches = fullyConnectedBatch(c, split);
      CHECK(dispatches ==
            (onTensors ? 2 * pieces + (fullyConnectedOnMatrixUnits(c) ? 2 : 1) : pieces));
    }
  // Sources and destinations must pair up.
  FullyConnected kernel(context(), ConvolutionDescriptor::make(1, 1, 4, 4), randomFloats(16, 2399),
                        {});
  Image x(context(), {1, 1, 4, 2, ChannelFormat::float32});
  Image y(context(), {1, 1, 4, 2, ChannelFormat::float32});
  CommandBuffer cb(context());
  VKCNN_CHECK_ERROR(kernel.encodeBatch(cb, {x, x}, {y}), ErrorCode::invalidArgument,
                    "as many destination Images as sources");
  VKCNN_CHECK_ERROR(kernel.encodeBatch(cb, {}, {}), ErrorCode::invalidArgument, "at least one");
}

TEST_CASE("fully connected: encodeBatch on the matrix units, and on tensors where forced") {
  // Float16 batches on matrix units: inputs split over workgroups in chunks (partial chunks here),
  // column tiles (partial ones), row tiles of 16 or 32 images (two of them for 37, one with 12
  // rows of padding for 20), the splits added in order. Each shape also runs with 8 workgroups a
  // multiprocessor (more splits) and on fully_connected_tensor (VKCNN_FULLY_CONNECTED); the tile
  // table has one tile. Lavapipe has no matrix units
  // (docs/testing.md names the GPU command).
  if (!context().capabilities().matrixUnits || context().capabilities().subgroupSize != 32) return;
  struct Shape {
    uint32_t w, h, in, out;
    std::vector<uint32_t> split;
    NeuronType neuron;
  };
  const Shape shapes[] = {{2, 2, 36, 130, {3, 2}, NeuronType::prelu},
                          {7, 7, 64, 100, {20, 17}, NeuronType::relu},
                          {1, 1, 512, 1000, {8, 8, 4}, NeuronType::none},
                          {3, 3, 8, 17, {1, 1, 1}, NeuronType::sigmoid}};
  uint32_t seed = 2700;
  for (const char* forced : {"", "matrix8/64x64", "tensor"})
    for (const Shape& s : shapes) {
      forceChoice(&detail::ChoiceOverrides::fullyConnected, forced);
      Case c;
      c.seed = seed;
      seed += 10;
      c.fullyConnected = true;
      c.descriptor =
          ConvolutionDescriptor::make(s.w, s.h, s.in, s.out, sampleNeuron(s.neuron, s.out));
      if (s.out == 100) sampleBatchNormalization(c.descriptor, seed);
      c.withBias = s.out != 1000;
      c.width = s.w;
      c.height = s.h;
      c.format = ChannelFormat::float16;
      c.destinationChannelOffset = s.out == 17 ? 3 : 0;
      CAPTURE(forced);
      const uint32_t pieces = uint32_t(s.split.size());
      CHECK(fullyConnectedBatch(c, s.split) ==
            2 * pieces + (std::string(forced) == "tensor" ? 1 : 2));
    }
  forceChoice(&detail::ChoiceOverrides::fullyConnected, "");
}

TEST_CASE("convolution: a float32 destinationFormat makes no float16 copies of the weights") {
  // Fully connected layers keep a float16 copy for fully_connected_batched_half.comp (and every
  // dense layer one for the matrix units where there are some): a float32 network never reads
  // them. The lower bound below is the half copy alone, so it holds with matrix units or without.
  const ConvolutionDescriptor plain = ConvolutionDescriptor::make(4, 4, 64, 96);
  ConvolutionDescriptor float32Only = plain;
  float32Only.destinationFormat = ChannelFormat::float32;
  const std::vector<float> w = randomFloats(size_t(plain.weightCount()), 77);
  const std::vector<float> bias = randomFloats(96, 78);
  auto inUse = [] { return context().memoryStatistics().deviceBytesInUse; };
  { FullyConnected warm(context(), plain, w, bias); }  // staging buffers, kept for reuse
  const uint64_t before32 = inUse();
  uint64_t with32 = 0, with16 = 0;
  {
    FullyConnected kernel(context(), float32Only, w, bias);
    with32 = inUse() - before32;
  }
  const uint64_t before16 = inUse();
  {
    FullyConnected kernel(context(), plain, w, bias);
    with16 = inUse() - before16;
  }
  CAPTURE(with32);
  CAPTURE(with16);
  CHECK(with32 >= plain.weightCount() * sizeof(float));
  CHECK(with16 >= with32 + plain.weightCount() * sizeof(uint16_t));

  // Results stay right, float16 destinations included (they read the float32 weights then).
  uint32_t seed = 2100;
  for (bool fullyConnected : {true, false})
    for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
      Case c;
      c.seed = seed++;
      c.fullyConnected = fullyConnected;
      c.descriptor = fullyConnected ? ConvolutionDescriptor::make(3, 2, 12, 9)
                                    : ConvolutionDescriptor::make(3, 3, 12, 9);
      c.descriptor.destinationFormat = ChannelFormat::float32;
      c.width = fullyConnected ? 3 : 7;
      c.height = fullyConnected ? 2 : 5;
      c.sourceImages = c.destinationImages = 2;
      c.format = format;
      INFO(describe(c));
      run(c);
    }
}

TEST_CASE("convolution: a large fully connected layer keeps no matrix-unit copy") {
  // From 2 M weights (kLargeFullyConnected) the float16 batched shader serves the layer at every
  // batch, so only the float32 weights and their float16 copy are kept (with matrix units or
  // without); a destination starting inside an array layer, which that shader does not take, runs
  // on the float32 weights.
  const ConvolutionDescriptor d = ConvolutionDescriptor::make(1, 1, 2048, 2048);
  REQUIRE(d.weightCount() >= 2000000);
  const std::vector<float> w = randomFloats(size_t(d.weightCount()), 79, -0.05f, 0.05f);
  auto inUse = [] { return context().memoryStatistics().deviceBytesInUse; };
  { FullyConnected warm(context(), d, w); }  // staging buffers, kept for reuse
  const uint64_t before = inUse();
  uint64_t bytes = 0;
  {
    FullyConnected kernel(context(), d, w);
    bytes = inUse() - before;
  }
  CAPTURE(bytes);
  const uint64_t weights = d.weightCount() * (sizeof(float) + sizeof(uint16_t));
  CHECK(bytes >= weights);
  CHECK(bytes < weights + d.weightCount() * sizeof(uint16_t) / 2);

  uint32_t seed = 2200;
  for (uint32_t offset : {0u, 2u}) {
    Case c;
    c.seed = seed++;
    c.fullyConnected = true;
    c.descriptor = d;
    c.width = c.height = 1;
    c.format = ChannelFormat::float16;
    c.destinationChannelOffset = offset;
    INFO(describe(c));
    run(c);
  }
}

TEST_CASE("convolution: a layer large enough to be packed on several threads") {
  // 1030 -> 2050 (2.1 M weights, neither a multiple of 4): its output channels are packed in
  // ranges on threads (parallelRanges), the padding of each range zeroed by its thread. In
  // float16 on a device with matrix units the transposed float16 layout is what runs.
  for (auto [batchNorm, format] : {std::pair{false, ChannelFormat::float32},
                                   {true, ChannelFormat::float32},
                                   {true, ChannelFormat::float16}}) {
    Case c;
    c.seed = 880 + batchNorm + 2 * (format == ChannelFormat::float16);
    c.format = format;
    c.fullyConnected = true;
    c.descriptor = ConvolutionDescriptor::make(1, 1, 1030, 2050, NeuronDescriptor::relu());
    if (batchNorm)
      c.descriptor.setBatchNormalizationParametersForInference(
          randomFloats(2050, 7, -0.5f, 0.5f), randomFloats(2050, 8, 0.5f, 2.f),
          randomFloats(2050, 9, 0.5f, 1.5f), randomFloats(2050, 10, -0.5f, 0.5f), 1e-3f);
    c.width = c.height = 1;
    c.destinationChannelOffset = 4;
    CAPTURE(batchNorm);
    CAPTURE(int(format));
    run(c);
  }
}

TEST_CASE("convolution: parallelRanges covers every item once, in whole grains") {
  for (auto [count, grain, minimum] : {std::tuple<size_t, size_t, size_t>{0, 1, 1},
                                       {1, 1, 1},
                                       {1000, 1, 1},
                                       {1000, 64, 1},
                                       {1000, 7, 300},
                                       {1000, 1, 2000},
                                       {5, 64, 1}}) {
    CAPTURE(count);
    CAPTURE(grain);
    CAPTURE(minimum);
    std::vector<std::atomic<int>> seen(count);
    std::mutex mutex;
    std::vector<std::pair<size_t, size_t>> ranges;
    detail::parallelRanges(count, grain, minimum, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) ++seen[i];
      std::lock_guard lock(mutex);
      ranges.emplace_back(b, e);
    });
    for (size_t i = 0; i < count; ++i) CHECK(seen[i] == 1);
    for (auto [b, e] : ranges) {
      CHECK(b < e);
      CHECK(b % grain == 0);
      CHECK((e % grain == 0 || e == count));
    }
    // Fewer than `minimum` items per thread: the calling thread alone, in one range.
    if (count < 2 * minimum) CHECK(ranges.size() <= 1);
    CHECK(ranges.size() <= std::max(1u, std::thread::hardware_concurrency()));
  }
}

TEST_CASE("convolution: float16 and unorm8 sources on small shapes") {
  uint32_t seed = 900;
  for (uint32_t kind = 0; kind < 4; ++kind) {
    Case c;
    c.seed = seed++;
    c.format = ChannelFormat::float16;
    if (kind == 0) c.descriptor = ConvolutionDescriptor::make(3, 3, 5, 8, NeuronDescriptor::relu());
    if (kind == 1) {
      c.descriptor = ConvolutionDescriptor::make(2, 3, 13, 4);
      c.descriptor.strideInPixelsX = 2;
      c.descriptor.dilationRateY = 2;
      c.destinationChannelOffset = 1;
    }
    if (kind == 2) c.descriptor = ConvolutionDescriptor::depthwise(3, 3, 17, 1);
    if (kind == 3) {
      c.fullyConnected = true;
      c.descriptor = ConvolutionDescriptor::make(4, 4, 5, 7);
    }
    c.width = 4;
    c.height = 4;
    CAPTURE(kind);
    run(c);
  }
  // A picture (unorm8) into a float32 first layer.
  Case picture;
  picture.separateSourceFormat = true;
  picture.sourceFormat = ChannelFormat::unorm8;
  picture.descriptor = ConvolutionDescriptor::make(3, 3, 3, 16);
  picture.descriptor.strideInPixelsX = picture.descriptor.strideInPixelsY = 2;
  picture.width = 9;
  picture.height = 7;
  run(picture);
}

TEST_CASE("convolution: temporary destinations get the output size of each padding mode") {
  // encode(cb, source) sizes its TemporaryImage; a copy reads it back into a host-visible image.
  Tensor x = randomTensor(2, 5, 9, 8, 31);
  for (uint32_t mode = 0; mode < 3; ++mode) {
    CAPTURE(mode);
    ConvolutionDescriptor d = ConvolutionDescriptor::make(4, 3, 5, 6);
    d.strideInPixelsX = 2;
    d.strideInPixelsY = 3;
    d.dilationRateX = 2;
    std::vector<float> w = randomWeights(d, 32);
    Convolution conv(context(), d, w);
    Case c;
    c.descriptor = d;
    c.sourceImages = 2;
    c.width = 8;
    c.height = 9;
    if (mode > 0) {
      c.padding = Padding::explicitPadding(1, 2, 0, 2);
      c.padding.ceilMode = mode == 2;
    }
    conv.padding = c.padding;
    // Source 8x9, dilated kernel 7x3, stride 2x3: mpsDefault ceil(8/2) x ceil(9/3); explicit
    // (8+4-7)/2+1 x (9+1-3)/3+1, rounded down, then up.
    const uint32_t expectW[] = {4, 3, 4}, expectH[] = {3, 3, 4};
    Image source = makeImage(x, ChannelFormat::float32);
    ImageDescriptor td = conv.destinationImageDescriptor(source);
    CHECK(td.width == expectW[mode]);
    CHECK(td.height == expectH[mode]);
    CHECK(td.featureChannels == 6);
    CHECK(td.numberOfImages == 2);
    Image destination =
        makePoisoned(context(), {td.width, td.height, 6, 2, ChannelFormat::float32});
    runOnce([&](CommandBuffer& cb) {
      TemporaryImage t = conv.encode(cb, source);
      Neuron(context(), NeuronDescriptor{}).encode(cb, t, destination);
    });
    compare(download(destination), reference(c, x, w, {}, td.width, td.height, 2, 6),
            tolerance(ChannelFormat::float32));
  }
}

TEST_CASE("convolution: weights and bias from .dat files") {
  ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 5, 6, NeuronDescriptor::relu());
  std::vector<float> w = randomWeights(d, 41);
  std::vector<float> bias = randomFloats(6, 42);
  const std::string weightsPath = writeTemporaryDatFile(w, "conv-weights");
  const std::string biasPath = writeTemporaryDatFile(bias, "conv-bias");
  Case c;
  c.descriptor = d;
  c.width = 7;
  c.height = 6;
  c.seed = 43;
  Tensor x = randomTensor(1, 5, 6, 7, 43);
  {
    Convolution conv = Convolution::fromDatFiles(context(), d, weightsPath, biasPath);
    runWith(conv, c, x, w, bias);
  }
  {
    Convolution conv = Convolution::fromDatFiles(context(), d, weightsPath);  // no bias
    runWith(conv, c, x, w, {});
  }
  {
    Case fc = c;
    fc.fullyConnected = true;
    fc.descriptor = ConvolutionDescriptor::make(7, 6, 5, 6, NeuronDescriptor::relu());
    std::vector<float> fw = randomWeights(fc.descriptor, 44);
    FullyConnected kernel = FullyConnected::fromDatFiles(
        context(), fc.descriptor, writeTemporaryDatFile(fw, "fc-weights"), biasPath);
    runWith(kernel, fc, x, fw, bias);
  }
  std::filesystem::remove(weightsPath);
  std::filesystem::remove(biasPath);
}

TEST_CASE("convolution: .dat files too short, too long, missing") {
  ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 5, 6);
  // 270 weights = 1080 bytes; 6 bias values = 24 bytes.
  const std::string shortPath = writeTemporaryDatFile(std::vector<float>(269), "short");
  const std::string longPath = writeTemporaryDatFile(std::vector<float>(271), "long");
  const std::string goodPath = writeTemporaryDatFile(std::vector<float>(270), "good");
  const std::string emptyPath = writeTemporaryDatFile({}, "empty");
  const std::string missingPath = shortPath + ".missing";
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, shortPath), ErrorCode::io, shortPath);
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, shortPath), ErrorCode::io,
                    "too short: expected 1080 bytes (270 float32 values), found 1076 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, longPath), ErrorCode::io,
                    "too long: expected 1080 bytes (270 float32 values), found 1084 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, emptyPath), ErrorCode::io,
                    "found 0 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, missingPath), ErrorCode::io,
                    missingPath);
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, missingPath), ErrorCode::io,
                    "expected 1080 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, goodPath, longPath), ErrorCode::io,
                    "bias file '" + longPath + "' is too long: expected 24 bytes");
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), d, goodPath, missingPath), ErrorCode::io,
                    "bias file '" + missingPath);
  VKCNN_CHECK_ERROR(
      Convolution::fromDatFiles(context(), d, std::filesystem::temp_directory_path().string()),
      ErrorCode::io, "not a regular file");
  ConvolutionDescriptor fc = ConvolutionDescriptor::make(2, 2, 3, 4);
  VKCNN_CHECK_ERROR(FullyConnected::fromDatFiles(context(), fc, shortPath), ErrorCode::io,
                    "expected 192 bytes (48 float32 values), found 1076 bytes");
  // The descriptor is checked before any file is opened.
  ConvolutionDescriptor bad = d;
  bad.groups = 2;
  VKCNN_CHECK_ERROR(Convolution::fromDatFiles(context(), bad, missingPath),
                    ErrorCode::invalidArgument, "divisible by groups");
  for (const auto& p : {shortPath, longPath, goodPath, emptyPath}) std::filesystem::remove(p);
}

TEST_CASE("convolution: bad descriptors and shapes are errors before anything is encoded") {
  auto make = [](uint32_t kw, uint32_t kh, uint32_t in, uint32_t out) {
    return ConvolutionDescriptor::make(kw, kh, in, out);
  };
  auto weightsFor = [](const ConvolutionDescriptor& d) {
    return std::vector<float>(d.groups ? size_t(d.weightCount()) : 1, 0.1f);
  };
  auto check = [&](ConvolutionDescriptor d, const char* fragment) {
    CAPTURE(fragment);
    VKCNN_CHECK_ERROR(Convolution(context(), d, weightsFor(d)), ErrorCode::invalidArgument,
                      fragment);
  };
  check(make(0, 3, 4, 4), "kernel size 0x3");
  check(make(3, 0, 4, 4), "kernel size 3x0");
  check(make(3, 3, 0, 4), "inputFeatureChannels is 0");
  check(make(3, 3, 4, 0), "outputFeatureChannels is 0");
  ConvolutionDescriptor d = make(3, 3, 6, 8);
  d.groups = 0;
  check(d, "groups is 0");
  d.groups = 4;
  check(d, "inputFeatureChannels 6 is not divisible by groups 4");
  d = make(3, 3, 8, 6);
  d.groups = 4;
  check(d, "outputFeatureChannels 6 is not divisible by groups 4");
  d = make(3, 3, 4, 4);
  d.strideInPixelsX = 0;
  check(d, "stride 0x1");
  d = make(3, 3, 4, 4);
  d.strideInPixelsY = 0;
  check(d, "stride 1x0");
  d = make(3, 3, 4, 4);
  d.dilationRateX = 0;
  check(d, "dilation rate 0x1");
  d = make(3, 3, 4, 4);
  d.dilationRateY = 0;
  check(d, "dilation rate 1x0");

  // Weight and bias counts.
  d = make(3, 3, 4, 5);
  VKCNN_CHECK_ERROR(Convolution(context(), d, std::vector<float>(179)), ErrorCode::invalidArgument,
                    "179 weights given, the descriptor needs 180");
  ConvolutionDescriptor grouped = make(3, 3, 4, 6);
  grouped.groups = 2;
  VKCNN_CHECK_ERROR(Convolution(context(), grouped, std::vector<float>(216)),
                    ErrorCode::invalidArgument, "216 weights given, the descriptor needs 108");
  VKCNN_CHECK_ERROR(Convolution(context(), d, std::vector<float>(180), std::vector<float>(4)),
                    ErrorCode::invalidArgument,
                    "4 bias values given for 5 output feature channels");

  // Neurons.
  d = make(1, 1, 4, 5);
  d.neuron = NeuronDescriptor{NeuronType::prelu};
  check(d, "PReLU neuron needs at least one slope");
  d.setNeuronToPReLUWithParametersA(std::vector<float>(3, 0.1f));
  check(d, "3 PReLU slopes for 5 output feature channels");
  d.neuron = NeuronDescriptor::of(NeuronType(99));
  check(d, "neuron type 99");
  VKCNN_CHECK_ERROR(d.setNeuronType(NeuronType::prelu), ErrorCode::invalidArgument,
                    "setNeuronToPReLUWithParametersA");
  d.setNeuronType(NeuronType::linear, 2, 3);
  CHECK(int(d.neuron.type) == int(NeuronType::linear));
  CHECK(d.neuron.a == 2);
  CHECK(d.neuron.b == 3);

  // Batch normalisation.
  d = make(1, 1, 4, 5);
  d.setBatchNormalizationParametersForInference(std::vector<float>(4), std::vector<float>(5, 1), {},
                                                {}, 0);
  check(d, "batch normalization mean has 4 values for 5 output feature channels");
  d.setBatchNormalizationParametersForInference(std::vector<float>(5), std::vector<float>(5, 1),
                                                std::vector<float>(2), {}, 0);
  check(d, "batch normalization gamma has 2 values");
  d.setBatchNormalizationParametersForInference(std::vector<float>(5), std::vector<float>(5, 1), {},
                                                std::vector<float>(6), 0);
  check(d, "batch normalization beta has 6 values");
  d.setBatchNormalizationParametersForInference(std::vector<float>(5), std::vector<float>(3, 1), {},
                                                {}, 0);
  check(d, "batch normalization variance has 3 values");
  d.setBatchNormalizationParametersForInference(
      std::vector<float>(5), std::vector<float>{1, 1, -0.5f, 1, 1}, {}, {}, 0.25f);
  check(d, "variance[2] + epsilon is -0.25");

  // Source activations.
  d = make(1, 1, 6, 4);
  d.sourceActivation = SourceActivation{std::vector<float>(5, 1.f), std::vector<float>(6, 0.f)};
  check(d, "source activation has 5 scales and 6 shifts for 6 input feature channels");
  d.sourceActivation->scale.push_back(1.f);
  d.sourceActivation->neuron = NeuronType::sigmoid;
  check(d, "source activation neuron sigmoid (must be none or relu)");
  d.sourceActivation->neuron = NeuronType::relu;
  d.sourceActivation->shift[4] = std::numeric_limits<float>::infinity();
  check(d, "source activation scale or shift of channel 4 is not finite");

  // Fully connected.
  ConvolutionDescriptor fc = make(3, 3, 4, 5);
  fc.dilationRateX = 2;
  VKCNN_CHECK_ERROR(FullyConnected(context(), fc, weightsFor(fc)), ErrorCode::invalidArgument,
                    "dilation rate 2x1 must be 1x1");
  fc.dilationRateX = 1;
  fc.sourceActivation = SourceActivation{std::vector<float>(4, 1.f), std::vector<float>(4, 0.f)};
  VKCNN_CHECK_ERROR(FullyConnected(context(), fc, weightsFor(fc)), ErrorCode::invalidArgument,
                    "a fully connected layer takes no source activation");

  // Encode-time shapes.
  CommandBuffer cb(context());
  Image source(context(), {6, 5, 8, 2, ChannelFormat::float32, ImageUsage::all, "source"});
  Image destination(context(), {6, 5, 8, 2, ChannelFormat::float32});
  ConvolutionDescriptor seven = make(3, 3, 7, 8);
  Convolution conv(context(), seven, weightsFor(seven));
  conv.label = "conv1";
  VKCNN_CHECK_ERROR(conv.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "kernel 'conv1': the source channel window of 'source' holds 8 feature "
                    "channels (sourceFeatureChannelOffset 0) but inputFeatureChannels is 7");
  conv.sourceFeatureChannelOffset = 1;
  conv.destinationFeatureChannelOffset = 1;
  VKCNN_CHECK_ERROR(conv.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset 1");
  ConvolutionDescriptor fcd = make(6, 4, 8, 3);
  FullyConnected fully(context(), fcd, weightsFor(fcd));
  VKCNN_CHECK_ERROR(fully.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "source 'source' is 6x5 but the fully connected kernel spans 6x4");
  ConvolutionDescriptor big = make(7, 3, 8, 8);
  Convolution tooBig(context(), big, weightsFor(big));
  tooBig.padding = Padding::explicitPadding(0, 0, 0, 0);
  Image narrow(context(), {5, 5, 8, 1, ChannelFormat::float32});
  VKCNN_CHECK_ERROR(tooBig.encode(cb, narrow), ErrorCode::invalidArgument,
                    "padded source width 5 (5 + 0 + 0) is smaller than the dilated kernel width 7");
  // A window origin (offset minus padding) past the shader's 32-bit coordinates.
  ConvolutionDescriptor eight = make(3, 3, 8, 8);
  Convolution far(context(), eight, weightsFor(eight));
  far.padding = Padding::explicitPadding(0, 0x80000000u, 0, 0);
  far.offset.x = -1;
  VKCNN_CHECK_ERROR(far.encode(cb, source, destination), ErrorCode::limitExceeded,
                    "window origin x -2147483649");
  CHECK(cb.encodingStatistics().dispatches == 0);
}

TEST_CASE(
    "convolution: a tuned configuration is used; the tuning file round-trips and a damaged "
    "or foreign one is ignored") {
  // 1x1, 3 images of 110x110, 5 -> 20 channels in float32: the cost model picks the portable
  // two-stage 128 x 16 GEMM tile (gemm_128x16w8) on every device; the tuning entry forces another.
  Case c;
  c.descriptor = ConvolutionDescriptor::make(1, 1, 5, 20, NeuronDescriptor::relu());
  c.width = c.height = 110;
  c.sourceImages = 3;
  c.seed = 41;
  const ConvolutionDescriptor& d = c.descriptor;
  Tensor x = roundedTo(randomTensor(c.sourceImages, 5, c.height, c.width, c.seed, -1, 1), c.format);
  std::vector<float> w = randomWeights(d, c.seed + 1), bias = randomFloats(20, c.seed + 2);
  Convolution kernel(context(), d, w, bias);
  runWith(kernel, c, x, w, bias);
  CHECK(kernel.configuration() == "gemm_128x16w8");
  const std::string key = kernel.tuningKey();
  REQUIRE_FALSE(key.empty());
  CHECK(ConvolutionTuning::lookup(context(), key).empty());
  ConvolutionTuning::set(context(), key, "gemm_small");
  runWith(kernel, c, x, w, bias);  // still right against the CPU reference
  CHECK(kernel.configuration() == "gemm_small");
  // Pieces side by side (imagesSideBySide) are the cost model's: the tuner times a piece alone.
  kernel.imagesSideBySide = 6;
  runWith(kernel, c, x, w, bias);
  CHECK(kernel.configuration() == "gemm_128x16w8");
  CHECK(kernel.tuningKey().empty());
  kernel.imagesSideBySide = 0;
  ConvolutionTuning::set(context(), key, "no_such_tile");  // not applicable: the cost model
  runWith(kernel, c, x, w, bias);
  CHECK(kernel.configuration() == "gemm_128x16w8");
  CHECK_THROWS_AS(ConvolutionTuning::set(context(), "a\tb", "gemm_small"), Error);

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vkcnn-tuning-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  setenv("VKCNN_PIPELINE_CACHE_DIR", dir.string().c_str(), 1);
  std::string file;
  {
    Context first = makeContext();
    file = ConvolutionTuning::file(first);
    CHECK(file.rfind(dir.string(), 0) == 0);
    CHECK_FALSE(ConvolutionTuning::loaded(first));
    ConvolutionTuning::set(first, key, "gemm_small");
    ConvolutionTuning::set(first, "another shape", "64x64");
    ConvolutionTuning::save(first);
  }
  REQUIRE(std::filesystem::exists(file));
  {
    Context second = makeContext();
    CHECK(ConvolutionTuning::loaded(second));
    CHECK(ConvolutionTuning::size(second) == 2);
    CHECK(ConvolutionTuning::lookup(second, key) == "gemm_small");
    CHECK(ConvolutionTuning::lookup(second, "another shape") == "64x64");
  }
  const std::string good = [&] {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  // Each damaged file: ignored (no entries), one warning naming why, nothing thrown.
  auto ignored = [&](const std::string& bytes, const std::string& why) {
    CAPTURE(why);
    {
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), std::streamsize(bytes.size()));
    }
    Context damaged = makeContext();
    std::vector<std::string> warnings;
    damaged.setLogCallback([&](LogSeverity severity, std::string_view message) {
      if (severity >= LogSeverity::warning) warnings.emplace_back(message);
    });
    CHECK_FALSE(ConvolutionTuning::loaded(damaged));
    CHECK(ConvolutionTuning::size(damaged) == 0);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find(why) != std::string::npos);
  };
  std::string flipped = good;
  flipped.back() = char(flipped.back() ^ 0x5a);
  ignored(flipped, "checksum mismatch");
  ignored(good.substr(0, 20), "too short");
  ignored(good.substr(0, good.size() - 3), "truncated");
  ignored(std::string(200, 'x'), "not a tuning file");
  std::string foreign = good;
  foreign[16] = char(foreign[16] ^ 1);  // the device id (after magic, version, vendor)
  ignored(foreign, "another device");
  std::string otherDriver = good;
  otherDriver[20] = char(otherDriver[20] ^ 1);  // the driver version
  ignored(otherDriver, "another driver");
  unsetenv("VKCNN_PIPELINE_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

TEST_CASE("convolution: tuneConvolutions times Winograd (three dispatches) among the candidates") {
  // F(4x4,3x3) records three dispatches an encode; the tuner sums them per candidate. A small
  // float32 3x3 48 -> 32 layer keeps Winograd's weights, so "winograd" is a candidate beside the
  // portable tiles, and the shape gets an entry.
  ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 48, 32);
  d.destinationFormat = ChannelFormat::float32;
  Case c;
  c.descriptor = d;
  c.padding = Padding::explicitPadding(1, 1, 1, 1);
  c.width = c.height = 12;
  const Tensor x = randomTensor(1, 48, 12, 12, 61);
  const std::vector<float> w = randomWeights(d, 62), bias = randomFloats(32, 63);
  const Tensor expected = reference(c, x, w, bias, 12, 12, 1, 32);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vkcnn-tune-w-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  setenv("VKCNN_PIPELINE_CACHE_DIR", dir.string().c_str(), 1);
  setenv("VKCNN_TUNE", "1", 1);
  Context tuned = makeContext();
  unsetenv("VKCNN_TUNE");
  Convolution kernel(tuned, d, w, bias);
  kernel.padding = c.padding;
  runInContext(tuned, kernel, x, expected);
  const std::string entry = ConvolutionTuning::lookup(tuned, kernel.tuningKey());
  CHECK_FALSE(entry.empty());
  CHECK(kernel.configuration() == entry);
  unsetenv("VKCNN_PIPELINE_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "convolution: with tuneConvolutions (VKCNN_TUNE=1) a shape without an entry is timed at its "
    "first encode and the winner is written to the tuning file") {
  // The shape of the test above: three candidates (gemm_128x16w8, gemm_large, gemm_small) on every
  // device.
  Case c;
  c.descriptor = ConvolutionDescriptor::make(1, 1, 5, 20, NeuronDescriptor::relu());
  c.width = c.height = 110;
  c.sourceImages = 3;
  c.seed = 43;
  const ConvolutionDescriptor& d = c.descriptor;
  Tensor x = roundedTo(randomTensor(c.sourceImages, 5, c.height, c.width, c.seed, -1, 1), c.format);
  std::vector<float> w = randomWeights(d, c.seed + 1), bias = randomFloats(20, c.seed + 2);
  const Tensor expected = reference(c, x, w, bias, 110, 110, 3, 20);

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vkcnn-tune-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  setenv("VKCNN_PIPELINE_CACHE_DIR", dir.string().c_str(), 1);
  // Runs the convolution once in `ctx` against the CPU reference; returns its tuning key.
  auto run = [&](Context& ctx, std::string* configuration) {
    Convolution kernel(ctx, d, w, bias);
    Image source(ctx, {110, 110, 5, 3, c.format, ImageUsage::all, "x"});
    upload(source, x);
    Image destination = makePoisoned(ctx, {110, 110, 20, 3, c.format, ImageUsage::all, "y"});
    CommandBuffer cb(ctx);
    kernel.encode(cb, source, destination);
    cb.commit();
    cb.waitUntilCompleted();
    compare(download(destination), expected, tolerance(c.format));
    *configuration = kernel.configuration();
    return kernel.tuningKey();
  };
  std::string key, chosen, file;
  {
    setenv("VKCNN_TUNE", "1", 1);
    Context tuned = makeContext();
    unsetenv("VKCNN_TUNE");
    file = ConvolutionTuning::file(tuned);
    CHECK_FALSE(std::filesystem::exists(file));
    key = run(tuned, &chosen);
    const std::string entry = ConvolutionTuning::lookup(tuned, key);
    CHECK((entry == "gemm_128x16w8" || entry == "gemm_large" || entry == "gemm_small"));
    CHECK(chosen == entry);  // the encode that tuned ran the winner
    CHECK(ConvolutionTuning::size(tuned) == 1);
    // A second encode of the shape times nothing again.
    std::string again;
    run(tuned, &again);
    CHECK(again == entry);
  }
  REQUIRE(std::filesystem::exists(file));
  {
    // Off (the option beats VKCNN_TUNE): the file's entry is used, nothing is tuned anew.
    setenv("VKCNN_TUNE", "1", 1);
    ContextOptions off;
    off.tuneConvolutions = false;
    Context reader = makeContext(off);
    unsetenv("VKCNN_TUNE");
    CHECK(ConvolutionTuning::loaded(reader));
    CHECK(ConvolutionTuning::size(reader) == 1);
    std::string used;
    run(reader, &used);
    CHECK(used == chosen);
    ConvolutionDescriptor other = ConvolutionDescriptor::make(1, 1, 8, 12);
    Convolution untuned(reader, other, randomWeights(other, 5));
    Image source(reader, {20, 20, 8, 1, c.format, ImageUsage::all, "x"});
    fill(source, 0.5f);
    Image destination(reader, {20, 20, 12, 1, c.format, ImageUsage::all, "y"});
    CommandBuffer cb(reader);
    untuned.encode(cb, source, destination);
    cb.commit();
    cb.waitUntilCompleted();
    CHECK(ConvolutionTuning::lookup(reader, untuned.tuningKey()).empty());
    CHECK(ConvolutionTuning::size(reader) == 1);
  }
  unsetenv("VKCNN_PIPELINE_CACHE_DIR");
  std::filesystem::remove_all(dir);
}
