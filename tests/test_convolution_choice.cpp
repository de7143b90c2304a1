// The convolution's choice (engine/src/kernels/convolution_choice.h) as a host function: no GPU,
// no Context. Synthetic devices (an H200, the same without matrix units, a 64-wide subgroup, a
// CPU like lavapipe, one with Vulkan's least shared memory) and representative layers of resnet,
// mobilenet, resnext and vgg at batch 1 and 32, float16 and float32, pin today's configuration:
// a change to the rules, the models or the tables shows up here, with the layer that moved. The
// results of each configuration are checked against the CPU reference in test_convolution.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "convolution_interface.h"

#include "kernels/convolution_choice.h"
#include "vkcnn/convolution.h"
#include "vulkan/device_facts.h"
#include "vulkan/overrides.h"

using namespace vkcnn;
using namespace vkcnn::detail;

namespace {

DeviceFacts h200() {
  DeviceFacts f;
  f.deviceName = "H200-like";
  f.subgroupSize = 32;
  f.multiprocessorsReported = 132;
  f.matrixUnits = MatrixExtension::nv;
  f.sharedMemoryBytes = 232448;
  f.float16Arithmetic = f.storage16Bit = f.imageArrayNonUniformIndexing = true;
  return f;
}

DeviceFacts portable132() {
  DeviceFacts f = h200();
  f.deviceName = "no matrix units";
  f.matrixUnits = MatrixExtension::none;
  return f;
}

// Matrix units but 64-wide subgroups: no convolution_tiled (it counts warps of 32), the split-k
// shaders; the multiprocessors unreported (the fallback).
DeviceFacts wide64() {
  DeviceFacts f = h200();
  f.deviceName = "subgroup 64";
  f.subgroupSize = 64;
  f.multiprocessorsReported = 0;
  f.sharedMemoryBytes = 65536;
  return f;
}

DeviceFacts cpuLike() {
  DeviceFacts f;
  f.deviceName = "lavapipe-like";
  f.cpu = true;
  f.subgroupSize = 8;
  f.sharedMemoryBytes = 32768;
  return f;
}

// Vulkan's least shared memory: the portable tiles that fit, else the direct shader.
DeviceFacts smallShared() {
  DeviceFacts f = cpuLike();
  f.deviceName = "16 KiB shared memory";
  f.subgroupSize = 32;
  f.sharedMemoryBytes = 16384;
  return f;
}

struct Layer {
  const char* name;
  uint32_t kernel, stride, in, out, groups, size;
  bool residual = false;
  bool fullyConnected = false;  // FullyConnected's convolution path
  // The choice pinned at batch 1 float16, batch 1 float32, batch 32 float16 and batch 32 float32,
  // on each kind of device (the columns of Device).
  std::array<const char*, 4> pinned = {};
};

enum Device { kH200, kPortable, kWide64, kSmallShared };

// clang-format off
const Layer kLayers[] = {
    {"resnet conv1 7x7/2 3->64 @112", 7, 2, 3, 64, 1, 112, false, false,
     {"64x64:e0 gemm_128x16w8 128x64w4k16:e1 gemm_128x16w8",
      "gemm_128x16w8 gemm_128x16w8 gemm_128x16w8 gemm_128x16w8",
      "matrix_medium gemm_128x16w8 matrix_large gemm_128x16w8",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"resnet 3x3 64->64 @56", 3, 1, 64, 64, 1, 56, false, false,
     {"64x64p2s2:e0 gemm_small 128x64w4k16:e1 winograd",
      "gemm_small gemm_small winograd winograd",
      "matrix_medium gemm_small matrix_large winograd",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"resnet 1x1 64->256 @56 +residual", 1, 1, 64, 256, 1, 56, true, false,
     {"64x64:e0 gemm_128x16w8 64x128w4k16:e2 gemm_128x32w16",
      "gemm_128x16w8 gemm_128x16w8 gemm_128x32w16 gemm_128x32w16",
      "matrix_large gemm_128x16w8 matrix_large gemm_128x32w16",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"resnet 1x1 256->64 @56", 1, 1, 256, 64, 1, 56, false, false,
     {"64x64p2s1:e0 gemm_small 128x64w4k16:e1 gemm_128x16w8",
      "gemm_small gemm_small gemm_128x16w8 gemm_128x16w8",
      "matrix_medium gemm_small matrix_large gemm_128x16w8",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"resnet 3x3 256->256 @14", 3, 1, 256, 256, 1, 14, false, false,
     {"64x64p2s8:e0 gemm_small winograd winograd",
      "gemm_small gemm_small winograd winograd",
      "matrix_small gemm_small matrix_large winograd",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"resnet 3x3 512->512 @7", 3, 1, 512, 512, 1, 7, false, false,
     {"64x64p2s8:e0 gemm_small winograd winograd",
      "gemm_small gemm_small winograd winograd",
      "matrix_small gemm_small matrix_medium winograd",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"resnet 1x1 1024->256 @14", 1, 1, 1024, 256, 1, 14, false, false,
     {"matrix_small gemm_small 128x128:e0 gemm_128x32w16",
      "gemm_small gemm_small gemm_128x32w16 gemm_128x32w16",
      "matrix_small gemm_small matrix_large gemm_128x32w16",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"mobilenet depthwise 3x3 32 @112", 3, 1, 32, 32, 32, 112, false, false,
     {"depthwise depthwise depthwise depthwise",
      "depthwise depthwise depthwise depthwise",
      "depthwise depthwise depthwise depthwise",
      "depthwise depthwise depthwise depthwise"}},
    {"mobilenet 1x1 32->16 @112", 1, 1, 32, 16, 1, 112, false, false,
     {"64x16:e0 gemm_128x16w8 64x16:e1 gemm_128x16w8",
      "gemm_128x16w8 gemm_128x16w8 gemm_128x16w8 gemm_128x16w8",
      "matrix_large gemm_128x16w8 matrix_large gemm_128x16w8",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"mobilenet 1x1 96->576 @14", 1, 1, 96, 576, 1, 14, false, false,
     {"64x16:e0 gemm_small 64x128w4k16:e0 gemm_128x32w16",
      "gemm_small gemm_small gemm_128x32w16 gemm_128x32w16",
      "matrix_medium gemm_small matrix_large gemm_128x32w16",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"resnext 3x3 g32 128->128 @56", 3, 1, 128, 128, 32, 56, false, false,
     {"grouped direct grouped direct grouped direct grouped direct",
      "grouped direct grouped direct grouped direct grouped direct",
      "grouped direct grouped direct grouped direct grouped direct",
      "grouped direct grouped direct grouped direct grouped direct"}},
    {"resnext 3x3 g8 256->256 @28", 3, 1, 256, 256, 8, 28, false, false,
     {"grouped 64x16:e0 grouped direct grouped 64x32:e1 grouped direct",
      "grouped direct grouped direct grouped direct grouped direct",
      "grouped direct grouped direct grouped direct grouped direct",
      "grouped direct grouped direct grouped direct grouped direct"}},
    {"vgg 3x3 64->64 @224", 3, 1, 64, 64, 1, 224, false, false,
     {"64x64:e1 winograd 128x64w4k16:e1 winograd",
      "winograd winograd winograd winograd",
      "matrix_large winograd matrix_large winograd",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"vgg 3x3 512->512 @28", 3, 1, 512, 512, 1, 28, false, false,
     {"winograd winograd winograd winograd",
      "winograd winograd winograd winograd",
      "matrix_medium winograd matrix_large winograd",
      "gemm_large gemm_large gemm_large gemm_large"}},
    {"vgg fc6 7x7 512->4096 @1", 7, 1, 512, 4096, 1, 1, false, true,
     {"gemm_small gemm_small gemm_small gemm_small",
      "gemm_small gemm_small gemm_small gemm_small",
      "gemm_small gemm_small gemm_small gemm_small",
      "gemm_large gemm_large gemm_large gemm_large"}},
};
// clang-format on

ConvolutionDescriptor descriptorOf(const Layer& l, ChannelFormat format) {
  ConvolutionDescriptor d =
      ConvolutionDescriptor::make(l.kernel, l.kernel, l.in, l.out, NeuronDescriptor::relu());
  d.strideInPixelsX = d.strideInPixelsY = l.stride;
  d.groups = l.groups;
  d.destinationFormat = format;
  return d;
}

ConvolutionShape shapeOf(const Layer& l, const ConvolutionDescriptor& d, const DeviceFacts& facts,
                         uint32_t images, ChannelFormat format) {
  ConvolutionShape shape;
  shape.descriptor = &d;
  shape.shader = l.in / l.groups == 1 ? ShaderId::depthwise_convolution
                 : l.fullyConnected   ? ShaderId::fully_connected
                                      : ShaderId::convolution;
  shape.variant = format == ChannelFormat::float16 ? ShaderVariant::f16 : ShaderVariant::f32;
  shape.width = shape.height = l.fullyConnected ? 1 : l.size;
  shape.images = images;
  shape.destinationChannels = l.out;
  shape.residual = l.residual;
  shape.weights = weightCopiesOf(d, facts, {}, true, l.fullyConnected);
  return shape;
}

// "<name>" and, on convolution_tiled, ":e<epilogue>" (constant 7: 0 as it goes, 1 ahead, 2 ahead
// with a residual).
std::string describe(const ConvolutionConfiguration& c) {
  std::string s = c.name;
  if (c.tile) s += ":e" + std::to_string(c.specialization[7]);
  return s;
}

// The layer's choice at batch 1 and 32, each in float16 and float32.
std::string choices(const Layer& l, const DeviceFacts& facts) {
  std::string all;
  for (uint32_t images : {1u, 32u})
    for (ChannelFormat format : {ChannelFormat::float16, ChannelFormat::float32}) {
      const ConvolutionDescriptor d = descriptorOf(l, format);
      const ConvolutionShape shape = shapeOf(l, d, facts, images, format);
      all += (all.empty() ? "" : " ") + describe(chooseConvolution(shape, facts, {}));
    }
  return all;
}

void checkPinned(const DeviceFacts& facts, Device column) {
  for (const Layer& layer : kLayers) {
    CAPTURE(facts.deviceName);
    CAPTURE(layer.name);
    CHECK(choices(layer, facts) == layer.pinned[column]);
  }
}

}  // namespace

TEST_CASE("convolution choice: an H200-like device") {
  checkPinned(h200(), kH200);
}

TEST_CASE("convolution choice: the same without matrix units") {
  checkPinned(portable132(), kPortable);
}

TEST_CASE("convolution choice: a CPU device like lavapipe, as one without matrix units") {
  // The portable rule reads the multiprocessors (132 where none are reported) and the shared
  // memory, not the subgroup.
  checkPinned(cpuLike(), kPortable);
}

TEST_CASE("convolution choice: matrix units with 64-wide subgroups, multiprocessors unreported") {
  checkPinned(wide64(), kWide64);
}

TEST_CASE("convolution choice: 16 KiB of shared memory") {
  checkPinned(smallShared(), kSmallShared);
}

TEST_CASE(
    "convolution choice: overrides and tuning entries name a configuration where it applies") {
  const DeviceFacts facts = h200();
  const Layer layer{"3x3 256->256 @14", 3, 1, 256, 256, 1, 14};
  const ConvolutionDescriptor d = descriptorOf(layer, ChannelFormat::float16);
  const ConvolutionShape shape = shapeOf(layer, d, facts, 1, ChannelFormat::float16);
  auto forced = [&](const std::string& tile, const std::string& tuned = "") {
    ChoiceOverrides overrides;
    overrides.tile = tile;
    return chooseConvolution(shape, facts, overrides, tuned).name;
  };
  CHECK(forced("") == "64x64p2s8");
  CHECK(forced("128x128") == "128x128");
  CHECK(forced("32x64s2") == "32x64s2");
  CHECK(forced("matrix_medium") == "matrix_medium");
  CHECK(forced("winograd") == "winograd");
  CHECK(forced("legacy") == "matrix_small");
  // Not a configuration of this path: the models decide.
  CHECK(forced("gemm_large") == "64x64p2s8");
  CHECK(forced("bogus") == "64x64p2s8");
  CHECK(forced("128x128s17") == "64x64p2s8");
  // The tuning entry where nothing is forced; the override wins over it.
  CHECK(forced("", "128x64w8") == "128x64w8");
  CHECK(forced("64x16", "128x64w8") == "64x16");
  // Winograd's weights were not kept: the GEMM tiles.
  ConvolutionShape without = shape;
  without.weights.winogradMatrix = false;
  ChoiceOverrides winograd;
  winograd.tile = "winograd";
  CHECK(chooseConvolution(without, facts, winograd).name == "64x64p2s8");
}

TEST_CASE("convolution choice: the tuning key and the candidates a trial times") {
  const DeviceFacts facts = h200();
  const Layer layer{"3x3 256->256 @14", 3, 1, 256, 256, 1, 14};
  const ConvolutionDescriptor d = descriptorOf(layer, ChannelFormat::float16);
  ConvolutionShape shape = shapeOf(layer, d, facts, 32, ChannelFormat::float16);
  CHECK(tuningKeyOf(shape, facts) == "3x3/1x1 d1x1 g1 256->256 to 14x14x32 f16 matrix");
  const std::vector<std::string> candidates = candidatesOf(shape, facts, {});
  REQUIRE(candidates.size() >= 4);
  CHECK(candidates[0] == "winograd");  // the models' choice first
  CHECK(candidates[1] == chooseConvolution(shape, facts, {}, "128x128s17").name);
  CHECK(std::count(candidates.begin(), candidates.end(), "matrix_small") == 1);
  // Pieces side by side have no entry: the tuner times a piece alone.
  shape.imagesSideBySide = 64;
  CHECK(tuningKeyOf(shape, facts).empty());
  CHECK(chooseConvolution(shape, facts, {}, "128x128").tuningKey.empty());
  // Source windows that do not start at a layer are keyed apart.
  shape.imagesSideBySide = 0;
  shape.sourceAtLayer = false;
  CHECK(tuningKeyOf(shape, facts) == "3x3/1x1 d1x1 g1 256->256 to 14x14x32 f16 matrix unaligned");
}

TEST_CASE(
    "convolution choice: a pipeline already run in the command buffer is preferred when close") {
  // The first dispatch of a pipeline costs about 8 us: 1x1 64->64 on one 56x56 image alone takes
  // 64x16; where 64x64 with the same epilogue has run, 64x64 (test_convolution.cpp checks the
  // results on such a pair).
  const DeviceFacts facts = h200();
  const Layer layer{"1x1 64->64 @56", 1, 1, 64, 64, 1, 56};
  const ConvolutionDescriptor d = descriptorOf(layer, ChannelFormat::float16);
  const ConvolutionShape shape = shapeOf(layer, d, facts, 1, ChannelFormat::float16);
  CHECK(chooseConvolution(shape, facts, {}).name == "64x16");
  const MatrixTile* wide = nullptr;
  for (const MatrixTile& t : kMatrixTiles)
    if (std::string(t.name) == "64x64") wide = &t;
  REQUIRE(wide);
  const PipelineRun run = [&](ShaderId shader, const std::array<int32_t, 10>& constants) {
    const auto tile = wide->specialization(0);
    return shader == ShaderId::convolution_tiled &&
           std::equal(constants.begin(), constants.begin() + 8, tile.begin());
  };
  const ConvolutionConfiguration c = chooseConvolution(shape, facts, {}, "", run);
  CHECK(c.name == "64x64");
  CHECK(c.specialization[7] == 0);
}

TEST_CASE("convolution choice: the epilogue, its operations and the source activation's constant") {
  const DeviceFacts facts = h200();
  const Layer layer{"1x1 64->256 @56 +residual", 1, 1, 64, 256, 1, 56, true};
  ConvolutionDescriptor d = descriptorOf(layer, ChannelFormat::float16);
  const ConvolutionShape shape = shapeOf(layer, d, facts, 32, ChannelFormat::float16);
  ConvolutionConfiguration c = chooseConvolution(shape, facts, {});
  REQUIRE(c.tile);
  CHECK(c.specialization.size() == 10);
  CHECK(c.specialization[7] == 2);  // ahead, with the residual
  CHECK(c.specialization[9] == (int32_t(NeuronType::relu) | VKCNN_EPILOGUE_OPS_RESIDUAL));
  CHECK(c.label == " (" + c.name + ")");
  ChoiceOverrides inlineEpilogue;
  inlineEpilogue.epilogue = "inline";
  c = chooseConvolution(shape, facts, inlineEpilogue);
  CHECK(c.specialization[7] == 0);
  CHECK(c.specialization[9] == -1);  // read from the push constants
  // A source activation: constant 10, whatever the shader.
  SourceActivation activation;
  activation.scale.assign(64, 1.f);
  activation.shift.assign(64, 0.f);
  activation.neuron = NeuronType::relu;
  d.sourceActivation = activation;
  c = chooseConvolution(shape, facts, {});
  REQUIRE(c.specialization.size() == 11);
  CHECK(c.specialization[10] == 2);
  const ConvolutionShape portable = shapeOf(layer, d, cpuLike(), 1, ChannelFormat::float32);
  c = chooseConvolution(portable, cpuLike(), {});
  CHECK(c.specialization == std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
}

TEST_CASE("convolution choice: the weights a kernel keeps") {
  const Layer vgg{"vgg 3x3 512->512 @28", 3, 1, 512, 512, 1, 28};
  const ConvolutionDescriptor half = descriptorOf(vgg, ChannelFormat::float16);
  const ConvolutionDescriptor full = descriptorOf(vgg, ChannelFormat::float32);
  WeightCopies c = weightCopiesOf(half, h200(), {}, true, false);
  CHECK((c.matrix && !c.half && !c.winograd && c.winogradMatrix));
  c = weightCopiesOf(full, h200(), {}, true, false);
  CHECK((!c.matrix && !c.half && c.winograd && !c.winogradMatrix));
  c = weightCopiesOf(half, cpuLike(), {}, true, false);
  CHECK((!c.matrix && c.winograd && !c.winogradMatrix));
  c = weightCopiesOf(half, h200(), {}, false, false);  // ContextOptions::winograd off
  CHECK((c.matrix && !c.winograd && !c.winogradMatrix));
  ChoiceOverrides winograd;
  winograd.tile = "winograd";
  c = weightCopiesOf(half, h200(), winograd, false, false);
  CHECK((c.winograd && c.winogradMatrix));
  // vgg16's fc6 as a FullyConnected: the float16 packing, no matrix copy (kLargeFullyConnected).
  const Layer fc6{"vgg fc6", 7, 1, 512, 4096, 1, 1, false, true};
  c = weightCopiesOf(descriptorOf(fc6, ChannelFormat::float16), h200(), {}, true, true);
  CHECK((!c.matrix && c.half && !c.winograd));
}

TEST_CASE("convolution choice: the GEMM shaders' tiles come from convolution_tiles.h") {
  CHECK(gemmKernelOf(ShaderId::convolution_matrix_large).pixels == 64);
  CHECK(gemmKernelOf(ShaderId::convolution_matrix_large).slices == 16);
  CHECK(gemmKernelOf(ShaderId::convolution_matrix_small).split == 8);
  CHECK(gemmKernelOf(ShaderId::convolution_gemm_128x32w16).slices == 32);
  CHECK(gemmKernelOf(ShaderId::convolution_gemm_small).pixels == 16);
  CHECK_THROWS(gemmKernelOf(ShaderId::convolution));
}

namespace {

// The layer's configuration with `precision` asked: name, shader, tile, splits, grid,
// specialization, tuning key and label.
ConvolutionConfiguration choiceWith(const Layer& l, const DeviceFacts& facts, uint32_t images,
                                    ChannelFormat format, AccumulatorPrecision precision,
                                    const ChoiceOverrides& overrides = {}) {
  ConvolutionDescriptor d = descriptorOf(l, format);
  d.accumulatorPrecision = precision;
  const ConvolutionShape shape = shapeOf(l, d, facts, images, format);
  return chooseConvolution(shape, facts, overrides);
}

bool sameConfiguration(const ConvolutionConfiguration& a, const ConvolutionConfiguration& b) {
  return a.shader == b.shader && a.tile == b.tile && a.splits == b.splits &&
         a.rowTiles == b.rowTiles && a.columnTiles == b.columnTiles && a.kernel == b.kernel &&
         a.winograd == b.winograd && a.matrixUnits == b.matrixUnits && a.name == b.name &&
         a.label == b.label && a.tuningKey == b.tuningKey && a.specialization == b.specialization;
}

}  // namespace

TEST_CASE("convolution choice: float16 accumulators change nothing where no tile runs them") {
  // Float32 destinations everywhere, and devices without matrix-unit tiles (none, or 64-wide
  // subgroups: the split-k shaders, float32 accumulators): the same configuration, field by field,
  // the tuning key included, whatever precision is asked.
  for (const DeviceFacts& facts : {h200(), portable132(), wide64(), cpuLike(), smallShared()})
    for (const Layer& l : kLayers)
      for (uint32_t images : {1u, 32u})
        for (ChannelFormat format : {ChannelFormat::float16, ChannelFormat::float32}) {
          if (format == ChannelFormat::float16 && facts.matrixUnits != MatrixExtension::none &&
              facts.warpsOf32())
            continue;  // the next case
          CAPTURE(facts.deviceName);
          CAPTURE(l.name);
          CAPTURE(images);
          CHECK(sameConfiguration(
              choiceWith(l, facts, images, format, AccumulatorPrecision::float16),
              choiceWith(l, facts, images, format, AccumulatorPrecision::float32)));
        }
}

TEST_CASE("convolution choice: float16 accumulators on the matrix-unit tiles") {
  // On the H200-like device, float16 storage: every layer the float32 choice gives a tile of
  // convolution_tiled runs the same tile (or a float16-accumulator-only one) on
  // convolution_tiled_fp16acc, keyed apart for tuning and labelled; the split module, the split-k
  // shaders, Winograd and the rest stay as they were.
  const DeviceFacts facts = h200();
  for (const Layer& l : kLayers)
    for (uint32_t images : {1u, 32u}) {
      CAPTURE(l.name);
      CAPTURE(images);
      const ConvolutionConfiguration full =
          choiceWith(l, facts, images, ChannelFormat::float16, AccumulatorPrecision::float32);
      const ConvolutionConfiguration half =
          choiceWith(l, facts, images, ChannelFormat::float16, AccumulatorPrecision::float16);
      if (full.shader == ShaderId::convolution_tiled) {
        CHECK(half.shader == ShaderId::convolution_tiled_fp16acc);
        REQUIRE(half.tile);
        CHECK((half.tile == full.tile || half.tile->float16Accumulators));
        CHECK(half.label == " (" + half.name + ", float16 accumulators)");
        CHECK(half.tuningKey == full.tuningKey + " fp16acc");
      } else {
        CHECK(half.shader == full.shader);
        CHECK(half.name == full.name);
        CHECK(half.specialization == full.specialization);
      }
    }
  // The layers of the tables above that run tiles, by name (batch 1, batch 32).
  auto names = [&](const Layer& l) {
    return choiceWith(l, facts, 1, ChannelFormat::float16, AccumulatorPrecision::float16).name +
           " " +
           choiceWith(l, facts, 32, ChannelFormat::float16, AccumulatorPrecision::float16).name;
  };
  CHECK(names(kLayers[1]) == "64x64p2s2 128x64w4k16");         // resnet 3x3 64->64 @56
  CHECK(names(kLayers[2]) == "64x64 64x128w4k16");             // resnet 1x1 64->256 @56 +residual
  CHECK(names(kLayers[11]) == "grouped 64x16 grouped 64x32");  // resnext 3x3 g8 256->256 @28
  // A large 3x3 layer of 256 channels at batch 32 (not Winograd: 256 input channels over 8192
  // pixels): 256x128w8k16 with float32 accumulators, 256 x 256 with float16.
  const Layer large{"3x3 256->256 @56", 3, 1, 256, 256, 1, 56};
  ConvolutionConfiguration c =
      choiceWith(large, facts, 32, ChannelFormat::float16, AccumulatorPrecision::float32);
  CHECK(c.name == "256x128w8k16");
  CHECK(c.shader == ShaderId::convolution_tiled);
  c = choiceWith(large, facts, 32, ChannelFormat::float16, AccumulatorPrecision::float16);
  CHECK(c.name == "256x256w8k16");
  CHECK(c.shader == ShaderId::convolution_tiled_fp16acc);
  CHECK(c.rowTiles == 392);
  CHECK(c.columnTiles == 1);
  // With a residual it is not offered (its epilogue would read 32 fragments' residuals ahead).
  Layer withResidual = large;
  withResidual.residual = true;
  CHECK(choiceWith(withResidual, facts, 32, ChannelFormat::float16, AccumulatorPrecision::float16)
            .name != "256x256w8k16");
  // Batch 1 stays on the split module, whose partial sums are float32 (resnet 1x1 256->64 @56).
  c = choiceWith(kLayers[3], facts, 1, ChannelFormat::float16, AccumulatorPrecision::float16);
  CHECK(c.name == "64x64p2s1");
  CHECK(c.shader == ShaderId::convolution_tiled_split);
}

TEST_CASE("convolution choice: the float16-accumulator-only tiles are forced only with them") {
  const DeviceFacts facts = h200();
  const Layer layer{"3x3 256->256 @14", 3, 1, 256, 256, 1, 14};
  auto forced = [&](AccumulatorPrecision precision, const std::string& tile) {
    ChoiceOverrides overrides;
    overrides.tile = tile;
    return choiceWith(layer, facts, 1, ChannelFormat::float16, precision, overrides);
  };
  for (const char* tile : {"256x256w8k16", "128x256w8k16"}) {
    CAPTURE(tile);
    const ConvolutionConfiguration half = forced(AccumulatorPrecision::float16, tile);
    CHECK(half.name == tile);
    CHECK(half.shader == ShaderId::convolution_tiled_fp16acc);
    // Not a configuration of float32 accumulators, nor of the split module: the models decide.
    CHECK(forced(AccumulatorPrecision::float32, tile).name == "64x64p2s8");
    CHECK(forced(AccumulatorPrecision::float16, tile + std::string("s2")).name == "64x64p2s8");
    CHECK(forced(AccumulatorPrecision::float32, tile).shader == ShaderId::convolution_tiled_split);
  }
  // The tiles every precision has run with float16 accumulators where asked.
  CHECK(forced(AccumulatorPrecision::float16, "128x128").shader ==
        ShaderId::convolution_tiled_fp16acc);
  CHECK(forced(AccumulatorPrecision::float32, "128x128").shader == ShaderId::convolution_tiled);
  // A trial times them only with float16 accumulators.
  for (AccumulatorPrecision precision :
       {AccumulatorPrecision::float32, AccumulatorPrecision::float16}) {
    ConvolutionDescriptor d = descriptorOf(layer, ChannelFormat::float16);
    d.accumulatorPrecision = precision;
    const ConvolutionShape shape = shapeOf(layer, d, facts, 32, ChannelFormat::float16);
    const std::vector<std::string> candidates = candidatesOf(shape, facts, {});
    const bool offered =
        std::find(candidates.begin(), candidates.end(), "256x256w8k16") != candidates.end();
    CHECK(offered == (precision == AccumulatorPrecision::float16));
  }
}
