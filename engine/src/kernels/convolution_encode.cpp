// Recording a convolution (kernels/convolution_state.h): the configuration the choice
// (kernels/convolution_choice.h) or a forced name or tuning entry gives, bound and dispatched;
// and a batch's pieces side by side, as one Winograd encode, one convolution_tiled_pieces
// dispatch, or one encode each.
#include <algorithm>
#include <cstring>

#include "convolution_interface.h"
#include "convolution_tiles.h"
#include "kernels/convolution_choice.h"
#include "kernels/convolution_state.h"
#include "kernels/convolution_tuning.h"
#include "kernels/weights.h"
#include "kernels/kernel_encoding.h"
#include "kernels/neuron_params.h"
#include "kernels/tensor_encoding.h"
#include "kernels/winograd.h"
#include "memory/image_storage.h"
#include "vulkan/context_impl.h"
#include "vulkan/pipelines.h"

namespace vkcnn::detail {

namespace {

// The destination window of `e` starts at an array layer (4 channels).
bool destinationAtLayer(const KernelEncoding& e) {
  return (e.destination.storageChannelOffset() + e.destinationChannelOffset) % 4 == 0;
}

// The copies of the weights `s` keeps, as the choice sees them.
WeightCopies copiesOf(const ConvolutionState& s) {
  return {s.matrixWeights != nullptr, s.halfWeights != nullptr, s.winogradWeights != nullptr,
          s.winogradMatrixWeights != nullptr};
}

// What the choice reads of an encode of `s` on `shader`.
ConvolutionShape shapeOf(const KernelEncoding& e, const ConvolutionState& s, ShaderId shader) {
  ConvolutionShape shape;
  shape.descriptor = &s.descriptor;
  shape.shader = shader;
  shape.variant = variantFor(e.destination);
  shape.width = e.clipWidth;
  shape.height = e.clipHeight;
  shape.images = e.imageCount;
  shape.imagesSideBySide = e.imagesSideBySide;
  shape.destinationChannels = e.destinationChannels;
  shape.residual = e.residual != nullptr;
  shape.sourceAtLayer = (e.source.storageChannelOffset() + e.sourceChannelOffset) % 4 == 0;
  shape.destinationAtLayer = destinationAtLayer(e);
  shape.weights = copiesOf(s);
  return shape;
}

// Which pipelines `e`'s command buffer has run (the first dispatch's charge of the models).
PipelineRun pipelinesRunIn(const KernelEncoding& e) {
  return [&cb = e.commandBuffer](ShaderId shader, const std::array<int32_t, 10>& constants) {
    return cb.dispatched(uint32_t(shader), uint32_t(ShaderVariant::f16), constants, 8);
  };
}

// What every convolution shader reads alike (convolution_bindings.glsl), in three parts.
// The images: the source, the destination and the residual at element `element` of their bindings
// (convolution_tiled_pieces binds a piece at each); fills push.source, push.destination and the
// residual's fields of push.neuron, and returns the bound destination slices per image.
uint32_t bindConvolutionImages(DispatchRecorder& r, shader::ConvolutionPush& push,
                               const KernelEncoding& e, uint32_t element) {
  push.source = r.bindSource(0, e.source, e.sourceFirstImage, e.imageCount, e.sourceChannelOffset,
                             e.sourceChannels, element);
  push.destination = r.bindDestination(1, e.destination, e.destinationFirstImage, e.imageCount,
                                       e.destinationChannelOffset, e.destinationChannels, element);
  push.neuron.residual = e.residual ? 1 : 0;
  if (e.residual) {
    const shader::ImageView residual = r.bindSource(
        5, *e.residual, e.destinationFirstImage, e.imageCount, 0, e.destinationChannels, element);
    push.neuron.residualLayersPerImage = residual.layersPerImage;
    push.neuron.residualChannelShift = residual.channelShift;
  } else {
    // Unread (push.neuron.residual is 0), but every binding needs a descriptor.
    r.bindSource(5, e.source, e.sourceFirstImage, e.imageCount, e.sourceChannelOffset,
                 e.sourceChannels, element);
  }
  return touchedSlices(uint32_t(push.destination.channelShift), e.destinationChannels);
}

// The weights, bias and slopes, and the rest of the push constants (after the images and
// push.geometry).
void bindConvolutionParameters(DispatchRecorder& r, shader::ConvolutionPush& push,
                               const ConvolutionState& s,
                               const std::shared_ptr<DeviceBuffer>& weights, int32_t originX,
                               int32_t originY) {
  const ConvolutionDescriptor& d = s.descriptor;
  r.bindBuffer(2, weights);
  r.bindBuffer(3, s.bias);
  r.bindBuffer(4, s.slopes);
  push.geometry.offsetX = originX;
  push.geometry.offsetY = originY;
  push.convolution.kernelWidth = int32_t(d.kernelWidth);
  push.convolution.kernelHeight = int32_t(d.kernelHeight);
  push.convolution.strideX = int32_t(d.strideInPixelsX);
  push.convolution.strideY = int32_t(d.strideInPixelsY);
  push.convolution.dilationX = int32_t(d.dilationRateX);
  push.convolution.dilationY = int32_t(d.dilationRateY);
  push.convolution.inputChannelsPerGroup = int32_t(d.inputFeatureChannels / d.groups);
  push.convolution.outputChannelsPerGroup = int32_t(d.outputFeatureChannels / d.groups);
}

}  // namespace

// Both for one encode; returns the bound destination slices per image.
uint32_t bindConvolution(DispatchRecorder& r, shader::ConvolutionPush& push, KernelEncoding& e,
                         const ConvolutionState& s, const std::shared_ptr<DeviceBuffer>& weights,
                         int32_t originX, int32_t originY) {
  push.neuron = neuronParams(s.descriptor.neuron);
  const uint32_t slices = bindConvolutionImages(r, push, e, 0);
  push.geometry = e.geometry(slices);
  bindConvolutionParameters(r, push, s, weights, originX, originY);
  return slices;
}

namespace {

// The scheme a dense convolution's Winograd runs as: F(2x2,3x3) on the matrix units where the
// matrix path runs the layer (float16 destinations), else F(4x4,3x3) on the portable GEMM.
WinogradWeights winogradWeightsOf(const ConvolutionState& s, bool matrixUnits) {
  if (matrixUnits)
    return {WinogradScheme::matrixUnits, s.winogradMatrixWeights, s.bias, s.slopes,
            neuronParams(s.descriptor.neuron)};
  return {WinogradScheme::portable, s.winogradWeights, s.bias, s.slopes,
          neuronParams(s.descriptor.neuron)};
}

// The configuration of one encode: VKCNN_CONVOLUTION_TILE (or a trial's candidate) first, then
// the shape's tuning entry, timed here first where ContextOptions::tuneConvolutions asks, then
// the models. `pick` says which trial candidate it was.
ConvolutionConfiguration configurationOf(const KernelEncoding& e, const ConvolutionState& s,
                                         ShaderId shader, int64_t leftEdge, int64_t topEdge,
                                         const std::string* configurationOverride,
                                         TuningPick& pick) {
  ContextImpl& context = *e.commandBuffer.context;
  const ConvolutionShape shape = shapeOf(e, s, shader);
  ChoiceOverrides overrides = context.overrides().choice;
  if (configurationOverride) overrides.tile = *configurationOverride;
  const PipelineRun run = pipelinesRunIn(e);
  const std::string key = tuningKeyOf(shape, context.facts());
  if (overrides.tile.empty() && !key.empty()) {
    auto candidates = [&] { return candidatesOf(shape, context.facts(), overrides, run); };
    if (tuneAtEncode(context, key)) tuneShape(e, s, shader, leftEdge, topEdge, key, candidates());
    pick = tunedConfiguration(context, key, candidates);
  }
  return chooseConvolution(shape, context.facts(), overrides, pick.configuration, run);
}

// convolution_tiled_split's partial tiles and a counter per tile (zero, and zero again after
// each run) in the command buffer's workspace (convolution_tiled.glsl). A reduction whole (one
// share) touches neither: a few bytes are bound.
void bindSplitWorkspace(DispatchRecorder& r, KernelEncoding& e, const ConvolutionConfiguration& c) {
  const uint64_t tiles = uint64_t(c.rowTiles) * c.columnTiles;
  const bool whole = c.splits == 1;
  const VkDeviceSize bytes =
      whole ? 16 : tiles * c.splits * c.tile->rows() * c.tile->columns() * sizeof(float);
  Workspace::Range partials = e.commandBuffer.workspace.take(e.commandBuffer, bytes);
  r.bindStorageBuffer(6, partials.buffer, partials.offset, bytes, true, std::move(partials.owner));
  const VkDeviceSize counterBytes = whole ? 16 : tiles * 4;
  Workspace::Range counters =
      whole ? e.commandBuffer.workspace.take(e.commandBuffer, counterBytes)
            : e.commandBuffer.workspace.takeZeroed(e.commandBuffer, counterBytes);
  r.bindStorageBuffer(7, counters.buffer, counters.offset, counterBytes, true,
                      std::move(counters.owner));
}

// Records configuration `c` of one encode (not Winograd).
void recordConvolution(KernelEncoding& e, const ConvolutionState& s,
                       const ConvolutionConfiguration& c, const std::string& what, int32_t originX,
                       int32_t originY) {
  const ConvolutionDescriptor& d = s.descriptor;
  DispatchRecorder r(e.commandBuffer, c.shader, variantFor(e.destination), what, c.specialization);
  shader::ConvolutionPush push{};
  const uint32_t slices =
      bindConvolution(r, push, e, s, c.matrixUnits ? s.matrixWeights : s.weights, originX, originY);
  if (c.tile) {
    const bool split = c.shader == ShaderId::convolution_tiled_split;
    if (split) bindSplitWorkspace(r, e, c);
    r.dispatchGroups(&push, sizeof push, c.rowTiles, c.columnTiles, split ? c.splits : d.groups);
  } else if (const GemmKernel* kernel = c.kernel) {
    const uint64_t rows = uint64_t(e.clipWidth) * e.clipHeight * e.imageCount;
    r.dispatchGroups(&push, sizeof push, uint32_t((rows + kernel->pixels - 1) / kernel->pixels),
                     (slices + kernel->slices - 1) / kernel->slices, 1);
  } else {
    r.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
  }
}

}  // namespace

void encodeConvolution(KernelEncoding& e, const ConvolutionState& s, ShaderId shader,
                       int64_t leftEdge, int64_t topEdge, std::string* configuration,
                       std::string* tuningKeyOut, const std::string* configurationOverride) {
  const ConvolutionDescriptor& d = s.descriptor;
  // Before anything is bound: a window origin out of the shader's range is an error.
  const int32_t originX = shaderCoordinate(e.offsetX - leftEdge, "window origin x", e);
  const int32_t originY = shaderCoordinate(e.offsetY - topEdge, "window origin y", e);
  TuningPick pick;
  const ConvolutionConfiguration c =
      configurationOf(e, s, shader, leftEdge, topEdge, configurationOverride, pick);
  // The profile and the benchmark read the configuration off the dispatch's label.
  const std::string what = e.what() + c.label;
  if (tuningKeyOut) *tuningKeyOut = c.tuningKey;
  if (configuration) *configuration = c.name;
  if (pick.candidate >= 0) noteTrial(*e.commandBuffer.context, what, c.tuningKey, pick.candidate);
  if (c.winograd)
    encodeWinograd({&e, 1}, d, leftEdge, topEdge, winogradWeightsOf(s, c.matrixUnits), what);
  else
    recordConvolution(e, s, c, what, originX, originY);
}

namespace {

// The test and benchmark hook VKCNN_CONVOLUTION_PIECES: "separate" encodes a batch's pieces one by
// one, "one" in one dispatch wherever encodeTiledPieces can; unset or anything else, in one
// dispatch where that saves a wave (encodeTiledPieces).
const std::string& forcedPieces(const ContextImpl& context) {
  return context.overrides().choice.pieces;
}

// Whether `a` and `b` are laid out alike for a shader (the same layers per image, channels and
// first channel in their storage): one set of push constants addresses both.
bool sameLayout(const Image& a, const Image& b) {
  return a.storage()->slicesPerImage() == b.storage()->slicesPerImage() &&
         a.storage()->featureChannels == b.storage()->featureChannels &&
         a.storageChannelOffset() == b.storageChannelOffset() && a.width() == b.width() &&
         a.height() == b.height();
}

// Whether the pieces are alike but for their images (all but the last hold as many), and their
// windows start at layers (convolution_tiled reads a source texel as one fetch).
bool piecesAlike(std::span<KernelEncoding> pieces) {
  const KernelEncoding& first = pieces.front();
  for (size_t k = 0; k < pieces.size(); ++k) {
    const KernelEncoding& e = pieces[k];
    const bool alike =
        (k + 1 == pieces.size() ? e.imageCount <= first.imageCount
                                : e.imageCount == first.imageCount) &&
        e.clipX == first.clipX && e.clipY == first.clipY && e.clipWidth == first.clipWidth &&
        e.clipHeight == first.clipHeight && e.offsetX == first.offsetX &&
        e.offsetY == first.offsetY && e.sourceChannelOffset == first.sourceChannelOffset &&
        e.sourceChannels == first.sourceChannels &&
        e.destinationChannelOffset == first.destinationChannelOffset &&
        e.destinationChannels == first.destinationChannels && sameLayout(e.source, first.source) &&
        sameLayout(e.destination, first.destination) &&
        (e.residual != nullptr) == (first.residual != nullptr) &&
        (!e.residual || sameLayout(*e.residual, *first.residual));
    if (!alike) return false;
  }
  return (first.source.storageChannelOffset() + first.sourceChannelOffset) % 4 == 0 &&
         destinationAtLayer(first);
}

// Up to VKCNN_MAX_PIECES pieces of one batch as one dispatch of convolution_tiled_pieces, rows
// running over every piece's images (convolution_tiled_pieces.comp). Only where the device
// indexes image arrays per row, the pieces differ in nothing but their images (geometry, windows,
// layouts; all but the last hold as many images), and what the selector picks for the whole
// batch as one layer is a convolution_tiled tile (no split reduction, no other shader) that needs
// fewer waves of workgroups in one dispatch than over the pieces side by side, each with a partial
// last row tile. Only there: the per-row image index costs the one dispatch 3-8% (bench/NOTES.md,
// 2026-11-28, session 27: 1x1 256->1024 @14² on 4 pieces of 8 images, 4 waves of 128x128 tiles
// side by side and 3 in one dispatch, 74 -> 63 us; 1x1 128->512 @28² on 2 pieces of 16, 784
// tiles either way, 81 -> 84). Returns false, having recorded nothing, otherwise.
bool encodeTiledPieces(std::span<KernelEncoding> pieces, const ConvolutionState& s,
                       int64_t leftEdge, int64_t topEdge, uint32_t imagesSideBySide,
                       std::string& configuration) {
  const ConvolutionDescriptor& d = s.descriptor;
  const KernelEncoding& first = pieces.front();
  const ContextImpl& context = *first.commandBuffer.context;
  const DeviceFacts& facts = context.facts();
  const std::string& forced = forcedPieces(context);
  if (forced == "separate" || pieces.size() < 2 || pieces.size() > VKCNN_MAX_PIECES ||
      !facts.imageArrayNonUniformIndexing || !facts.warpsOf32() ||
      s.shader != ShaderId::convolution || !s.matrixWeights ||
      variantFor(first.destination) != ShaderVariant::f16 || !piecesAlike(pieces))
    return false;
  uint32_t images = 0;
  for (const KernelEncoding& e : pieces) images += e.imageCount;
  // The whole batch as one layer, Winograd aside (encodeConvolutionPieces asked already) and no
  // tuning entry (the tuner times pieces alone).
  ConvolutionShape whole = shapeOf(first, s, ShaderId::convolution);
  whole.images = images;
  whole.imagesSideBySide = std::max(imagesSideBySide, images);
  whole.weights.winograd = whole.weights.winogradMatrix = false;
  ConvolutionConfiguration c =
      chooseConvolution(whole, facts, context.overrides().choice, "", pipelinesRunIn(first));
  const bool float16Accumulators = c.shader == ShaderId::convolution_tiled_fp16acc;
  if (!c.tile || (c.shader != ShaderId::convolution_tiled && !float16Accumulators)) return false;
  // Its arrays of images take more storage images than a mobile-class device's 4.
  const ShaderId piecesShader = float16Accumulators ? ShaderId::convolution_tiled_pieces_fp16acc
                                                    : ShaderId::convolution_tiled_pieces;
  if (!fitsDevice(facts, shaderModule(piecesShader, ShaderVariant::f16))) return false;

  const int32_t originX = shaderCoordinate(first.offsetX - leftEdge, "window origin x", first);
  const int32_t originY = shaderCoordinate(first.offsetY - topEdge, "window origin y", first);
  const MatrixTile& t = *c.tile;
  if (forced != "one") {
    const uint64_t besides = piecesSideBySide(whole);  // groups of pieces side by side
    const uint64_t workgroups = uint64_t(c.rowTiles) * c.columnTiles * d.groups * besides;
    uint64_t pieceRowTiles = 0;
    for (const KernelEncoding& e : pieces)
      pieceRowTiles +=
          (uint64_t(e.clipWidth) * e.clipHeight * e.imageCount + t.rows() - 1) / t.rows();
    const uint64_t perWave = uint64_t(facts.multiprocessors()) * t.residentPerMultiprocessor;
    const uint64_t separateWorkgroups = pieceRowTiles * c.columnTiles * d.groups * besides;
    if ((workgroups + perWave - 1) / perWave >= (separateWorkgroups + perWave - 1) / perWave)
      return false;
  }
  c.specialization[8] = int32_t(first.imageCount);  // IMAGES_PER_PIECE
  configuration = std::string(d.groups > 1 ? "grouped " : "") + t.name + ", " +
                  std::to_string(pieces.size()) + " pieces";
  if (float16Accumulators) configuration += ", float16 accumulators";
  DispatchRecorder r(first.commandBuffer, piecesShader, ShaderVariant::f16,
                     first.what() + " (" + configuration + ")", c.specialization);
  shader::ConvolutionPush push{};
  push.neuron = neuronParams(d.neuron);
  // Every element is bound: past the last piece, the last piece again (never read).
  uint32_t slices = 0;
  for (uint32_t p = 0; p < VKCNN_MAX_PIECES; ++p)
    slices = bindConvolutionImages(r, push, pieces[std::min<size_t>(p, pieces.size() - 1)], p);
  KernelEncoding all = first;
  all.imageCount = images;
  all.imagesSideBySide = whole.imagesSideBySide;
  push.geometry = all.geometry(slices);
  bindConvolutionParameters(r, push, s, s.matrixWeights, originX, originY);
  r.dispatchGroups(&push, sizeof push, c.rowTiles, c.columnTiles, d.groups);
  return true;
}

}  // namespace

// The pieces of one batch (Convolution::encodeBatch), side by side: as one Winograd encode where
// each could take it and VKCNN_CONVOLUTION_TILE forces it or its scheme's rule takes the layer
// (its buffers have no layer limit, so the GEMMs run once over every piece's blocks), else each
// piece on its own, its configuration chosen for all of them sharing the device.
void encodeConvolutionPieces(std::span<KernelEncoding> pieces, const ConvolutionState& s,
                             int64_t leftEdge, int64_t topEdge, std::string& configuration,
                             std::string& tuningKey) {
  // One pair alone is an encode (its tuning entry applies).
  if (pieces.size() == 1)
    return encodeConvolution(pieces.front(), s, s.shader, leftEdge, topEdge, &configuration,
                             &tuningKey);
  const ConvolutionDescriptor& d = s.descriptor;
  const ContextImpl& context = *pieces.front().commandBuffer.context;
  const bool matrixUnits =
      variantFor(pieces.front().destination) == ShaderVariant::f16 && s.matrixWeights;
  const WinogradWeights winograd = winogradWeightsOf(s, matrixUnits);
  bool fits = winograd.weights && s.shader == ShaderId::convolution;
  uint32_t images = 0;
  uint64_t pixels = 0, blocks = 0;
  for (const KernelEncoding& e : pieces) {
    const ConvolutionShape shape = shapeOf(e, s, s.shader);
    fits = fits && winogradFits(d, e.clipWidth, e.clipHeight, shape.destinationAtLayer,
                                context.facts(), winograd.scheme);
    images += e.imageCount;
    pixels += pixelsOf(shape);
    blocks += blocksOf(shape);
  }
  if (fits && winogradForPieces(d, context.overrides().choice, pixels, blocks, winograd.scheme)) {
    encodeWinograd(pieces, d, leftEdge, topEdge, winograd, pieces.front().what());
    configuration = "winograd";
    tuningKey.clear();
    return;
  }
  // In groups of at most VKCNN_MAX_PIECES, each one dispatch where it can be.
  for (size_t at = 0; at < pieces.size(); at += VKCNN_MAX_PIECES) {
    const std::span<KernelEncoding> group =
        pieces.subspan(at, std::min<size_t>(VKCNN_MAX_PIECES, pieces.size() - at));
    if (encodeTiledPieces(group, s, leftEdge, topEdge, images, configuration)) {
      tuningKey.clear();
      continue;
    }
    for (KernelEncoding& e : group) {
      e.imagesSideBySide = std::max(e.imagesSideBySide, images);
      encodeConvolution(e, s, s.shader, leftEdge, topEdge, &configuration, &tuningKey);
    }
  }
}

}  // namespace vkcnn::detail
