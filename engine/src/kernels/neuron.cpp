#include "vkcnn/neuron.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernel_encoding.h"
#include "kernels/neuron_params.h"
#include "vulkan/context_impl.h"

namespace vkcnn {

// neuron.glsl switches on interface.h's numbers; these keep them the enum's.
#define VKCNN_CHECK_NEURON(glsl, type) \
  static_assert(VKCNN_NEURON_##glsl == uint32_t(NeuronType::type), #type)
VKCNN_CHECK_NEURON(NONE, none);
VKCNN_CHECK_NEURON(RELU, relu);
VKCNN_CHECK_NEURON(LINEAR, linear);
VKCNN_CHECK_NEURON(SIGMOID, sigmoid);
VKCNN_CHECK_NEURON(HARD_SIGMOID, hardSigmoid);
VKCNN_CHECK_NEURON(TANH, tanh);
VKCNN_CHECK_NEURON(ABSOLUTE, absolute);
VKCNN_CHECK_NEURON(SOFTPLUS, softplus);
VKCNN_CHECK_NEURON(SOFTSIGN, softsign);
VKCNN_CHECK_NEURON(ELU, elu);
VKCNN_CHECK_NEURON(LEAKY_RELU, leakyRelu);
VKCNN_CHECK_NEURON(CLAMP, clamp);
VKCNN_CHECK_NEURON(POWER, power);
VKCNN_CHECK_NEURON(EXPONENTIAL, exponential);
VKCNN_CHECK_NEURON(LOGARITHM, logarithm);
VKCNN_CHECK_NEURON(HARD_SWISH, hardSwish);
VKCNN_CHECK_NEURON(GELU, gelu);
VKCNN_CHECK_NEURON(SELU, selu);
VKCNN_CHECK_NEURON(PRELU, prelu);
VKCNN_CHECK_NEURON(SILU, silu);
#undef VKCNN_CHECK_NEURON
static_assert(VKCNN_NEURON_COUNT == kNeuronTypeCount);

const char* toString(NeuronType type) {
  static const char* names[kNeuronTypeCount] = {
      "none",      "relu",      "linear", "sigmoid",   "hardSigmoid", "tanh",  "absolute",
      "softplus",  "softsign",  "elu",    "leakyRelu", "clamp",       "power", "exponential",
      "logarithm", "hardSwish", "gelu",   "selu",      "prelu",       "silu"};
  return uint32_t(type) < kNeuronTypeCount ? names[uint32_t(type)] : "unknown";
}

// The formulas of PyTorch's and onnxruntime's kernels, NaN and infinities included: NaN in gives
// NaN out, and inf * 0 or inf / inf where their formula has it (gelu, silu, hard-swish at -inf).
double applyNeuron(const NeuronDescriptor& n, double x, uint32_t channel) {
  const double a = n.a, b = n.b, c = n.c;
  switch (n.type) {
    case NeuronType::none:
      return x;
    case NeuronType::relu:
      return x < 0 ? 0 : x;  // NaN stays NaN, as in PyTorch (glsl/neuron.glsl)
    case NeuronType::linear:
      return a * x + b;
    case NeuronType::sigmoid:
      return 1 / (1 + std::exp(-x));
    case NeuronType::hardSigmoid:
      return std::clamp(a * x + b, 0.0, 1.0);
    case NeuronType::tanh:
      return a * std::tanh(b * x);
    case NeuronType::absolute:
      return std::abs(x);
    case NeuronType::softplus:
      return a * std::log1p(std::exp(b * x));
    case NeuronType::softsign:
      return x / (1 + std::abs(x));
    case NeuronType::elu:
      return x >= 0 ? x : a * (std::exp(x) - 1);
    case NeuronType::leakyRelu:
      return x >= 0 ? x : a * x;
    case NeuronType::clamp:
      return std::min(std::max(x, a), b);
    case NeuronType::power:
      return std::pow(a * x + b, c);
    case NeuronType::exponential:
      return c <= 0 ? std::exp(a * x + b) : std::pow(c, a * x + b);
    case NeuronType::logarithm:
      return c <= 0 ? std::log(a * x + b) : std::log(a * x + b) / std::log(c);
    case NeuronType::hardSwish:
      return x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
    case NeuronType::gelu:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case NeuronType::selu:
      return b * (x > 0 ? x : a * (std::exp(x) - 1));
    case NeuronType::prelu: {
      if (n.preluSlopes.empty()) return x;
      double slope = n.preluSlopes[std::min<size_t>(channel, n.preluSlopes.size() - 1)];
      return x >= 0 ? x : slope * x;
    }
    case NeuronType::silu:
      return x / (1 + std::exp(-x));
  }
  return x;
}

namespace detail {

void checkNeuron(const NeuronDescriptor& n, const std::string& what) {
  if (uint32_t(n.type) >= kNeuronTypeCount)
    throw Error(ErrorCode::invalidArgument,
                what + ": neuron type " + std::to_string(uint32_t(n.type)) + " does not exist");
  if (n.type == NeuronType::prelu && n.preluSlopes.empty())
    throw Error(ErrorCode::invalidArgument, what + ": a PReLU neuron needs at least one slope");
}

shader::NeuronParams neuronParams(const NeuronDescriptor& n) {
  shader::NeuronParams p{};
  p.type = int32_t(n.type);
  p.slopeCount = n.type == NeuronType::prelu ? int32_t(n.preluSlopes.size()) : 0;
  p.a = n.a;
  p.b = n.b;
  p.c = n.c;
  return p;
}

std::shared_ptr<DeviceBuffer> neuronSlopes(ContextImpl& context, const NeuronDescriptor& n,
                                           const std::string& label) {
  if (n.type != NeuronType::prelu) return context.emptyBuffer();
  return DeviceBuffer::create(context, n.preluSlopes.size() * sizeof(float), n.preluSlopes.data(),
                              label + " PReLU slopes");
}

}  // namespace detail

Neuron::Neuron(const Context& context, const NeuronDescriptor& neuron)
    : UnaryKernel(context, std::string("neuron ") + toString(neuron.type)), neuron_(neuron) {
  detail::checkNeuron(neuron_, "Neuron '" + label + "'");
  slopes_ = detail::neuronSlopes(*context_.impl(), neuron_, label);
}

void Neuron::validate(const detail::KernelEncoding& e) const {
  if (neuron_.type == NeuronType::prelu && neuron_.preluSlopes.size() != 1 &&
      neuron_.preluSlopes.size() < e.sourceChannels)
    throw Error(ErrorCode::invalidArgument,
                e.what() + ": " + std::to_string(neuron_.preluSlopes.size()) +
                    " PReLU slopes for " + std::to_string(e.sourceChannels) + " channels");
}

void Neuron::encodeKernel(detail::KernelEncoding& e) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::neuron,
                             detail::variantFor(e.destination), e.what());
  detail::shader::NeuronPush push{};
  const uint32_t slices = d.bindWindows(push, e);
  d.bindBuffer(2, std::static_pointer_cast<detail::DeviceBuffer>(slopes_));
  push.neuron = detail::neuronParams(neuron_);
  d.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

}  // namespace vkcnn
