#include "vkcnn/normalization.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kernels/kernel_encoding.h"
#include "kernels/neuron_params.h"
#include "reductions_interface.h"
#include "vulkan/context_impl.h"

namespace vkcnn {
namespace {

std::string str(float value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

}  // namespace

// ---- LocalResponseNormalization ---------------------------------------------------------------

LocalResponseNormalization::LocalResponseNormalization(
    const Context& context, const LocalResponseNormalizationDescriptor& descriptor)
    : UnaryKernel(context, "local response normalization"), descriptor_(descriptor) {
  const std::string what = "LocalResponseNormalization '" + label + "'";
  const auto& d = descriptor_;
  if (d.size == 0)
    throw Error(ErrorCode::invalidArgument, what + ": size 0; it must sum at least 1 channel");
  if (!std::isfinite(d.alpha) || d.alpha < 0)
    throw Error(ErrorCode::invalidArgument,
                what + ": alpha " + str(d.alpha) + " must be finite and >= 0");
  if (!std::isfinite(d.beta))
    throw Error(ErrorCode::invalidArgument, what + ": beta " + str(d.beta) + " must be finite");
  if (!std::isfinite(d.bias) || d.bias <= 0)
    throw Error(ErrorCode::invalidArgument,
                what + ": bias (MPS delta) " + str(d.bias) +
                    " must be finite and > 0 to keep the denominator positive");
}

void LocalResponseNormalization::encodeKernel(detail::KernelEncoding& e) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::lrn,
                             detail::variantFor(e.destination), e.what());
  detail::shader::LrnPush push{};
  const uint32_t slices = d.bindWindows(push, e);
  // A window wider than the channels reaches only zeros: clamp so the shader's ints cannot wrap.
  const uint32_t size = descriptor_.size;
  push.before = int32_t(std::min((size - 1) / 2, e.sourceChannels));
  push.after = int32_t(std::min(size / 2, e.sourceChannels));
  push.alphaOverSize = float(double(descriptor_.alpha) / double(size));
  push.beta = descriptor_.beta;
  push.bias = descriptor_.bias;
  d.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

// ---- InstanceNormalization --------------------------------------------------------------------

InstanceNormalization::InstanceNormalization(const Context& context,
                                             const InstanceNormalizationDescriptor& descriptor)
    : UnaryKernel(context, "instance normalization"), descriptor_(descriptor) {
  const std::string what = "InstanceNormalization '" + label + "'";
  auto& d = descriptor_;
  const uint32_t channels = d.featureChannels;
  if (channels == 0) throw Error(ErrorCode::invalidArgument, what + ": featureChannels is 0");
  if (!d.gamma.empty() && d.gamma.size() != channels)
    throw Error(ErrorCode::invalidArgument, what + ": " + std::to_string(d.gamma.size()) +
                                                " gamma values for featureChannels " +
                                                std::to_string(channels));
  if (!d.beta.empty() && d.beta.size() != channels)
    throw Error(ErrorCode::invalidArgument, what + ": " + std::to_string(d.beta.size()) +
                                                " beta values for featureChannels " +
                                                std::to_string(channels));
  if (!std::isfinite(d.epsilon) || d.epsilon < 0)
    throw Error(ErrorCode::invalidArgument,
                what + ": epsilon " + str(d.epsilon) + " must be finite and >= 0");
  detail::checkNeuron(d.neuron, what);
  if (d.neuron.type == NeuronType::prelu && d.neuron.preluSlopes.size() != 1 &&
      d.neuron.preluSlopes.size() < channels)
    throw Error(ErrorCode::invalidArgument,
                what + ": " + std::to_string(d.neuron.preluSlopes.size()) + " PReLU slopes for " +
                    std::to_string(channels) + " channels");

  std::vector<float> parameters(size_t(channels) * 2);
  for (uint32_t c = 0; c < channels; ++c) {
    parameters[c] = d.gamma.empty() ? 1.0f : d.gamma[c];
    parameters[channels + c] = d.beta.empty() ? 0.0f : d.beta[c];
  }
  auto& impl = *context_.impl();
  parameters_ = detail::DeviceBuffer::create(impl, parameters.size() * sizeof(float),
                                             parameters.data(), label + " gamma and beta");
  slopes_ = detail::neuronSlopes(impl, d.neuron, label);
}

void InstanceNormalization::validate(const detail::KernelEncoding& e) const {
  if (e.sourceChannels != descriptor_.featureChannels)
    throw Error(ErrorCode::invalidArgument,
                e.what() + ": the source channel window holds " + std::to_string(e.sourceChannels) +
                    " channels but the kernel normalises featureChannels " +
                    std::to_string(descriptor_.featureChannels));
}

void InstanceNormalization::encodeKernel(detail::KernelEncoding& e) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::instance_norm,
                             detail::variantFor(e.destination), e.what());
  detail::shader::InstanceNormPush push{};
  const uint32_t slices = d.bindWindows(push, e);
  d.bindBuffer(2, std::static_pointer_cast<detail::DeviceBuffer>(parameters_));
  d.bindBuffer(3, std::static_pointer_cast<detail::DeviceBuffer>(slopes_));
  push.neuron = detail::neuronParams(descriptor_.neuron);
  push.epsilon = descriptor_.epsilon;
  push.channels = int32_t(descriptor_.featureChannels);
  // A workgroup reduces and writes one destination layer of one image.
  d.dispatchGroups(&push, sizeof(push), slices, e.imageCount, 1);
}

}  // namespace vkcnn
