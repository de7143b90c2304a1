// SqueezeExcitation: the host side of glsl/squeeze_excitation.comp (the MLP's weights in one
// device buffer, the checks, the shader that fits the device, and the split of the map into
// workgroups that bounds how often the MLP is recomputed). See vkcnn/squeeze_excitation.h for the
// contract.
#include "vkcnn/squeeze_excitation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/kernel_encoding.h"
#include "kernels/neuron_params.h"
#include "squeeze_excitation_interface.h"
#include "vkcnn/error.h"
#include "vulkan/context_impl.h"
#include "vulkan/device_facts.h"
#include "vulkan/pipelines.h"

namespace vkcnn {

static_assert(SqueezeExcitation::kMaxFeatureChannels == VKCNN_SE_MAX_CHANNELS);
static_assert(SqueezeExcitation::kMaxReducedChannels == VKCNN_SE_MAX_REDUCED);

namespace {

void checkNeuronFits(const NeuronDescriptor& n, const char* which, const std::string& what) {
  detail::checkNeuron(n, what);
  if (n.type == NeuronType::prelu || n.type == NeuronType::power ||
      n.type == NeuronType::exponential || n.type == NeuronType::logarithm)
    throw Error(ErrorCode::invalidArgument, what + ": the " + std::string(which) + " neuron " +
                                                toString(n.type) +
                                                " is not supported (PReLU and the neurons that "
                                                "take a third parameter are not)");
}

void checkCount(size_t count, size_t expected, const char* name, const std::string& what,
                bool mayBeEmpty) {
  if (count == expected || (mayBeEmpty && count == 0)) return;
  throw Error(ErrorCode::invalidArgument, what + ": " + std::to_string(count) + " " + name +
                                              " values; expected " + std::to_string(expected) +
                                              (mayBeEmpty ? " (or none)" : ""));
}

// Multiply-adds of the MLP all workgroups of one image may spend recomputing it (~8 MB of weight
// reads from L2 at float32): beyond that the map is split more coarsely.
constexpr uint64_t kRecomputeBudget = uint64_t(1) << 21;
// Texels a workgroup should scale (4 per lane) before the map is split further.
constexpr uint64_t kTexelsPerWorkgroup = 4 * VKCNN_SE_LANES;

// The shader for C channels reduced to R: the one of 4096 channels, or where the device's shared
// memory cannot hold it (Vulkan's least, 16 KiB: a mobile-class device) and the block is small
// enough, the one of 2048. A block that fits neither goes to the first, which the pipeline
// registry refuses naming the limit.
detail::ShaderId shaderFor(const detail::DeviceFacts& facts, detail::ShaderVariant variant,
                           uint32_t C, uint32_t R) {
  using detail::ShaderId;
  if (detail::fitsDevice(facts, detail::shaderModule(ShaderId::squeeze_excitation, variant)) ||
      C > VKCNN_SE_SMALL_CHANNELS || R > VKCNN_SE_SMALL_REDUCED)
    return ShaderId::squeeze_excitation;
  return ShaderId::squeeze_excitation_small;
}

}  // namespace

SqueezeExcitation::SqueezeExcitation(const Context& context,
                                     const SqueezeExcitationDescriptor& descriptor,
                                     const std::vector<float>& fc1Weights,
                                     const std::vector<float>& fc1Bias,
                                     const std::vector<float>& fc2Weights,
                                     const std::vector<float>& fc2Bias)
    : BinaryKernel(context, "squeeze excitation"), descriptor_(descriptor) {
  const std::string what = "SqueezeExcitation '" + label + "'";
  const uint32_t C = descriptor.featureChannels, R = descriptor.reducedChannels;
  if (C == 0 || C > kMaxFeatureChannels || R == 0 || R > kMaxReducedChannels)
    throw Error(ErrorCode::invalidArgument,
                what + ": " + std::to_string(C) + " channels reduced to " + std::to_string(R) +
                    " (1 to " + std::to_string(kMaxFeatureChannels) + " channels, 1 to " +
                    std::to_string(kMaxReducedChannels) + " reduced)");
  checkNeuronFits(descriptor.inner, "inner", what);
  checkNeuronFits(descriptor.gate, "gate", what);
  checkCount(fc1Weights.size(), size_t(R) * C, "fc1 weight", what, false);
  checkCount(fc1Bias.size(), R, "fc1 bias", what, true);
  checkCount(fc2Weights.size(), size_t(C) * R, "fc2 weight", what, false);
  checkCount(fc2Bias.size(), C, "fc2 bias", what, true);
  std::vector<float> packed(size_t(R) * C * 2 + R + C, 0.f);
  std::copy(fc1Weights.begin(), fc1Weights.end(), packed.begin());
  std::copy(fc1Bias.begin(), fc1Bias.end(), packed.begin() + size_t(R) * C);
  float* fc2 = packed.data() + size_t(R) * C + R;
  for (uint32_t c = 0; c < C; ++c)
    for (uint32_t j = 0; j < R; ++j) fc2[size_t(j) * C + c] = fc2Weights[size_t(c) * R + j];
  std::copy(fc2Bias.begin(), fc2Bias.end(), fc2 + size_t(R) * C);
  weights_ = detail::DeviceBuffer::create(*context_.impl(), packed.size() * sizeof(float),
                                          packed.data(), label + " weights");
}

void SqueezeExcitation::validate(const detail::BinaryKernelEncoding& e) const {
  const uint32_t C = descriptor_.featureChannels;
  if (e.sourceChannels != C || e.secondaryChannels != C)
    throw Error(ErrorCode::invalidArgument,
                e.what() + ": a source window of " + std::to_string(e.sourceChannels) +
                    " channels and a means window of " + std::to_string(e.secondaryChannels) +
                    " channels; both must be the kernel's " + std::to_string(C) + " channels");
  if (e.secondary.width() != 1 || e.secondary.height() != 1)
    throw Error(ErrorCode::invalidArgument,
                e.what() + ": the means '" + e.secondary.label() + "' are " +
                    std::to_string(e.secondary.width()) + "x" +
                    std::to_string(e.secondary.height()) +
                    "; they must be 1x1 (a global average pool's output)");
  if (uint64_t(e.secondaryFirstImage) + e.imageCount > e.secondary.numberOfImages())
    throw Error(ErrorCode::invalidArgument,
                e.what() + ": the means '" + e.secondary.label() + "' hold " +
                    std::to_string(e.secondary.numberOfImages()) + " images; images " +
                    std::to_string(e.secondaryFirstImage) + " to " +
                    std::to_string(e.secondaryFirstImage + e.imageCount - 1) + " are needed");
}

void SqueezeExcitation::encodeKernel(detail::BinaryKernelEncoding& e) {
  const uint32_t C = descriptor_.featureChannels, R = descriptor_.reducedChannels;
  const detail::ShaderVariant variant = detail::variantFor(e.destination);
  detail::DispatchRecorder d(e.commandBuffer,
                             shaderFor(e.commandBuffer.context->facts(), variant, C, R), variant,
                             e.what());
  detail::shader::SqueezeExcitationPush push{};
  push.source = d.bindSource(0, e.source, e.sourceFirstImage, e.imageCount, e.sourceChannelOffset,
                             e.sourceChannels);
  push.mean = d.bindSource(1, e.secondary, e.secondaryFirstImage, e.imageCount,
                           e.secondaryChannelOffset, e.secondaryChannels);
  push.destination = d.bindDestination(2, e.destination, e.destinationFirstImage, e.imageCount,
                                       e.destinationChannelOffset, e.destinationChannels);
  d.bindBuffer(3, std::static_pointer_cast<detail::DeviceBuffer>(weights_));
  const uint32_t layers =
      detail::touchedSlices(uint32_t(push.destination.channelShift), e.destinationChannels);
  push.geometry = e.geometry(layers);
  push.channels = int32_t(C);
  push.reduced = int32_t(R);
  push.innerType = int32_t(descriptor_.inner.type);
  push.innerA = descriptor_.inner.a;
  push.innerB = descriptor_.inner.b;
  push.gateType = int32_t(descriptor_.gate.type);
  push.gateA = descriptor_.gate.a;
  push.gateB = descriptor_.gate.b;
  // Workgroups per image: enough for ~4 texels a lane, at most what the recomputation budget
  // allows; whole layer groups first, then chunks of pixels.
  const uint64_t pixels = uint64_t(e.clipWidth) * e.clipHeight;
  const uint64_t wanted =
      (uint64_t(layers) * pixels + kTexelsPerWorkgroup - 1) / kTexelsPerWorkgroup;
  const uint64_t allowed = std::max<uint64_t>(1, kRecomputeBudget / (uint64_t(R) * C));
  const uint64_t groups = std::clamp<uint64_t>(wanted, 1, allowed);
  const uint32_t layerGroupsWanted = uint32_t(std::min<uint64_t>(layers, groups));
  const uint32_t layersPerGroup = (layers + layerGroupsWanted - 1) / layerGroupsWanted;
  const uint32_t layerGroups = (layers + layersPerGroup - 1) / layersPerGroup;
  const uint64_t chunksWanted = std::max<uint64_t>(1, groups / layerGroups);
  const uint64_t pixelsPerChunk = (pixels + chunksWanted - 1) / chunksWanted;
  const uint32_t pixelChunks = uint32_t((pixels + pixelsPerChunk - 1) / pixelsPerChunk);
  push.layersPerGroup = int32_t(layersPerGroup);
  push.pixelChunks = int32_t(pixelChunks);
  push.pixelsPerChunk = int32_t(pixelsPerChunk);
  d.dispatchGroups(&push, sizeof(push), layerGroups * pixelChunks, 1, e.imageCount);
}

}  // namespace vkcnn
