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
#include "kernels/kernel_encoding.h"
#include "kernels/neuron_params.h"
#include "kernels/tensor_encoding.h"
#include "kernels/winograd.h"
#include "memory/image_storage.h"
#include "vulkan/context_impl.h"
#include "vulkan/pipelines.h"

namespace vkcnn::detail {

// The source activation's specialization constant (convolution_bindings.glsl, SOURCE_ACTIVATION:
// 0 none, 1 the affine, 2 the affine and a ReLU), constant 10 of every convolution shader, added
// to `specialization` (the constants before it zero where the shader has none). Without one the
// pipelines stay those made without it.
void addSourceActivation(std::vector<int32_t>& specialization, const ConvolutionDescriptor& d) {
  if (!d.sourceActivation) return;
  specialization.resize(10, 0);
  specialization.push_back(d.sourceActivation->neuron == NeuronType::relu ? 2 : 1);
}

// The tile of a GEMM shader of kGemmKernels.
const GemmKernel& tileOf(ShaderId shader) {
  if (const GemmKernel* k = gemmKernelOf(shader)) return *k;
  throw Error(ErrorCode::vulkan, "internal: shader " + std::to_string(uint32_t(shader)) +
                                     " is not a GEMM convolution");
}

// convolution_tiled's workgroups for `e` on tile `t`: row tiles, column tiles (grouped: a column
// of tiles per group's outputs), the groups along z. Its destinations start at a layer: the
// window's channels fill (channels + 3) / 4 layers.
struct TileGrid {
  uint32_t rowTiles, columnTiles;
};
TileGrid tileGridOf(const KernelEncoding& e, const ConvolutionDescriptor& d, const MatrixTile& t) {
  const uint64_t rows = uint64_t(e.clipWidth) * e.clipHeight * e.imageCount;
  const uint32_t columns =
      d.groups > 1 ? d.outputFeatureChannels / d.groups : (e.destinationChannels + 3) / 4 * 4;
  return {uint32_t((rows + t.rows() - 1) / t.rows()), (columns + t.columns() - 1) / t.columns()};
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

// The scheme a dense convolution's Winograd runs as: F(2x2,3x3) on the matrix units where the
// matrix path runs the layer (float16 destinations), else F(4x4,3x3) on the portable GEMM.
WinogradWeights winogradWeightsOf(const ConvolutionState& s, bool matrixUnits) {
  if (matrixUnits)
    return {WinogradScheme::matrixUnits, s.winogradMatrixWeights, s.bias, s.slopes,
            neuronParams(s.descriptor.neuron)};
  return {WinogradScheme::portable, s.winogradWeights, s.bias, s.slopes,
          neuronParams(s.descriptor.neuron)};
}

// One dispatch; (leftEdge, topEdge) is where the window starts relative to the offset position.
void encodeConvolution(KernelEncoding& e, const ConvolutionState& s, ShaderId shader,
                       int64_t leftEdge, int64_t topEdge, std::string* configuration,
                       std::string* tuningKeyOut, const std::string* configurationOverride) {
  const ConvolutionDescriptor& d = s.descriptor;
  // Before anything is bound: a window origin out of the shader's range is an error.
  const int32_t originX = shaderCoordinate(e.offsetX - leftEdge, "window origin x", e);
  const int32_t originY = shaderCoordinate(e.offsetY - topEdge, "window origin y", e);
  const bool alignedDestination =
      (e.destination.storageChannelOffset() + e.destinationChannelOffset) % 4 == 0;
  bool gemm = shader != ShaderId::depthwise_convolution && d.groups == 1 && alignedDestination;
  const ShaderVariant variant = variantFor(e.destination);
  const bool matrixUnits = gemm && variant == ShaderVariant::f16 && s.matrixWeights;
  GemmChoice choice{shader};
  std::string what = e.what();
  std::vector<int32_t> specialization;
  const DeviceCapabilities& caps = e.commandBuffer.context->capabilities();
  // convolution_tiled reads a source texel as one fetch (a window starting at a layer) and
  // counts warps of 32 invocations.
  const bool tiledAllowed = (e.source.storageChannelOffset() + e.sourceChannelOffset) % 4 == 0 &&
                            e.commandBuffer.context->facts().warpsOf32();
  const bool groupedTiled = shader == ShaderId::convolution && d.groups > 1 && alignedDestination &&
                            variant == ShaderVariant::f16 && s.matrixWeights && tiledAllowed;
  // VKCNN_CONVOLUTION_TILE first, then the shape's tuning entry (or trial candidate), then the
  // cost model (convolution_tuning.h).
  std::string forced =
      configurationOverride ? *configurationOverride : forcedTile(*e.commandBuffer.context);
  TuningPick pick;
  // Not for a batch's pieces side by side: the tuner times a piece alone, which is not how they
  // run, and picks what wins alone (bench/NOTES.md, 2026-11-27); the cost model counts them.
  const std::string key = (groupedTiled || gemm) && piecesSideBySide(e) == 1
                              ? tuningKey(e, d, variant, tiledAllowed, matrixUnits)
                              : std::string();
  // Winograd (winograd.h): F(4x4,3x3) on the portable path, F(2x2,3x3) on the matrix units.
  const WinogradWeights winograd = winogradWeightsOf(s, matrixUnits);
  const bool winogradPossible = winograd.weights && shader == ShaderId::convolution && gemm &&
                                winogradFits(e, d, winograd.scheme);
  if (forced.empty() && !key.empty()) {
    auto candidates = [&] {
      return candidatesOf(e, d, groupedTiled, matrixUnits, tiledAllowed, caps.multiprocessorCount,
                          winogradPossible);
    };
    if (tuneAtEncode(*e.commandBuffer.context, key))
      tuneShape(e, s, shader, leftEdge, topEdge, key, candidates());
    pick = tunedConfiguration(*e.commandBuffer.context, key, candidates);
    forced = pick.configuration;
  }
  // Not for a batch's pieces encoded one by one side by side: each piece's three steps would
  // need barriers of their own (densenet121 in float32 at batch 32, 4 pieces: 14.9 -> 19.5 ms).
  // Convolution::encodeBatch runs such pieces as one (encodeConvolutionPieces).
  if (winogradPossible && winogradTaken(forced, piecesSideBySide(e) == 1, d, pixelsOf(e),
                                        blocksOf(e), winograd.scheme)) {
    if (tuningKeyOut) *tuningKeyOut = key;
    if (configuration) *configuration = "winograd";
    if (pick.candidate >= 0) noteTrial(*e.commandBuffer.context, what, key, pick.candidate);
    encodeWinograd({&e, 1}, d, leftEdge, topEdge, winograd, what);
    return;
  }
  if (groupedTiled) choice.tile = groupedTile(e, d, caps.multiprocessorCount, forced);
  if (choice.tile) {
    shader = choice.shader = ShaderId::convolution_tiled;
    what += std::string(" (grouped ") + choice.tile->name + ")";
  } else if (gemm) {
    choice = gemmShader(e, d, matrixUnits, tiledAllowed, caps.multiprocessorCount, forced);
    if (!matrixUnits) choice.shader = portableTileWithin(caps, choice.shader, variant);
    // No portable tile fits the device's shared memory: the direct shader.
    gemm = choice.shader != ShaderId::convolution;
    shader = choice.shader;
    // The profile and the benchmark read the configuration off the dispatch's label.
    what += gemm ? " (" + nameOf(choice) + ")" : std::string(" (direct)");
  } else if (shader == ShaderId::convolution) {
    what += d.groups > 1 ? " (grouped direct)" : " (direct)";
  }
  if (tuningKeyOut) *tuningKeyOut = key;
  if (pick.candidate >= 0) noteTrial(*e.commandBuffer.context, what, key, pick.candidate);
  if (configuration) {
    const size_t open = what.rfind(" (");
    *configuration =
        open == std::string::npos ? nameOf(choice) : what.substr(open + 2, what.size() - open - 3);
    if (shader == ShaderId::depthwise_convolution) *configuration = "depthwise";
  }
  uint32_t rowTiles = 0, columnTiles = 0;
  if (const MatrixTile* t = choice.tile) {
    const TileGrid grid = tileGridOf(e, d, *t);
    rowTiles = grid.rowTiles;
    columnTiles = grid.columnTiles;
    const uint64_t workgroups = uint64_t(rowTiles) * columnTiles * d.groups * piecesSideBySide(e);
    const auto constants = tiledConstants(*t, e, d, workgroups, caps.multiprocessorCount);
    specialization.assign(constants.begin(), constants.end());
  }
  addSourceActivation(specialization, d);
  DispatchRecorder r(e.commandBuffer, shader, variant, what, specialization);
  shader::ConvolutionPush push{};
  const uint32_t slices = bindConvolution(
      r, push, e, s, choice.tile || matrixUnits ? s.matrixWeights : s.weights, originX, originY);
  if (choice.tile) {
    if (shader == ShaderId::convolution_tiled_split) {
      // The partial tiles and a counter per tile (zero, and zero again after each run) in the
      // command buffer's workspace (convolution_tiled.glsl).
      // A reduction whole (one share) touches neither: a few bytes are bound.
      const uint64_t tiles = uint64_t(rowTiles) * columnTiles;
      const bool whole = choice.splits == 1;
      const VkDeviceSize bytes = whole ? 16
                                       : tiles * choice.splits * choice.tile->rows() *
                                             choice.tile->columns() * sizeof(float);
      Workspace::Range partials = e.commandBuffer.workspace.take(e.commandBuffer, bytes);
      r.bindStorageBuffer(6, partials.buffer, partials.offset, bytes, true,
                          std::move(partials.owner));
      const VkDeviceSize counterBytes = whole ? 16 : tiles * 4;
      Workspace::Range counters =
          whole ? e.commandBuffer.workspace.take(e.commandBuffer, counterBytes)
                : e.commandBuffer.workspace.takeZeroed(e.commandBuffer, counterBytes);
      r.bindStorageBuffer(7, counters.buffer, counters.offset, counterBytes, true,
                          std::move(counters.owner));
      r.dispatchGroups(&push, sizeof push, rowTiles, columnTiles, choice.splits);
      return;
    }
    r.dispatchGroups(&push, sizeof push, rowTiles, columnTiles, d.groups);
    return;
  }
  if (gemm) {
    const GemmKernel& tile = tileOf(shader);
    const uint64_t rows = uint64_t(e.clipWidth) * e.clipHeight * e.imageCount;
    r.dispatchGroups(&push, sizeof push, uint32_t((rows + tile.pixels - 1) / tile.pixels),
                     (slices + tile.slices - 1) / tile.slices, 1);
    return;
  }
  r.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

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
  const DeviceCapabilities& caps = first.commandBuffer.context->capabilities();
  const std::string& forced = forcedPieces(*first.commandBuffer.context);
  if (forced == "separate" || pieces.size() < 2 || pieces.size() > VKCNN_MAX_PIECES ||
      !caps.imageArrayNonUniformIndexing || !first.commandBuffer.context->facts().warpsOf32() ||
      s.shader != ShaderId::convolution || !s.matrixWeights ||
      variantFor(first.destination) != ShaderVariant::f16)
    return false;
  uint32_t images = 0;
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
    images += e.imageCount;
  }
  // convolution_tiled's windows: a source texel is one fetch, destinations start at a layer.
  if ((first.source.storageChannelOffset() + first.sourceChannelOffset) % 4 != 0 ||
      (first.destination.storageChannelOffset() + first.destinationChannelOffset) % 4 != 0)
    return false;
  KernelEncoding whole = first;
  whole.imageCount = images;
  whole.imagesSideBySide = std::max(imagesSideBySide, images);
  const uint32_t sms = caps.multiprocessorCount;
  const std::string& tile = forcedTile(*first.commandBuffer.context);
  GemmChoice choice{ShaderId::convolution_tiled};
  if (d.groups > 1)
    choice.tile = groupedTile(whole, d, sms, tile);
  else
    choice = gemmShader(whole, d, true, true, sms, tile);
  if (!choice.tile || choice.shader != ShaderId::convolution_tiled) return false;

  const int32_t originX = shaderCoordinate(first.offsetX - leftEdge, "window origin x", first);
  const int32_t originY = shaderCoordinate(first.offsetY - topEdge, "window origin y", first);
  const MatrixTile& t = *choice.tile;
  const auto [rowTiles, columnTiles] = tileGridOf(whole, d, t);
  const uint64_t besides = piecesSideBySide(whole);  // groups of pieces side by side
  const uint64_t workgroups = uint64_t(rowTiles) * columnTiles * d.groups * besides;
  if (forced != "one") {
    uint64_t pieceRowTiles = 0;
    for (const KernelEncoding& e : pieces) pieceRowTiles += tileGridOf(e, d, t).rowTiles;
    const uint64_t perWave =
        uint64_t(sms ? sms : DeviceFacts::kAssumedMultiprocessors) * t.residentPerMultiprocessor;
    const uint64_t separateWorkgroups = pieceRowTiles * columnTiles * d.groups * besides;
    if ((workgroups + perWave - 1) / perWave >= (separateWorkgroups + perWave - 1) / perWave)
      return false;
  }
  const auto constants = tiledConstants(t, whole, d, workgroups, sms);
  std::vector<int32_t> specialization(constants.begin(), constants.end());
  specialization[8] = int32_t(first.imageCount);  // IMAGES_PER_PIECE
  addSourceActivation(specialization, d);
  configuration = std::string(d.groups > 1 ? "grouped " : "") + t.name + ", " +
                  std::to_string(pieces.size()) + " pieces";
  DispatchRecorder r(first.commandBuffer, ShaderId::convolution_tiled_pieces, ShaderVariant::f16,
                     first.what() + " (" + configuration + ")", specialization);
  shader::ConvolutionPush push{};
  push.neuron = neuronParams(d.neuron);
  // Every element is bound: past the last piece, the last piece again (never read).
  uint32_t slices = 0;
  for (uint32_t p = 0; p < VKCNN_MAX_PIECES; ++p)
    slices = bindConvolutionImages(r, push, pieces[std::min<size_t>(p, pieces.size() - 1)], p);
  push.geometry = whole.geometry(slices);
  bindConvolutionParameters(r, push, s, s.matrixWeights, originX, originY);
  r.dispatchGroups(&push, sizeof push, rowTiles, columnTiles, d.groups);
  return true;
}

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
  const std::string& forced = forcedTile(*pieces.front().commandBuffer.context);
  const bool matrixUnits =
      variantFor(pieces.front().destination) == ShaderVariant::f16 && s.matrixWeights;
  const WinogradWeights winograd = winogradWeightsOf(s, matrixUnits);
  bool fits = winograd.weights && s.shader == ShaderId::convolution;
  uint32_t images = 0;
  uint64_t pixels = 0, blocks = 0;
  for (const KernelEncoding& e : pieces) {
    fits = fits && winogradFits(e, d, winograd.scheme);
    images += e.imageCount;
    pixels += pixelsOf(e);
    blocks += blocksOf(e);
  }
  if (fits && winogradTaken(forced, true, d, pixels, blocks, winograd.scheme)) {
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
