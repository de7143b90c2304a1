// Winograd's schemes against the CPU reference: F(4x4,3x3) on the portable GEMM and F(2x2,3x3) on
// the matrix units, forced over shapes, rounds, pieces and epilogues; a device with less shared
// memory gets the tiles that fit; ContextOptions::winograd false keeps 3x3 layers on the tiles.
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
#include "convolution_case.h"
#include "scoped_choice.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

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
