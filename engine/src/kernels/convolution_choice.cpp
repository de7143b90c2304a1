// The convolution's choice of configuration (kernels/convolution_choice.h), a host function of
// the layer, the device's facts, the overrides and the tuning entry: the Winograd rules, the GEMM
// shaders' table, the cost model of convolution_tiled's tiles at many waves, the latency model at
// few, the split-k shaders' model, the grouped tiles' model, and the candidates a trial times.
// Every rule cites the measurement it was fitted to.
#include "kernels/convolution_choice.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "convolution_interface.h"
#include "kernels/winograd.h"
#include "vkcnn/error.h"
#include "vulkan/pipelines.h"

namespace vkcnn {

const char* toString(AccumulatorPrecision precision) {
  return precision == AccumulatorPrecision::float16 ? "float16" : "float32";
}

}  // namespace vkcnn

namespace vkcnn::detail {

// The GEMM shaders' tiles, as their .comp files take them from convolution_tiles.h; the split-k
// shaders of the matrix units with the workgroups a multiprocessor holds (their latency model).
constexpr GemmKernel kGemmKernels[] = {
    {ShaderId::convolution_matrix_large, "matrix_large", true, VKCNN_MATRIX_LARGE_PIXELS,
     VKCNN_MATRIX_LARGE_SLICES, VKCNN_MATRIX_LARGE_SPLIT_K, 3},
    {ShaderId::convolution_matrix_medium, "matrix_medium", true, VKCNN_MATRIX_MEDIUM_PIXELS,
     VKCNN_MATRIX_MEDIUM_SLICES, VKCNN_MATRIX_MEDIUM_SPLIT_K, 3},
    {ShaderId::convolution_matrix_small, "matrix_small", true, VKCNN_MATRIX_SMALL_PIXELS,
     VKCNN_MATRIX_SMALL_SLICES, VKCNN_MATRIX_SMALL_SPLIT_K, 2},
    {ShaderId::convolution_gemm_128x32w16, "gemm_128x32w16", false, VKCNN_GEMM_128X32W16_PIXELS,
     VKCNN_GEMM_128X32W16_SLICES},
    {ShaderId::convolution_gemm_128x32w8, "gemm_128x32w8", false, VKCNN_GEMM_128X32W8_PIXELS,
     VKCNN_GEMM_128X32W8_SLICES},
    {ShaderId::convolution_gemm_128x16w8, "gemm_128x16w8", false, VKCNN_GEMM_128X16W8_PIXELS,
     VKCNN_GEMM_128X16W8_SLICES},
    {ShaderId::convolution_gemm_large, "gemm_large", false, VKCNN_GEMM_LARGE_PIXELS,
     VKCNN_GEMM_LARGE_SLICES},
    {ShaderId::convolution_gemm_small, "gemm_small", false, VKCNN_GEMM_SMALL_PIXELS,
     VKCNN_GEMM_SMALL_SLICES},
};

const GemmKernel& gemmKernelOf(ShaderId shader) {
  for (const GemmKernel& k : kGemmKernels)
    if (k.shader == shader) return k;
  throw Error(ErrorCode::vulkan, "internal: shader " + std::to_string(uint32_t(shader)) +
                                     " is not a GEMM convolution");
}

namespace {

// Dense convolutions, and grouped ones whose groups start at layers on both sides (channels per
// group a multiple of 4), run on the matrix units where there are some (convolution_tiled.glsl
// takes the grouped ones, a GEMM per group); other grouped ones on the direct shader.
// Groups of 4 channels stay on the direct shader: the 16-column tiles ran them 2-3x slower
// (3/4 of each fragment is padding; NOTES.md, run 6).
bool groupedOnMatrixUnits(const ConvolutionDescriptor& d) {
  const uint32_t in = d.inputFeatureChannels / d.groups, out = d.outputFeatureChannels / d.groups;
  return d.groups == 1 || (in % 4 == 0 && out % 4 == 0 && in >= 8 && out >= 8);
}

// The channels F(4x4,3x3) needs to win on the portable path (winogradChosen): with fewer input
// channels its GEMMs are too short for the transforms' traffic (float32, batch 32: 3x3 32->96
// @28², 0.081 -> 0.103 ms).
bool winogradChannels(const ConvolutionDescriptor& d) {
  return winogradApplies(d) && d.inputFeatureChannels >= 48 && d.outputFeatureChannels >= 32;
}

// The channels F(2x2,3x3) needs on the matrix units (winogradChosen): with fewer its GEMMs'
// reduction is too short for the transforms' traffic (float16, batch 32: 64->64 @56², 0.104 ->
// 0.182 ms; 128->128 @28², 0.093 -> 0.100).
bool winogradMatrixChannels(const ConvolutionDescriptor& d) {
  return winogradApplies(d) && d.inputFeatureChannels >= 128 && d.outputFeatureChannels >= 128;
}

// Whether the portable path runs 3x3 stride-1 layers as F(4x4,3x3) (winograd.h), for `pixels`
// destination pixels (the images encoded together, pieces side by side included) in `blocks`
// blocks of 4x4. Fitted to every float32 3x3 stride-1 shape of six networks at batch 1 and 32
// (H200, bench/NOTES.md, 2026-11-27, session 22, runs 3-4): it wins from 1 GFLOP of direct work
// and 32 blocks at least three quarters full (batch 32: 512->512 @28² 3.70 -> 1.61 ms, 128->32
// @28² 0.176 -> 0.117; batch 1: 256->256 @56² 0.226 -> 0.121). Below, its three dispatches, its
// pipelines' first use in each inference and 4x the weights' traffic cost more than the
// multiply-adds it saves (batch 1: 64->64 @56², 0.23 GFLOP, 0.032 -> 0.046 ms; 512->512 @14², 16
// blocks, 0.096 -> 0.190; googlenet's 64->192 @56², 0.69 GFLOP, gained 10 us alone and lost 85
// in the network), and 13x13 maps fill 66% of their blocks (batch 32: 64->256 @13², 1.6 GFLOP,
// 0.086 -> 0.084 alone; squeezenet1_1 lost 4%).
//
// On the matrix units, F(2x2,3x3) (float16): fitted to every float16 3x3 stride-1 shape of six
// networks at batch 1 and 32 (H200, bench/NOTES.md, 2026-11-27, session 23, runs 1 and 4), it
// wins with at least 256 channels a side from 1.5 GFLOP of direct work (batch 32: 512->512 @28²
// 0.948 -> 0.633 ms, 256->256 @14² 0.085 -> 0.072, 512->512 @7² 0.114 -> 0.072; batch 1:
// 256->256 @56² 0.062 -> 0.042). Below, its three dispatches and the products' traffic cost more
// than the multiply-adds it saves (batch 1: 512->512 @14², 0.92 GFLOP, 0.029 -> 0.034; batch 32:
// 128->256 @56², 0.545 -> 0.635; 128->128 @112², 1.104 -> 1.414 with the clocks warm: session 23's
// 2.09 ms for the direct tile, which had added a branch for it, was a cold measurement, session
// 24 run 1). Since the direct tiles' main loop lost its per-chunk divisions (session 29), F(2x2)
// needs 512 input channels, or fewer than 8192 destination pixels, to win (batch 32, the pieces
// side by side: 256->256 @56² 0.846 -> 0.676 ms direct on 256x128w8k16, 256->512 @28² 0.384 ->
// 0.341; 512->512 @28² still 0.576 against 0.651, @7² 0.055 against 0.082; 256->256 @14², 6272
// pixels, even; batch 1: 256->256 @56² 0.038 against 0.047, 256->512 @28² 0.026 against 0.035;
// bench/NOTES.md, 2026-11-28, session 30, runs 1 and 4).
bool winogradChosen(const ConvolutionDescriptor& d, uint64_t pixels, uint64_t blocks,
                    WinogradScheme scheme) {
  const double flops = 18.0 * double(pixels) * d.inputFeatureChannels * d.outputFeatureChannels;
  if (scheme == WinogradScheme::matrixUnits)
    return winogradMatrixChannels(d) && d.inputFeatureChannels >= 256 &&
           d.outputFeatureChannels >= 256 && flops >= 1.5e9 &&
           (d.inputFeatureChannels >= 512 || pixels < 8192);
  return winogradChannels(d) && flops >= 1e9 && blocks >= 32 && 4 * pixels >= 3 * 16 * blocks;
}

// Whether an encode, or a batch's pieces as one, runs Winograd's `scheme`: VKCNN_CONVOLUTION_TILE
// or a tuning entry names it, or nothing is forced and, where the rule applies (not a piece
// encoded alone), winogradChosen takes the layer. The caller has checked that its weights exist
// and it fits.
bool winogradTaken(const std::string& forced, bool ruleApplies, const ConvolutionDescriptor& d,
                   uint64_t pixels, uint64_t blocks, WinogradScheme scheme) {
  return forced == "winograd" ||
         (forced.empty() && ruleApplies && winogradChosen(d, pixels, blocks, scheme));
}

}  // namespace

uint64_t pixelsOf(const ConvolutionShape& shape) {
  return uint64_t(shape.width) * shape.height * shape.images;
}

// The 4x4 blocks of F(4x4,3x3) (the portable scheme's rule counts them).
uint64_t blocksOf(const ConvolutionShape& shape) {
  return uint64_t((shape.width + 3) / 4) * ((shape.height + 3) / 4) * shape.images;
}

// Encodes of the same layer running side by side with this one, itself included
// (Convolution::imagesSideBySide): their workgroups share the device with this encode's.
uint64_t piecesSideBySide(const ConvolutionShape& shape) {
  return shape.images && shape.imagesSideBySide > shape.images
             ? (uint64_t(shape.imagesSideBySide) + shape.images - 1) / shape.images
             : 1;
}

namespace {

// What the choice derives from a shape, the device and the overrides before it chooses.
struct Layer {
  const ConvolutionShape& shape;
  const ConvolutionDescriptor& d;
  const DeviceFacts& facts;
  const ChoiceOverrides& overrides;
  const PipelineRun& run;
  uint64_t rows, slices, pieces;
  // The multiprocessors the waves are counted in (the one fallback where the device does not
  // report them: DeviceFacts::kAssumedMultiprocessors).
  uint64_t sms;
  // A dense layer writing whole destination layers: an implicit GEMM.
  bool gemm;
  // ... on the matrix units (float16, the kernel keeps the float16 matrix).
  bool matrixUnits;
  // convolution_tiled reads a source texel as one fetch (a window starting at a layer) and
  // counts warps of 32 invocations.
  bool tiledAllowed;
  // A grouped layer on convolution_tiled (groupedOnMatrixUnits).
  bool groupedTiled;
  // ConvolutionDescriptor::accumulatorPrecision float16 where convolution_tiled's tiles may run
  // the layer: they run on convolution_tiled_fp16acc, and the float16-accumulator-only tiles are
  // offered. The split module, the split-k shaders and Winograd keep float32 accumulators.
  bool float16Accumulators;
  // Winograd (winograd.h): F(4x4,3x3) on the portable path, F(2x2,3x3) on the matrix units;
  // possible where the kernel keeps the scheme's weights and the encode fits it.
  WinogradScheme scheme;
  bool winogradPossible;
};

Layer layerOf(const ConvolutionShape& shape, const DeviceFacts& facts,
              const ChoiceOverrides& overrides, const PipelineRun& run) {
  const ConvolutionDescriptor& d = *shape.descriptor;
  Layer x{shape, d, facts, overrides, run};
  x.rows = pixelsOf(shape);
  x.slices = (shape.destinationChannels + 3) / 4;
  x.pieces = piecesSideBySide(shape);
  x.sms = facts.multiprocessors();
  x.gemm =
      shape.shader != ShaderId::depthwise_convolution && d.groups == 1 && shape.destinationAtLayer;
  x.matrixUnits = x.gemm && shape.variant == ShaderVariant::f16 && shape.weights.matrix;
  x.tiledAllowed = shape.sourceAtLayer && facts.warpsOf32();
  x.groupedTiled = shape.shader == ShaderId::convolution && d.groups > 1 &&
                   shape.destinationAtLayer && shape.variant == ShaderVariant::f16 &&
                   shape.weights.matrix && x.tiledAllowed;
  x.float16Accumulators = ((x.matrixUnits && x.tiledAllowed) || x.groupedTiled) &&
                          d.accumulatorPrecision == AccumulatorPrecision::float16;
  x.scheme = x.matrixUnits ? WinogradScheme::matrixUnits : WinogradScheme::portable;
  const bool weights = x.matrixUnits ? shape.weights.winogradMatrix : shape.weights.winograd;
  x.winogradPossible =
      weights && shape.shader == ShaderId::convolution && x.gemm &&
      winogradFits(d, shape.width, shape.height, shape.destinationAtLayer, facts, x.scheme);
  return x;
}

constexpr uint32_t kMaxSplits = 16;

// Whether the layer may run `tile`: a float16-accumulator-only tile where those are asked for.
bool offered(const Layer& x, const MatrixTile& tile) {
  return !tile.float16Accumulators || x.float16Accumulators;
}

// The module convolution_tiled's tiles run on: float16 accumulators where they are asked for.
ShaderId tiledShaderOf(const Layer& x) {
  return x.float16Accumulators ? ShaderId::convolution_tiled_fp16acc : ShaderId::convolution_tiled;
}

// `name` is `tile`'s name (0: convolution_tiled), or it followed by "s" and a split count from 1
// to kMaxSplits (convolution_tiled_split); -1 for any other name.
int32_t splitsNamed(const std::string& name, const MatrixTile& tile) {
  const size_t n = std::strlen(tile.name);
  if (name.compare(0, n, tile.name) != 0) return -1;
  if (name.size() == n) return 0;
  if (name[n] != 's' || name.size() < n + 2 || name.size() > n + 3) return -1;
  int32_t splits = 0;
  for (size_t i = n + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    splits = splits * 10 + int32_t(name[i] - '0');
  }
  return splits >= 1 && splits <= int32_t(kMaxSplits) ? splits : -1;
}

// The GEMM kernel running `shader`, if any.
const GemmKernel* findGemmKernel(ShaderId shader) {
  for (const GemmKernel& k : kGemmKernels)
    if (k.shader == shader) return &k;
  return nullptr;
}

// The shader `forced` names among those of the matrix units or the portable ones, if any.
std::optional<ShaderId> gemmKernelNamed(const std::string& forced, bool matrixUnits) {
  for (const GemmKernel& k : kGemmKernels)
    if (k.matrixUnits == matrixUnits && forced == k.name) return k.shader;
  return std::nullopt;
}

// `kernel`'s workgroups over `rows` destination pixels and `slices` slices.
uint64_t gemmTiles(ShaderId kernel, uint64_t rows, uint64_t slices) {
  const GemmKernel& k = gemmKernelOf(kernel);
  return (rows + k.pixels - 1) / k.pixels * ((slices + k.slices - 1) / k.slices);
}

// The portable GEMM tile `shader`, or where the device's shared memory cannot hold it (Vulkan's
// least is 16 KiB; these tiles take 16-32 KiB, as reflected from their SPIR-V) the first smaller
// one that fits, else the direct shader (ShaderId::convolution, no shared memory).
ShaderId portableTileWithin(const DeviceFacts& facts, ShaderId shader, ShaderVariant variant) {
  auto fits = [&](ShaderId s) { return fitsDevice(facts, shaderModule(s, variant)); };
  if (fits(shader)) return shader;
  for (ShaderId s : {ShaderId::convolution_gemm_128x16w8, ShaderId::convolution_gemm_large,
                     ShaderId::convolution_gemm_small})
    if (fits(s)) return s;
  return ShaderId::convolution;
}

// What runs a dense convolution writing whole destination layers (an implicit GEMM): a shader,
// and for convolution_tiled a tile of convolution_tiles.h (its specialization constants).
struct GemmChoice {
  ShaderId shader;
  const MatrixTile* tile = nullptr;
  // Dense layers on convolution_tiled_split (convolution_tiled.glsl): workgroups that share each
  // tile's reduction (the dispatch's z), named "<tile>s<splits>", 1 included (the split module
  // with the reduction whole: the latency model's layers all run that module, so that each
  // inference meets fewer pipelines for the first time).
  uint32_t splits = 1;
};

std::string nameOf(const GemmChoice& c) {
  if (c.tile)
    return c.shader == ShaderId::convolution_tiled_split
               ? c.tile->name + ("s" + std::to_string(c.splits))
               : c.tile->name;
  const GemmKernel* k = findGemmKernel(c.shader);
  return k ? k->name : "";
}

// The test and benchmark hook VKCNN_CONVOLUTION_TILE forces a configuration where it applies: a
// tile name of convolution_tiles.h, matrix_large / matrix_medium / matrix_small (the split-k
// shaders of convolution_matrix.glsl), gemm_large / gemm_small / gemm_128x32w16 / gemm_128x32w8 /
// gemm_128x16w8 (the portable GEMM shaders), or legacy (the choice before the large tiles
// existed). Unset or unknown: the selector decides.
// (ChoiceOverrides::tile.)
// The test hook VKCNN_CONVOLUTION_EPILOGUE forces convolution_tiled's epilogue: "ahead" (reads
// the bias, the residual and the output pixels before its loop) or "inline" (as it goes), with
// the neuron and the residual fixed in the pipeline ("ahead", "inline-fixed") or read from the
// push constants ("inline"). Unset or anything else: by the layer's workgroups
// (tiledConstants).
// (ChoiceOverrides::epilogue.)
// convolution_tiled's EPILOGUE for a layer of `workgroups` (its pieces side by side included):
// the epilogue that reads ahead where they make several waves; below that (batch 1) its larger
// code costs more than it saves.
// The threshold counts the multiprocessors the device reports (none reported: always ahead).
int32_t tiledEpilogue(const Layer& x, uint64_t workgroups) {
  const std::string& forced = x.overrides.epilogue;
  const bool ahead = forced.empty() ? workgroups >= 4 * uint64_t(x.facts.multiprocessorsReported)
                                    : forced == "ahead";
  return ahead ? (x.shape.residual ? 2 : 1) : 0;
}

// convolution_tiled's specialization constants for the layer on tile `t` over `workgroups`: the
// epilogue above and its operations (the neuron's type, + 256 with a residual) fixed in the
// pipeline. Known, they take 5-20% off layers with short reductions, whose time is mostly the
// epilogue (bench/NOTES.md, 2026-11-28, session 28). Session 28 left them in the push constants
// below two waves of workgroups (batch 1), so that a network kept one pipeline per tile there;
// since then fixed ones win there too, more pipelines and all: resnet50 at batch 1 -4%, densenet121
// and mobilenet_v2 -2% (bench/NOTES.md, 2026-11-29, session 34). VKCNN_CONVOLUTION_EPILOGUE=inline
// leaves them in the push constants.
std::array<int32_t, 10> tiledConstants(const Layer& x, const MatrixTile& t, uint64_t workgroups) {
  const int32_t ops =
      int32_t(x.d.neuron.type) | (x.shape.residual ? VKCNN_EPILOGUE_OPS_RESIDUAL : 0);
  const bool fixed = x.overrides.epilogue != "inline";
  return t.specialization(tiledEpilogue(x, workgroups), fixed ? ops : -1);
}

// What the first dispatch of a pipeline in a submission costs a layer over a later one: its code
// fetched into every multiprocessor (H200; bench/NOTES.md, 2026-11-27, sessions 20 and 25). The
// cost models below add it to a candidate whose pipeline has no dispatch yet in the command
// buffer, so that a batch-1 network keeps to the pipelines it already runs where another one
// would win by less.
constexpr double kFirstDispatchNanoseconds = 8000.0;

// kFirstDispatchNanoseconds where `tile` on `shader` with the epilogue `workgroups` take has no
// dispatch yet in this command buffer (a standalone encode: every candidate alike). A pipeline
// counts as run when its tile and epilogue have, whatever its epilogue's operations (constants 8
// and 9): the charge was fitted at that granularity, and counted per operations it moved
// shufflenet_v2's batch-32 1x1 layers from 64x64 to 128x128, 3% slower (bench/NOTES.md,
// 2026-11-28, session 28).
double firstDispatch(const Layer& x, ShaderId shader, const MatrixTile& tile, uint64_t workgroups) {
  return x.run && x.run(shader, tiledConstants(x, tile, workgroups)) ? 0.0
                                                                     : kFirstDispatchNanoseconds;
}

// A dense layer's tiles of `tileRows` x `tileColumns` (output channels): every piece side by side
// brings as many (bench/NOTES.md, 2026-11-27).
uint64_t tilesOf(const Layer& x, uint64_t tileRows, uint64_t tileColumns) {
  return (x.rows + tileRows - 1) / tileRows * ((x.slices * 4 + tileColumns - 1) / tileColumns) *
         x.pieces;
}

// 32-deep chunks of a dense layer's reduction on the matrix units.
uint64_t chunksOf(const Layer& x) {
  const uint64_t k =
      uint64_t(x.d.kernelWidth) * x.d.kernelHeight * ((x.d.inputFeatureChannels + 3) / 4) * 4;
  return (k + 31) / 32;
}

// What splitting a reduction costs in the latency model below: the partial tiles written and
// summed, fitted with the tiles' nanosecondsPerChunkAlone (fit_cost_model.py --alone).
constexpr double kSplitNanoseconds = 3346.0, kSplitShareNanoseconds = 821.0;

// The latency model's choice (convolution_tiles.h, nanosecondsPerChunkAlone) for a layer alone
// with the tile and split
// with the least waves x chunks per split x a chunk's time, plus what a split costs. Always on the
// split module, a reduction whole included: the first dispatch of each pipeline in an inference
// takes 8-10 us longer (bench/NOTES.md, 2026-11-27, session 20), so these layers share one
// pipeline per tile.
GemmChoice latencyChoice(const Layer& x) {
  const uint64_t chunks = chunksOf(x);
  const MatrixTile* best = nullptr;
  uint32_t bestSplits = 1;
  double bestCost = 0;
  for (const MatrixTile& t : kMatrixTiles) {
    // The split module accumulates in float32: no float16-accumulator-only tile.
    if (!t.nanosecondsPerChunkAlone || t.float16Accumulators) continue;
    const uint64_t tiles = tilesOf(x, t.rows(), t.columns());
    // One pipeline for every split count (the split is the dispatch's z).
    const double first = firstDispatch(x, ShaderId::convolution_tiled_split, t, tiles);
    for (uint32_t splits : {1u, 2u, 4u, 8u}) {
      if (splits > 1 && chunks / splits < 2) break;
      const uint64_t waves = (tiles * splits + x.sms - 1) / x.sms;
      const double cost =
          double(waves * ((chunks + splits - 1) / splits)) * t.nanosecondsPerChunkAlone +
          (splits > 1 ? kSplitNanoseconds + kSplitShareNanoseconds * splits : 0.0) + first;
      if (!best || cost < bestCost) best = &t, bestSplits = splits, bestCost = cost;
    }
  }
  return {ShaderId::convolution_tiled_split, best, bestSplits};
}

// The cost model of convolution_tiled's tiles (convolution_tiles.h): waves of resident
// workgroups, each costing the tile's time per stage times the stages plus its time per wave, and
// the first dispatch of a pipeline not yet run.
GemmChoice costModelChoice(const Layer& x) {
  const uint64_t k =
      uint64_t(x.d.kernelWidth) * x.d.kernelHeight * ((x.d.inputFeatureChannels + 3) / 4) * 4;
  const MatrixTile* best = nullptr;
  double bestCost = 0;
  for (const MatrixTile& t : kMatrixTiles) {
    if (!t.nanosecondsPerStage || (x.shape.residual && !t.withResidual) ||
        (t.maxColumns && x.slices * 4 > t.maxColumns) || !offered(x, t))
      continue;
    const uint64_t perWave = x.sms * t.residentPerMultiprocessor;
    const uint64_t tiles = tilesOf(x, t.rows(), t.columns());
    if (tiles < uint64_t(t.denseWaves) * perWave) continue;
    const double cost = double((tiles + perWave - 1) / perWave) *
                            (double((k + t.depth() - 1) / t.depth()) * t.nanosecondsPerStage +
                             t.nanosecondsPerWave) +
                        firstDispatch(x, tiledShaderOf(x), t, tiles);
    if (!best || cost < bestCost) best = &t, bestCost = cost;
  }
  return {tiledShaderOf(x), best};
}

// Tiles (pixels x slices, ways the reduction is split, workgroups a multiprocessor holds) and
// a latency model: batch-1 layers are bound by how many rounds of 32-deep chunks each
// workgroup runs one after another, waves of workgroups times chunks per split. Smaller tiles
// must win clearly, as they reuse each load less.
ShaderId splitKChoice(const Layer& x) {
  const uint64_t chunks = chunksOf(x);
  ShaderId best = ShaderId::convolution_matrix_large;
  double bestCost = 0;
  for (const GemmKernel& o : kGemmKernels) {
    if (!o.matrixUnits) continue;
    const uint64_t tiles = gemmTiles(o.shader, x.rows, x.slices) * x.pieces;
    const uint64_t perWave = x.sms * o.perMultiprocessor;
    const uint64_t waves = (tiles + perWave - 1) / perWave;
    const double cost = double(waves * ((chunks + o.split - 1) / o.split));
    if (o.shader == best || cost < 0.75 * bestCost) best = o.shader, bestCost = cost;
  }
  return best;
}

// The large tiles of convolution_tiled where the layer has enough of them to fill the device,
// the one a cost model says is fastest: waves of resident workgroups, each costing the tile's
// time per stage times the stages plus its time per wave (convolution_tiles.h, fitted to the
// H200). Layers with too few outputs for that (late layers at batch 1) go to the split-k shaders
// of convolution_matrix.glsl, which divide the reduction inside the workgroup, by a latency model
// of their own.
GemmChoice matrixGemm(const Layer& x, const std::string& forced) {
  // A float16-accumulator-only tile never on the split module (float32 partial sums).
  for (const MatrixTile& t : kMatrixTiles)
    if (const int32_t splits = splitsNamed(forced, t);
        x.tiledAllowed && splits >= 0 && offered(x, t) && !(splits && t.float16Accumulators))
      return {splits ? ShaderId::convolution_tiled_split : tiledShaderOf(x), &t,
              uint32_t(std::max(splits, 1))};
  if (const std::optional<ShaderId> named = gemmKernelNamed(forced, true)) return {*named};
  // Long reductions over few tiles: 32 x 64 tiles with the reduction split over workgroups
  // (convolution_tiled_split), about two workgroups per multiprocessor and at least 8 chunks
  // per split, where the split-k shaders below keep a few warps per multiprocessor busy on
  // every chunk in turn (batch 1: 3x3 512->512 @14² 0.069 -> 0.032 ms). Measured on every
  // batch-1 shape (bench/NOTES.md, 2026-11-28, session 18): it wins from 16 tiles and 1024
  // tile-chunks on, loses below (fewer output tiles than that: 1x1 576->96 @14², 0.011 ->
  // 0.015 ms; the fully connected layers). Only for a layer alone: beside the other pieces of a
  // split batch, densenet121's 3x3 128->32 @7² at batch 32 took it and the network lost 9%.
  // kFirstDispatchNanoseconds where `tile` on `shader` with the epilogue `workgroups` take has
  // no dispatch yet in this command buffer (a standalone encode: every candidate alike). A
  // pipeline counts as run when its tile and epilogue have, whatever its epilogue's operations
  // (constants 8 and 9): the charge was fitted at that granularity, and counted per operations
  // it moved shufflenet_v2's batch-32 1x1 layers from 64x64 to 128x128, 3% slower
  // (bench/NOTES.md, 2026-11-28, session 28).
  const uint64_t sms = x.sms, fewTiles = tilesOf(x, 32, 64), chunks = chunksOf(x);
  const uint64_t splits32x64 =
      fewTiles ? std::min<uint64_t>({8, 2 * sms / fewTiles, chunks / 8}) : 0;
  const bool splitRule =
      x.pieces == 1 && fewTiles >= 16 && fewTiles * chunks >= 1024 && splits32x64 >= 2;
  // Measured: below about 0.6 of a 32 x 64 tile per multiprocessor the split-k shaders win.
  const bool tiledRegime = 5 * fewTiles >= 3 * sms;
  // Where those two would take a tile but the layer has fewer than two waves of 64 x 64 tiles
  // and a long reduction, every workgroup runs its chunks one after another, each waiting on
  // weights from DRAM inside a network: the latency model of convolution_tiles.h
  // (nanosecondsPerChunkAlone), over its tiles with the reduction split 1, 2, 4 or 8 ways.
  // Replayed on every batch-1 shape of five networks with the caches flushed, it takes the
  // shapes' sum from 4.25 to 3.80 ms (3x3 512->512 @28²: 64x64 0.126 -> 128x128s4 0.058 ms;
  // bench/NOTES.md, 2026-11-27, session 20).
  const bool tiled = x.tiledAllowed && forced != "legacy";
  if (tiled && x.pieces == 1 && chunks >= 8 && tilesOf(x, 64, 64) < 2 * sms &&
      (tiledRegime || splitRule))
    return latencyChoice(x);
  if (tiled && tiledRegime) return costModelChoice(x);
  if (tiled && splitRule)
    for (const MatrixTile& t : kMatrixTiles)
      if (std::strcmp(t.name, "32x64") == 0)
        return {ShaderId::convolution_tiled_split, &t, uint32_t(splits32x64)};
  const ShaderId best = splitKChoice(x);
  // Where the reduction is too short for the 8-way split of matrix_small to win, the split-k
  // shaders lose to the tiles: forced on every such shape of nine networks, 64x16 beat
  // matrix_large and matrix_medium on all but one (by 0.03 us), 0.662 -> 0.504 ms summed over
  // the batch-1 uses, 0.737 -> 0.575 at batch 32 (1x1 96->576 @14² b1 10.4 -> 8.2 us), and the
  // cost model, offered them, takes 64x16 on every one. Inside networks at batch 1:
  // efficientnet_b0, mobilenet_v2, regnet_y_800mf and resnet18 5-8% faster (bench/NOTES.md,
  // 2026-11-28, session 31). matrix_small's layers stay: replaced the same way where the
  // per-shape times said so, networks did not gain.
  if (best != ShaderId::convolution_matrix_small && tiled)
    if (const GemmChoice choice = costModelChoice(x); choice.tile) return choice;
  return {best};
}

// Fitted on the H100's float32 batch-32 shapes (bench/NOTES.md, 2026-11-25): the two-stage
// 128 x 32 tile (convolution_gemm_staged.glsl) from half a tile per multiprocessor where its
// columns are whole (narrower outputs waste half of it), then 64 x 16 from 1.5 such tiles per
// multiprocessor, else 16 x 8 with the reduction split. Session 21 (bench/NOTES.md, 2026-11-27)
// put the two-stage 128 x 16 tile between the first two, from half a tile per multiprocessor:
// measured on every float32 batch-32 shape of six networks it beat 64 x 16 and 16 x 8 on most
// shapes they took, and the rule's sum over them went 58.1 -> 53.9 ms (cuDNN 56.5, the best
// tile per shape 52.6). The tiles of every piece of a split batch count, as they run side by
// side. The 128 x 32 tile runs as 16 warps of 8 x 1 outputs (gemm_128x32w16: the driver must
// fit 128 registers, 117), 3-14% faster than 8 warps of 8 x 2 (gemm_128x32w8, 189 registers)
// on every shape measured (bench/NOTES.md, session 21, run 8). "legacy": the choice before the
// 128 x 32 tile (64 x 16 from 512 tiles on).
GemmChoice portableGemm(const Layer& x, const std::string& forced) {
  if (const std::optional<ShaderId> named = gemmKernelNamed(forced, false)) return {*named};
  const uint64_t sms = x.sms, rows = x.rows, slices = x.slices, pieces = x.pieces;
  const uint64_t largeTiles = gemmTiles(ShaderId::convolution_gemm_large, rows, slices);
  if (forced == "legacy")
    return {largeTiles >= 512 ? ShaderId::convolution_gemm_large
                              : ShaderId::convolution_gemm_small};
  if (slices >= gemmKernelOf(ShaderId::convolution_gemm_128x32w16).slices &&
      2 * gemmTiles(ShaderId::convolution_gemm_128x32w16, rows, slices) * pieces >= sms)
    return {ShaderId::convolution_gemm_128x32w16};
  if (2 * gemmTiles(ShaderId::convolution_gemm_128x16w8, rows, slices) * pieces >= sms)
    return {ShaderId::convolution_gemm_128x16w8};
  return {2 * largeTiles * pieces >= 3 * sms ? ShaderId::convolution_gemm_large
                                             : ShaderId::convolution_gemm_small};
}

GemmChoice gemmShader(const Layer& x, const std::string& forced) {
  return x.matrixUnits ? matrixGemm(x, forced) : portableGemm(x, forced);
}

// A grouped layer's columns: a group's output channels padded to whole 16-column tiles.
uint64_t groupColumnsOf(const ConvolutionDescriptor& d) {
  return (d.outputFeatureChannels / d.groups + VKCNN_MATRIX_GROUP_COLUMN_ALIGN - 1) /
         VKCNN_MATRIX_GROUP_COLUMN_ALIGN * VKCNN_MATRIX_GROUP_COLUMN_ALIGN;
}

// Grouped convolutions on the matrix units (groupedOnMatrixUnits): a tile of convolution_tiled
// whose width divides a group's padded width, the one the cost model of the dense tiles says is
// fastest over all groups' tiles; VKCNN_CONVOLUTION_TILE forces a tile that fits, and "legacy"
// the direct shader (nullptr).
const MatrixTile* groupedTile(const Layer& x, const std::string& forced) {
  const ConvolutionDescriptor& d = x.d;
  const uint64_t columns = groupColumnsOf(d);
  if (forced == "legacy") return nullptr;
  for (const MatrixTile& t : kMatrixTiles)
    if (forced == t.name && columns % t.columns() == 0 && offered(x, t)) return &t;
  const uint64_t k = uint64_t(d.kernelWidth) * d.kernelHeight * (d.inputFeatureChannels / d.groups);
  const MatrixTile* best = nullptr;
  double bestCost = 0;
  for (const MatrixTile& t : kMatrixTiles) {
    if (!t.nanosecondsPerStage || t.denseWaves || columns % t.columns() || !offered(x, t)) continue;
    const uint64_t tiles =
        (x.rows + t.rows() - 1) / t.rows() * (columns / t.columns()) * d.groups * x.pieces;
    const uint64_t perWave = x.sms * t.residentPerMultiprocessor;
    const double cost =
        double((tiles + perWave - 1) / perWave) *
        (double((k + t.depth() - 1) / t.depth()) * t.nanosecondsPerStage + t.nanosecondsPerWave);
    if (!best || cost < bestCost) best = &t, bestCost = cost;
  }
  return best;
}

// The shape as the tuning file keys it: everything the choice depends on. Not for a batch's
// pieces side by side: the tuner times a piece alone, which is not how they run, and picks what
// wins alone (bench/NOTES.md, 2026-11-27); the cost model counts them.
std::string tuningKeyOf(const Layer& x) {
  if (!(x.groupedTiled || x.gemm) || x.pieces != 1) return "";
  const ConvolutionDescriptor& d = x.d;
  char key[256];
  // A source activation is a key of its own: other pipelines, which Winograd cannot run.
  std::snprintf(key, sizeof key, "%ux%u/%ux%u d%ux%u g%u %u->%u to %ux%ux%u %s%s%s%s%s",
                d.kernelWidth, d.kernelHeight, d.strideInPixelsX, d.strideInPixelsY,
                d.dilationRateX, d.dilationRateY, d.groups, d.inputFeatureChannels,
                d.outputFeatureChannels, x.shape.width, x.shape.height, x.shape.images,
                x.shape.variant == ShaderVariant::f16 ? "f16" : "f32",
                x.matrixUnits ? " matrix" : "", x.tiledAllowed ? "" : " unaligned",
                d.sourceActivation ? " activated" : "", x.float16Accumulators ? " fp16acc" : "");
  return key;
}

// The source activation's specialization constant (convolution_bindings.glsl, SOURCE_ACTIVATION:
// 0 none, 1 the affine, 2 the affine and a ReLU), constant 10 of every convolution shader, added
// to `specialization` (the constants before it zero where the shader has none). Without one the
// pipelines stay those made without it.
void addSourceActivation(std::vector<int32_t>& specialization, const ConvolutionDescriptor& d) {
  if (!d.sourceActivation) return;
  specialization.resize(10, 0);
  specialization.push_back(d.sourceActivation->neuron == NeuronType::relu ? 2 : 1);
}

// The shader, tile and splits of a layer Winograd does not take, named.
GemmChoice shaderChoice(const Layer& x, const std::string& forced, std::string& name) {
  GemmChoice choice{x.shape.shader};
  if (x.groupedTiled) choice.tile = groupedTile(x, forced);
  if (choice.tile) {
    choice.shader = tiledShaderOf(x);
    name = std::string("grouped ") + choice.tile->name;
  } else if (x.gemm) {
    choice = gemmShader(x, forced);
    if (!x.matrixUnits) choice.shader = portableTileWithin(x.facts, choice.shader, x.shape.variant);
    // No portable tile fits the device's shared memory: the direct shader.
    name = choice.shader != ShaderId::convolution ? nameOf(choice) : "direct";
  } else if (x.shape.shader == ShaderId::convolution) {
    name = x.d.groups > 1 ? "grouped direct" : "direct";
  }
  return choice;
}

}  // namespace

WeightCopies weightCopiesOf(const ConvolutionDescriptor& d, const DeviceFacts& facts,
                            const ChoiceOverrides& overrides, bool winograd, bool fullyConnected) {
  const uint32_t perGroup = d.inputFeatureChannels / d.groups;
  const bool matrixUnits = facts.matrixUnits != MatrixExtension::none;
  const bool float16Copies = d.destinationFormat != ChannelFormat::float32;
  // A large fully connected layer's matrix-unit copy would serve only destinations starting inside
  // an array layer, which the float32 weights serve too (vgg16's fc6: 205 MB saved).
  const bool batchedAlways =
      fullyConnected && d.groups == 1 && d.weightCount() >= kLargeFullyConnected;
  WeightCopies c;
  c.matrix =
      float16Copies && perGroup > 1 && matrixUnits && groupedOnMatrixUnits(d) && !batchedAlways;
  c.half = float16Copies && fullyConnected && perGroup > 1;
  // Winograd's: F(4x4,3x3)'s (4x the 3x3 ones in float32) where the selector or the tuner may take
  // it (float32, or any format on devices without matrix units), F(2x2,3x3)'s (16/9 of them in
  // float16) where float16 may run on the matrix units, with the channels each needs, unless
  // ContextOptions::winograd is off; or where VKCNN_CONVOLUTION_TILE=winograd forces it when the
  // kernel is made.
  if (winogradApplies(d)) {
    const bool forced = overrides.tile == "winograd";
    c.winograd = forced || (winograd && (!float16Copies || !matrixUnits) && winogradChannels(d));
    c.winogradMatrix =
        matrixUnits && (forced || (winograd && float16Copies && winogradMatrixChannels(d)));
  }
  return c;
}

std::string tuningKeyOf(const ConvolutionShape& shape, const DeviceFacts& facts) {
  return tuningKeyOf(layerOf(shape, facts, {}, {}));
}

std::vector<std::string> candidatesOf(const ConvolutionShape& shape, const DeviceFacts& facts,
                                      const ChoiceOverrides& overrides, const PipelineRun& run) {
  // The overrides' epilogue counts (the first dispatches' pipelines), their tile does not.
  const Layer x = layerOf(shape, facts, overrides, run);
  const ConvolutionDescriptor& d = x.d;
  std::vector<std::string> list;
  if (x.winogradPossible && winogradChosen(d, pixelsOf(shape), blocksOf(shape), x.scheme))
    list.push_back("winograd");
  if (x.groupedTiled) {
    const MatrixTile* model = groupedTile(x, "");
    list.push_back(model ? model->name : "legacy");
    const uint64_t columns = groupColumnsOf(d);
    for (const MatrixTile& t : kMatrixTiles)
      if (columns % t.columns() == 0 && offered(x, t)) list.push_back(t.name);
    list.push_back("legacy");
  } else if (x.matrixUnits) {
    list.push_back(nameOf(matrixGemm(x, "")));
    if (x.tiledAllowed)
      for (const MatrixTile& t : kMatrixTiles)
        if (offered(x, t)) list.push_back(t.name);
    for (const GemmKernel& k : kGemmKernels)
      if (k.matrixUnits) list.push_back(k.name);
    if (x.winogradPossible) list.push_back("winograd");
  } else {
    list.push_back(nameOf(portableGemm(x, "")));
    // The 128 x 32 tile only where a column of it is at least half outputs.
    if (shape.destinationChannels >= 64) list.push_back("gemm_128x32w16");
    list.push_back("gemm_128x16w8");
    list.push_back("gemm_large");
    list.push_back("gemm_small");
    if (x.winogradPossible) list.push_back("winograd");
  }
  std::vector<std::string> unique;
  for (const std::string& c : list)
    if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(c);
  return unique;
}

ConvolutionConfiguration chooseConvolution(const ConvolutionShape& shape, const DeviceFacts& facts,
                                           const ChoiceOverrides& overrides,
                                           const std::string& tuned, const PipelineRun& run) {
  const Layer x = layerOf(shape, facts, overrides, run);
  ConvolutionConfiguration c;
  c.shader = shape.shader;
  c.tuningKey = tuningKeyOf(x);
  // VKCNN_CONVOLUTION_TILE first, then the shape's tuning entry (or trial candidate), then the
  // models (convolution_tuning.h).
  const std::string& forced =
      overrides.tile.empty() && !c.tuningKey.empty() ? tuned : overrides.tile;
  // Not for a batch's pieces encoded one by one side by side: each piece's three steps would
  // need barriers of their own (densenet121 in float32 at batch 32, 4 pieces: 14.9 -> 19.5 ms).
  // Convolution::encodeBatch runs such pieces as one (winogradForPieces).
  if (x.winogradPossible &&
      winogradTaken(forced, x.pieces == 1, x.d, pixelsOf(shape), blocksOf(shape), x.scheme)) {
    c.winograd = true;
    c.matrixUnits = x.matrixUnits;
    c.name = "winograd";
    return c;
  }
  const GemmChoice choice = shaderChoice(x, forced, c.name);
  c.shader = choice.shader;
  c.tile = choice.tile;
  c.splits = choice.splits;
  c.kernel = choice.tile ? nullptr : findGemmKernel(choice.shader);
  c.matrixUnits = choice.tile || x.matrixUnits;
  // The profile and the benchmark read the configuration off the dispatch's label.
  if (!c.name.empty())
    c.label = " (" + c.name +
              (c.shader == ShaderId::convolution_tiled_fp16acc ? ", float16 accumulators)" : ")");
  if (shape.shader == ShaderId::depthwise_convolution) c.name = "depthwise";
  if (const MatrixTile* t = choice.tile) {
    // Grouped: a column of tiles per group's outputs, the groups along z. The destinations start
    // at a layer: the window's channels fill (channels + 3) / 4 layers.
    const uint32_t columns = x.d.groups > 1 ? x.d.outputFeatureChannels / x.d.groups
                                            : (shape.destinationChannels + 3) / 4 * 4;
    c.rowTiles = uint32_t((x.rows + t->rows() - 1) / t->rows());
    c.columnTiles = (columns + t->columns() - 1) / t->columns();
    const uint64_t workgroups = uint64_t(c.rowTiles) * c.columnTiles * x.d.groups * x.pieces;
    const auto constants = tiledConstants(x, *t, workgroups);
    c.specialization.assign(constants.begin(), constants.end());
  }
  addSourceActivation(c.specialization, x.d);
  return c;
}

bool winogradForPieces(const ConvolutionDescriptor& d, const ChoiceOverrides& overrides,
                       uint64_t pixels, uint64_t blocks, WinogradScheme scheme) {
  return winogradTaken(overrides.tile, true, d, pixels, blocks, scheme);
}

}  // namespace vkcnn::detail
