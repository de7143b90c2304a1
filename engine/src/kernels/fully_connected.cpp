// FullyConnected (vkcnn/convolution.h): a convolution whose kernel spans its source. One pair
// runs fully_connected_batched (or the convolution path, forced or for small float16 layers of
// one image on the matrix units); a batch held in several Images is gathered into a Tensor and
// runs fully_connected_tensor, or fully_connected_matrix and its reduction on the matrix units.
#include <algorithm>
#include <cstdio>

#include "convolution_interface.h"
#include "convolution_tiles.h"
#include "kernels/convolution_choice.h"
#include "kernels/convolution_state.h"
#include "kernels/kernel_encoding.h"
#include "kernels/neuron_params.h"
#include "kernels/tensor_encoding.h"
#include "vkcnn/tensor_ops.h"
#include "vulkan/context_impl.h"
#include "vulkan/pipelines.h"

namespace vkcnn {

// ---- FullyConnected -----------------------------------------------------------------------------

namespace {
void checkFullyConnected(const ConvolutionDescriptor& d, const std::string& what) {
  detail::require(d.dilationRateX == 1 && d.dilationRateY == 1,
                  what + ": dilation rate " + std::to_string(d.dilationRateX) + "x" +
                      std::to_string(d.dilationRateY) +
                      " must be 1x1 for a fully connected layer (its kernel spans the source)");
  detail::require(!d.sourceActivation,
                  what +
                      ": a fully connected layer takes no source activation (a Convolution "
                      "does)");
}
}  // namespace

FullyConnected::FullyConnected(const Context& context, const ConvolutionDescriptor& descriptor,
                               std::span<const float> weights, std::span<const float> bias)
    : UnaryKernel(context, detail::defaultLabel("fully connected", descriptor)) {
  const std::string what = "FullyConnected '" + label + "'";
  detail::checkDescriptor(descriptor, what);
  checkFullyConnected(descriptor, what);
  state_ = detail::makeState(context, descriptor, weights, bias, what, label, true);
}

FullyConnected FullyConnected::fromDatFiles(const Context& context,
                                            const ConvolutionDescriptor& descriptor,
                                            const std::string& weightsPath,
                                            const std::string& biasPath) {
  const std::string what =
      "FullyConnected '" + detail::defaultLabel("fully connected", descriptor) + "'";
  detail::checkDescriptor(descriptor, what);
  checkFullyConnected(descriptor, what);
  return detail::fromDatFiles<FullyConnected>(context, descriptor, weightsPath, biasPath, what);
}

const ConvolutionDescriptor& FullyConnected::descriptor() const {
  return state_->descriptor;
}

uint32_t FullyConnected::destinationFeatureChannels(uint32_t) const {
  return state_->descriptor.outputFeatureChannels;
}

void FullyConnected::validate(const detail::KernelEncoding& e) const {
  const ConvolutionDescriptor& d = state_->descriptor;
  detail::checkSourceChannels(e, d);
  detail::require(e.source.width() == d.kernelWidth && e.source.height() == d.kernelHeight,
                  e.what() + ": source '" + e.source.label() + "' is " +
                      std::to_string(e.source.width()) + "x" + std::to_string(e.source.height()) +
                      " but the fully connected kernel spans " + std::to_string(d.kernelWidth) +
                      "x" + std::to_string(d.kernelHeight) + " (kernelWidth x kernelHeight)");
}

namespace {
// The test and benchmark hook VKCNN_FULLY_CONNECTED: "batched1" / "batched2" / "batched4" /
// "batched8" force fully_connected_batched with that many rows per slice, "legacy" the
// convolution path; unset (or "batched"), the batched shader wherever it applies except for small
// float16 layers of one image on the matrix units, where matrix_small was as fast (H100, vgg16's
// and resnet50's classifiers, bench/NOTES.md 2026-11-25). "pieces": encodeBatch encodes each pair
// (as before it read a batch in pieces at once), the choice per pair unforced.
const std::string& forcedFullyConnected(const detail::ContextImpl& context) {
  return context.overrides().choice.fullyConnected;
}

// fully_connected_batched: dense weights, a one-pixel destination region starting at a layer.
bool batchedApplies(const detail::KernelEncoding& e, const ConvolutionDescriptor& d,
                    const detail::ConvolutionState& s) {
  const std::string& forced = forcedFullyConnected(*e.commandBuffer.context);
  if (forced == "legacy" || s.shader == detail::ShaderId::depthwise_convolution || d.groups != 1 ||
      e.clipWidth != 1 || e.clipHeight != 1 ||
      (e.destination.storageChannelOffset() + e.destinationChannelOffset) % 4 != 0)
    return false;
  // Measured at batch 1: float32 0.44 -> 0.15 ms (vgg16 fc6), 0.042 -> 0.019 (resnet50's fc); in
  // float16, see kLargeFullyConnected.
  return (!forced.empty() && forced != "pieces") || e.imageCount > 1 ||
         detail::variantFor(e.destination) != detail::ShaderVariant::f16 || !s.matrixWeights ||
         d.weightCount() >= detail::kLargeFullyConnected;
}

// Rows of 32 invocations per slice (fully_connected_batched.glsl): the fewest that give every
// multiprocessor a workgroup, then more while an invocation would take more than 16 steps of the
// reduction (`steps`: weight blocks per slice): its loop waits on one weight load after another, so
// shorter loops in more workgroups go faster (H200, vgg16's classifier, bench/NOTES.md session 19:
// fc6 at batch 32 1.34 ms with 1 row, 0.66 with 8; fc7 best at 16 steps). One image (`oneImage`,
// the ONE_IMAGE loop) takes 8 rows: a step is one weight block there, so more warps with shorter
// loops keep more loads in flight (vgg16's fc7 at batch 1: 2 rows 24.6 us, 8 rows 14.3; H200,
// bench/NOTES.md session 33).
int32_t rowsPerSlice(const detail::CommandBufferImpl& cb, uint32_t slices, uint32_t imageGroups,
                     uint32_t steps, bool oneImage) {
  const uint32_t sms = cb.context->facts().multiprocessors();
  int32_t rows = oneImage ? 8 : 1;
  while (rows < 8 && (slices + 8 / rows - 1) / (8 / rows) * imageGroups < sms) rows *= 2;
  while (rows < 8 && steps > 16u * 32u * uint32_t(rows)) rows *= 2;
  const std::string& forced = forcedFullyConnected(*cb.context);
  for (int32_t n : {1, 2, 4, 8})
    if (forced == "batched" + std::to_string(n)) rows = n;
  return rows;
}

constexpr uint32_t kImagesPerWorkgroup = 8;  // FC_IMAGES

// The reduction's steps per destination slice: one weight block of 4 input channels per tap each.
uint32_t stepsPerSlice(const ConvolutionDescriptor& d) {
  return d.kernelWidth * d.kernelHeight * ((d.inputFeatureChannels / d.groups + 3) / 4);
}

void encodeBatched(detail::KernelEncoding& e, const detail::ConvolutionState& s) {
  using namespace detail;
  const int32_t originX = shaderCoordinate(e.offsetX, "window origin x", e);
  const int32_t originY = shaderCoordinate(e.offsetY, "window origin y", e);
  const uint32_t slices = (e.destinationChannels + 3) / 4;
  const uint32_t imageGroups = (e.imageCount + kImagesPerWorkgroup - 1) / kImagesPerWorkgroup;
  const int32_t rows = rowsPerSlice(e.commandBuffer, slices, imageGroups,
                                    stepsPerSlice(s.descriptor), e.imageCount == 1);
  // One image: a loop of its own (fully_connected_batched.glsl, ONE_IMAGE).
  const std::vector<int32_t> specialization{rows, e.imageCount == 1 ? 1 : 0};
  const ShaderVariant variant = variantFor(e.destination);
  const bool half = variant == ShaderVariant::f16 && s.halfWeights;
  DispatchRecorder r(
      e.commandBuffer,
      half ? ShaderId::fully_connected_batched_half : ShaderId::fully_connected_batched, variant,
      e.what() + " (batched" + (half ? " half" : "") + " r" + std::to_string(rows) +
          (e.imageCount == 1 ? " one)" : ")"),
      specialization);
  shader::ConvolutionPush push{};
  const uint32_t bound =
      bindConvolution(r, push, e, s, half ? s.halfWeights : s.weights, originX, originY);
  r.dispatchGroups(&push, sizeof push, imageGroups, (bound + 8 / rows - 1) / (8 / rows), 1);
}

// `element`, the first element of a Tensor's binding, for shaders that load 4 elements at a time
// (a fresh temporary starts at its bound range's start, so this holds unless something changed).
int32_t sliceAligned(int32_t element, const std::string& what, const char* name) {
  if (element % 4)
    throw Error(ErrorCode::unsupported, what + ": the " + std::string(name) + " start at element " +
                                            std::to_string(element) +
                                            " of their binding, not at a slice of 4");
  return element;
}

// fully_connected_tensor(_half).comp: `source` [N][taps][C] to `destination` [N][outC], Tensors
// of the variant's element type.
void encodeOnTensors(detail::CommandBufferImpl& cb, const detail::ConvolutionState& s,
                     const std::string& what, const Tensor& source, const Tensor& destination) {
  using namespace detail;
  const ConvolutionDescriptor& d = s.descriptor;
  const uint32_t images = source.shape()[0];
  const uint32_t slices = (d.outputFeatureChannels + 3) / 4;
  const uint32_t imageGroups = (images + kImagesPerWorkgroup - 1) / kImagesPerWorkgroup;
  const int32_t rows = rowsPerSlice(cb, slices, imageGroups, stepsPerSlice(d), false);
  const std::vector<int32_t> specialization{rows};
  const ShaderVariant variant = variantFor(source.dataType());
  const bool half = variant == ShaderVariant::f16 && s.halfWeights;
  DispatchRecorder r(
      cb, half ? ShaderId::fully_connected_tensor_half : ShaderId::fully_connected_tensor, variant,
      what + " (batch of " + std::to_string(images) + " on tensors" + (half ? " half" : "") + " r" +
          std::to_string(rows) + ")",
      specialization);
  shader::FullyConnectedTensorPush push{};
  push.sourceFirst = sliceAligned(bindTensor(r, cb, 0, source, false), what, "gathered sources");
  push.destinationFirst = bindTensor(r, cb, 1, destination, true);
  r.bindBuffer(2, half ? s.halfWeights : s.weights);
  r.bindBuffer(3, s.bias);
  r.bindBuffer(4, s.slopes);
  push.sourceChannels = int32_t(d.inputFeatureChannels);
  push.destinationChannels = int32_t(d.outputFeatureChannels);
  push.imageCount = int32_t(images);
  push.slices = int32_t(slices);
  push.taps = int32_t(d.kernelWidth * d.kernelHeight);
  push.neuron = neuronParams(d.neuron);
  r.dispatchGroups(&push, sizeof push, imageGroups, (slices + 8 / rows - 1) / (8 / rows), 1);
  markWritten(destination);
  consumeRead(source);
}

// fully_connected_matrix.comp then fully_connected_reduce.comp (float16, matrix units): a batch
// has a few rows against thousands of columns and inputs, so the weights stream once through
// cooperative matrices, the inputs split over about a workgroup a multiprocessor, and the splits
// are added in order. fully_connected_tensor runs vgg16's fc6 at batch 32 in 0.47 ms (14 TFLOP/s
// of float32 multiply-adds); this in 0.17 + 0.007 (H100, bench/NOTES.md, 2026-11-27, session 24),
// still 1.2 TB/s of weights where the H100 streams 3.35.
// Its tile fits the 48 KiB of shared memory matrixUnits guarantees (convolution_tiles.h).
bool onMatrixUnits(const detail::CommandBufferImpl& cb, const detail::ConvolutionState& s,
                   TensorDataType type) {
  const auto& caps = cb.context->capabilities();
  return cb.context->facts().matrixTiles() && caps.matrixUnits && type == TensorDataType::float16 &&
         s.halfWeights && forcedFullyConnected(*cb.context) != "tensor";
}

// fully_connected_matrix's grid for a batch of `images` against `d`: the tile, the row fragments,
// the row and column tiles, the splits of the inputs and the chunks each takes.
struct MatrixPlan {
  const detail::FullyConnectedMatrixTile* tile;
  int32_t fragments;
  uint32_t inputs, rowTiles, columnTiles, splits, chunksPerSplit, rows, columns;
};

MatrixPlan matrixPlanOf(const detail::ContextImpl& context, const ConvolutionDescriptor& d,
                        uint32_t images) {
  using namespace detail;
  // Benchmarks force the workgroups a multiprocessor and the tile: VKCNN_FULLY_CONNECTED=matrixN
  // or matrixN/TILE.
  const std::string& forced = forcedFullyConnected(context);
  const FullyConnectedMatrixTile* tile = &kFullyConnectedMatrixTiles[0];
  for (const FullyConnectedMatrixTile& t : kFullyConnectedMatrixTiles) {
    const std::string suffix = std::string("/") + t.name;
    if (forced.size() > suffix.size() &&
        forced.compare(forced.size() - suffix.size(), suffix.size(), suffix) == 0)
      tile = &t;
  }
  const uint32_t kColumns = tile->columns, kChunk = tile->chunk;
  const uint32_t inputs = d.kernelWidth * d.kernelHeight * d.inputFeatureChannels;
  const int32_t fragments = images > 16 ? 2 : 1;
  const uint32_t rowTiles = (images + 16 * fragments - 1) / (16 * fragments);
  const uint32_t columnTiles = (d.outputFeatureChannels + kColumns - 1) / kColumns;
  const uint32_t chunks = (inputs + kChunk - 1) / kChunk;
  // Workgroups a multiprocessor, at most one wave: 1 was best of 1-32 on every layer measured
  // (H100, vgg16 at batch 32: fc6 0.170 ms with 1, 0.172 with 2, 0.175 with 4, 0.182 with 8,
  // 0.206 with 32; fc7 0.033 to 0.062; resnet50's fc 0.011 to 0.014; bench/NOTES.md, session
  // 24, runs 3-4). More workgroups hold more loads in flight and take no less time.
  uint32_t perMultiprocessor = 1;
  unsigned workgroups = 0;
  if (std::sscanf(forced.c_str(), "matrix%u", &workgroups) == 1 && workgroups > 0)
    perMultiprocessor = workgroups;
  const uint32_t wanted = perMultiprocessor * context.facts().multiprocessors();
  const uint32_t tiles = rowTiles * columnTiles;
  const uint32_t splitsWanted = std::clamp(wanted / tiles, 1u, chunks);
  const uint32_t chunksPerSplit = (chunks + splitsWanted - 1) / splitsWanted;
  const uint32_t splits = (chunks + chunksPerSplit - 1) / chunksPerSplit;
  const uint32_t rows = rowTiles * 16 * uint32_t(fragments), columns = columnTiles * kColumns;
  return {tile, fragments, inputs, rowTiles, columnTiles, splits, chunksPerSplit, rows, columns};
}

void encodeOnMatrixUnits(CommandBuffer& commandBuffer, const detail::ConvolutionState& s,
                         const std::string& label, const std::string& what, const Tensor& source,
                         const Tensor& destination) {
  using namespace detail;
  CommandBufferImpl& cb = *commandBuffer.impl();
  const ConvolutionDescriptor& d = s.descriptor;
  const uint32_t images = source.shape()[0];
  const MatrixPlan plan = matrixPlanOf(*cb.context, d, images);
  const FullyConnectedMatrixTile* tile = plan.tile;
  const int32_t fragments = plan.fragments;
  const uint32_t inputs = plan.inputs, rowTiles = plan.rowTiles, columnTiles = plan.columnTiles;
  const uint32_t splits = plan.splits, chunksPerSplit = plan.chunksPerSplit;
  const uint32_t rows = plan.rows, columns = plan.columns;
  // Each step group of a workgroup sums a split of its own.
  const uint32_t partialSplits = splits * tile->stepGroups();
  TemporaryTensor partials(
      commandBuffer,
      {{partialSplits, rows, columns}, TensorDataType::float32, label + " (partial sums)"});
  partials.setReadCount(1);
  shader::FullyConnectedMatrixPush push{};
  push.inputs = int32_t(inputs);
  push.destinationChannels = int32_t(d.outputFeatureChannels);
  push.imageCount = int32_t(images);
  push.splits = int32_t(partialSplits);
  push.chunksPerSplit = int32_t(chunksPerSplit);
  push.partialRows = int32_t(rows);
  push.partialColumns = int32_t(columns);
  push.neuron = neuronParams(d.neuron);
  const auto tileConstants = tile->specialization(uint32_t(fragments));
  const std::vector<int32_t> specialization(tileConstants.begin(), tileConstants.end());
  {
    DispatchRecorder r(cb, ShaderId::fully_connected_matrix, ShaderVariant::f16,
                       what + " (batch of " + std::to_string(images) + " on the matrix units " +
                           tile->name + ", " + std::to_string(splits) + " splits)",
                       specialization);
    push.sourceFirst = sliceAligned(bindTensor(r, cb, 0, source, false), what, "gathered sources");
    r.bindBuffer(1, s.halfWeights);
    push.partialsFirst = sliceAligned(bindTensor(r, cb, 2, partials, true), what, "partial sums");
    r.dispatchGroups(&push, sizeof push, columnTiles, splits, rowTiles);
    markWritten(partials);
    consumeRead(source);
  }
  DispatchRecorder r(cb, ShaderId::fully_connected_reduce, ShaderVariant::f16,
                     what + " (the splits added)");
  push.partialsFirst = sliceAligned(bindTensor(r, cb, 0, partials, false), what, "partial sums");
  push.destinationFirst = bindTensor(r, cb, 1, destination, true);
  r.bindBuffer(3, s.bias);
  r.bindBuffer(4, s.slopes);
  r.dispatchGroups(&push, sizeof push, ((d.outputFeatureChannels + 3) / 4 + 255) / 256, images, 1);
  markWritten(destination);
  consumeRead(partials);
}
}  // namespace

bool FullyConnected::batchOnTensors(const std::vector<Image>& sources,
                                    const std::vector<Image>& destinations) const {
  const ConvolutionDescriptor& d = state_->descriptor;
  const ClipRect whole{};
  const std::string& forced = forcedFullyConnected(*context().impl());
  // The tensor shader loads whole slices of 4 input channels.
  if (sources.size() < 2 || d.groups != 1 || d.inputFeatureChannels % 4 != 0 ||
      state_->shader == detail::ShaderId::depthwise_convolution || forced == "legacy" ||
      forced == "pieces" || !destinations[0].valid() || offset.x != 0 || offset.y != 0 ||
      offset.z != 0 || clipRect.x != 0 || clipRect.y != 0 || clipRect.z != 0 ||
      clipRect.width != whole.width || clipRect.height != whole.height ||
      clipRect.depth != whole.depth || sourceFeatureChannelMaxCount < d.inputFeatureChannels)
    return false;
  const ChannelFormat format = destinations[0].channelFormat();
  if (format != ChannelFormat::float16 && format != ChannelFormat::float32) return false;
  // Anything else (a misfit the per-pair encode reports) takes encode().
  for (size_t k = 0; k < sources.size(); ++k) {
    const Image& source = sources[k];
    const Image& destination = destinations[k];
    if (!source.valid() || !destination.valid() || destination.channelFormat() != format ||
        source.width() != d.kernelWidth || source.height() != d.kernelHeight ||
        uint64_t(sourceFeatureChannelOffset) + d.inputFeatureChannels > source.featureChannels() ||
        destination.width() != 1 || destination.height() != 1 ||
        uint64_t(destinationFeatureChannelOffset) + d.outputFeatureChannels >
            destination.featureChannels() ||
        source.numberOfImages() != destination.numberOfImages())
      return false;
  }
  return true;
}

void FullyConnected::encodeBatch(CommandBuffer& commandBuffer, const std::vector<Image>& sources,
                                 const std::vector<Image>& destinations) {
  const std::string what = "FullyConnected '" + label + "'";
  if (sources.size() != destinations.size() || sources.empty())
    throw Error(ErrorCode::invalidArgument,
                what + ": encodeBatch takes as many destination Images as sources, at least one (" +
                    std::to_string(sources.size()) + " sources, " +
                    std::to_string(destinations.size()) + " destinations)");
  if (!batchOnTensors(sources, destinations)) {
    for (size_t k = 0; k < sources.size(); ++k) encode(commandBuffer, sources[k], destinations[k]);
    return;
  }
  const ConvolutionDescriptor& d = state_->descriptor;
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  uint32_t total = 0;
  for (const Image& source : sources) total += source.numberOfImages();
  const TensorDataType type = destinations[0].channelFormat() == ChannelFormat::float16
                                  ? TensorDataType::float16
                                  : TensorDataType::float32;
  // The sources' windows as [N][H][W][C]: the order of the weights' taps and channels.
  TemporaryTensor gathered(
      commandBuffer,
      {{total, d.kernelHeight, d.kernelWidth, d.inputFeatureChannels}, type, label + " (sources)"});
  gathered.setReadCount(1);
  ImageToTensor gather(context(), TensorLayout::NHWC);
  gather.label = label + " (gather)";
  gather.sourceFeatureChannelOffset = sourceFeatureChannelOffset;
  gather.featureChannels = d.inputFeatureChannels;
  uint32_t first = 0;
  for (const Image& source : sources) {
    const uint32_t n = source.numberOfImages();
    gather.encode(commandBuffer, source, gathered.slice(0, first, first + n));
    first += n;
  }
  TemporaryTensor results(commandBuffer,
                          {{total, 1, 1, d.outputFeatureChannels}, type, label + " (results)"});
  results.setReadCount(uint32_t(destinations.size()));
  if (onMatrixUnits(cb, *state_, type))
    encodeOnMatrixUnits(commandBuffer, *state_, label, "kernel '" + label + "'", gathered, results);
  else
    encodeOnTensors(cb, *state_, "kernel '" + label + "'", gathered, results);
  TensorToImage scatter(context(), TensorLayout::NHWC);
  scatter.label = label + " (scatter)";
  scatter.destinationFeatureChannelOffset = destinationFeatureChannelOffset;
  first = 0;
  for (const Image& destination : destinations) {
    const uint32_t n = destination.numberOfImages();
    scatter.encode(commandBuffer, results.slice(0, first, first + n), destination);
    first += n;
  }
}

void FullyConnected::encodeKernel(detail::KernelEncoding& e) {
  if (batchedApplies(e, state_->descriptor, *state_)) return encodeBatched(e, *state_);
  // Depthwise-shaped weights (one input channel per group) are packed for that shader.
  const detail::ShaderId shader = state_->shader == detail::ShaderId::depthwise_convolution
                                      ? detail::ShaderId::depthwise_convolution
                                      : detail::ShaderId::fully_connected;
  detail::encodeConvolution(e, *state_, shader, 0, 0);
}

}  // namespace vkcnn
