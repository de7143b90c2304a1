// Convolution's configurations on the device, each forced through the Context's choice overrides
// (scoped_choice.h) and checked against the CPU reference: every GEMM tile, matrix-unit tile and
// split, grouped tile and piece layout; float16 store rounding; deterministic split reductions;
// what the selector takes where the device says so (a pipeline already run, waves of work); and
// the tuning file and tuneConvolutions. The choice itself, without a GPU, is pinned by
// test_convolution_choice.cpp; Winograd's schemes are test_convolution_winograd.cpp's.
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

namespace {

// The tuning cases' shape: 1x1 5 -> 20 channels over 3 images of 110x110 in float32, its source,
// weights and bias from seeds `seed` to `seed` + 2.
struct TuningShape {
  Case c;
  Tensor x;
  std::vector<float> w, bias;
  explicit TuningShape(uint32_t seed) {
    c.descriptor = ConvolutionDescriptor::make(1, 1, 5, 20, NeuronDescriptor::relu());
    c.width = c.height = 110;
    c.sourceImages = 3;
    c.seed = seed;
    x = roundedTo(randomTensor(c.sourceImages, 5, c.height, c.width, c.seed, -1, 1), c.format);
    w = randomWeights(c.descriptor, c.seed + 1);
    bias = randomFloats(20, c.seed + 2);
  }
};

}  // namespace

TEST_CASE(
    "convolution: a tuned configuration is used; the tuning file round-trips and a damaged "
    "or foreign one is ignored") {
  // 1x1, 3 images of 110x110, 5 -> 20 channels in float32: the cost model picks the portable
  // two-stage 128 x 16 GEMM tile (gemm_128x16w8) on every device; the tuning entry forces another.
  TuningShape shape(41);
  const Case& c = shape.c;
  const ConvolutionDescriptor& d = c.descriptor;
  const Tensor& x = shape.x;
  const std::vector<float>& w = shape.w;
  const std::vector<float>& bias = shape.bias;
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
  TuningShape shape(43);
  const Case& c = shape.c;
  const ConvolutionDescriptor& d = c.descriptor;
  const Tensor& x = shape.x;
  const std::vector<float>& w = shape.w;
  const std::vector<float>& bias = shape.bias;
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
