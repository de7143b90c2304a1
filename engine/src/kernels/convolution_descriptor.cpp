// ConvolutionDescriptor's setters and the checks every convolution-family kernel runs on a
// descriptor, its weight counts and its source channel window before anything is made or
// recorded: each failure names the field and the values in the caller's terms.
#include <cmath>
#include <limits>

#include "kernels/convolution_state.h"
#include "kernels/kernel_encoding.h"
#include "kernels/neuron_params.h"

namespace vkcnn {

// ---- ConvolutionDescriptor ----------------------------------------------------------------------

ConvolutionDescriptor ConvolutionDescriptor::make(uint32_t kernelWidth, uint32_t kernelHeight,
                                                  uint32_t inputFeatureChannels,
                                                  uint32_t outputFeatureChannels,
                                                  const NeuronDescriptor& neuron) {
  ConvolutionDescriptor d;
  d.kernelWidth = kernelWidth;
  d.kernelHeight = kernelHeight;
  d.inputFeatureChannels = inputFeatureChannels;
  d.outputFeatureChannels = outputFeatureChannels;
  d.neuron = neuron;
  return d;
}

ConvolutionDescriptor ConvolutionDescriptor::depthwise(uint32_t kernelWidth, uint32_t kernelHeight,
                                                       uint32_t inputFeatureChannels,
                                                       uint32_t channelMultiplier,
                                                       const NeuronDescriptor& neuron) {
  ConvolutionDescriptor d = make(kernelWidth, kernelHeight, inputFeatureChannels,
                                 inputFeatureChannels * channelMultiplier, neuron);
  d.groups = inputFeatureChannels;
  return d;
}

void ConvolutionDescriptor::setBatchNormalizationParametersForInference(
    std::span<const float> mean, std::span<const float> variance, std::span<const float> gamma,
    std::span<const float> beta, float epsilon) {
  BatchNormalizationParameters p;
  p.mean.assign(mean.begin(), mean.end());
  p.variance.assign(variance.begin(), variance.end());
  p.gamma.assign(gamma.begin(), gamma.end());
  p.beta.assign(beta.begin(), beta.end());
  p.epsilon = epsilon;
  batchNormalization = std::move(p);
}

void ConvolutionDescriptor::setNeuronType(NeuronType type, float a, float b, float c) {
  if (type == NeuronType::prelu)
    throw Error(ErrorCode::invalidArgument,
                "ConvolutionDescriptor::setNeuronType: PReLU takes one slope per output channel; "
                "use setNeuronToPReLUWithParametersA");
  neuron = NeuronDescriptor::of(type, a, b, c);
}

void ConvolutionDescriptor::setNeuronToPReLUWithParametersA(std::span<const float> a) {
  neuron = NeuronDescriptor{NeuronType::prelu};
  neuron.preluSlopes.assign(a.begin(), a.end());
}

uint64_t ConvolutionDescriptor::weightCount() const {
  return groups ? uint64_t(outputFeatureChannels) * kernelHeight * kernelWidth *
                      (inputFeatureChannels / groups)
                : 0;
}

namespace detail {

namespace {

// The neuron, the batch normalisation and the source activation: counts that match the
// channels, values that stay finite.
void checkParameters(const ConvolutionDescriptor& d, const std::string& what) {
  checkNeuron(d.neuron, what);
  if (d.neuron.type == NeuronType::prelu)
    require(
        d.neuron.preluSlopes.size() == 1 || d.neuron.preluSlopes.size() == d.outputFeatureChannels,
        what + ": " + str(d.neuron.preluSlopes.size()) + " PReLU slopes for " +
            str(d.outputFeatureChannels) + " output feature channels (need 1 or one per channel)");
  if (d.batchNormalization) {
    const BatchNormalizationParameters& bn = *d.batchNormalization;
    auto checkCount = [&](const std::vector<float>& v, const char* name, bool optional) {
      require((optional && v.empty()) || v.size() == d.outputFeatureChannels,
              what + ": batch normalization " + name + " has " + str(v.size()) + " values for " +
                  str(d.outputFeatureChannels) + " output feature channels" +
                  (optional ? " (give one per channel, or none)" : ""));
    };
    checkCount(bn.mean, "mean", false);
    checkCount(bn.variance, "variance", false);
    checkCount(bn.gamma, "gamma", true);
    checkCount(bn.beta, "beta", true);
    for (size_t o = 0; o < bn.variance.size(); ++o)
      require(double(bn.variance[o]) + bn.epsilon > 0,
              what + ": batch normalization variance[" + str(o) + "] + epsilon is " +
                  std::to_string(double(bn.variance[o]) + bn.epsilon) + " (must be > 0)");
  }
  if (d.sourceActivation) {
    const SourceActivation& a = *d.sourceActivation;
    require(a.scale.size() == d.inputFeatureChannels && a.shift.size() == d.inputFeatureChannels,
            what + ": source activation has " + str(a.scale.size()) + " scales and " +
                str(a.shift.size()) + " shifts for " + str(d.inputFeatureChannels) +
                " input feature channels (need one of each per channel)");
    require(a.neuron == NeuronType::none || a.neuron == NeuronType::relu,
            what + ": source activation neuron " + toString(a.neuron) + " (must be none or relu)");
    for (size_t c = 0; c < a.scale.size(); ++c)
      require(std::isfinite(a.scale[c]) && std::isfinite(a.shift[c]),
              what + ": source activation scale or shift of channel " + str(c) + " is not finite");
  }
}

}  // namespace

// Everything about a descriptor that can be checked without weights.
void checkDescriptor(const ConvolutionDescriptor& d, const std::string& what) {
  require(d.kernelWidth > 0 && d.kernelHeight > 0,
          what + ": kernel size " + str(d.kernelWidth) + "x" + str(d.kernelHeight) +
              " (kernelWidth x kernelHeight) must be at least 1x1");
  require(d.inputFeatureChannels > 0, what + ": inputFeatureChannels is 0 (must be at least 1)");
  require(d.outputFeatureChannels > 0, what + ": outputFeatureChannels is 0 (must be at least 1)");
  require(d.strideInPixelsX > 0 && d.strideInPixelsY > 0,
          what + ": stride " + str(d.strideInPixelsX) + "x" + str(d.strideInPixelsY) +
              " (strideInPixelsX x strideInPixelsY) must be at least 1x1");
  require(d.dilationRateX > 0 && d.dilationRateY > 0,
          what + ": dilation rate " + str(d.dilationRateX) + "x" + str(d.dilationRateY) +
              " (dilationRateX x dilationRateY) must be at least 1x1");
  require(d.groups > 0, what + ": groups is 0 (must be at least 1)");
  require(d.inputFeatureChannels % d.groups == 0,
          what + ": inputFeatureChannels " + str(d.inputFeatureChannels) +
              " is not divisible by groups " + str(d.groups));
  require(d.outputFeatureChannels % d.groups == 0,
          what + ": outputFeatureChannels " + str(d.outputFeatureChannels) +
              " is not divisible by groups " + str(d.groups));
  // The shaders index with 32-bit ints.
  const uint64_t dilatedW = uint64_t(d.kernelWidth - 1) * d.dilationRateX + 1;
  const uint64_t dilatedH = uint64_t(d.kernelHeight - 1) * d.dilationRateY + 1;
  const uint64_t packed = (uint64_t(d.outputFeatureChannels) + 3) / 4 * 16 * d.kernelHeight *
                          d.kernelWidth * ((d.inputFeatureChannels / d.groups + 3) / 4);
  const uint64_t limit = uint64_t(std::numeric_limits<int32_t>::max());
  if (dilatedW > limit || dilatedH > limit || d.strideInPixelsX > limit ||
      d.strideInPixelsY > limit || packed > limit)
    throw Error(ErrorCode::limitExceeded,
                what + ": " + str(packed) + " packed weights, dilated kernel " + str(dilatedW) +
                    "x" + str(dilatedH) + ", stride " + str(d.strideInPixelsX) + "x" +
                    str(d.strideInPixelsY) + ": each must stay below " + str(limit));
  checkParameters(d, what);
}

void checkWeightCounts(const ConvolutionDescriptor& d, size_t weights, size_t bias,
                       const std::string& what) {
  require(weights == d.weightCount(),
          what + ": " + str(weights) + " weights given, the descriptor needs " +
              str(d.weightCount()) + " (outputFeatureChannels " + str(d.outputFeatureChannels) +
              " x kernelHeight " + str(d.kernelHeight) + " x kernelWidth " + str(d.kernelWidth) +
              " x inputFeatureChannels/groups " + str(d.inputFeatureChannels / d.groups) + ")");
  require(bias == 0 || bias == d.outputFeatureChannels,
          what + ": " + str(bias) + " bias values given for " + str(d.outputFeatureChannels) +
              " output feature channels (give one per channel, or none)");
}

std::string defaultLabel(const char* kind, const ConvolutionDescriptor& d) {
  return std::string(kind) + " " + str(d.kernelWidth) + "x" + str(d.kernelHeight) + " " +
         str(d.inputFeatureChannels) + "->" + str(d.outputFeatureChannels);
}

void checkSourceChannels(const KernelEncoding& e, const ConvolutionDescriptor& d) {
  require(e.sourceChannels == d.inputFeatureChannels,
          e.what() + ": the source channel window of '" + e.source.label() + "' holds " +
              str(e.sourceChannels) + " feature channels (sourceFeatureChannelOffset " +
              str(e.sourceChannelOffset) + ") but inputFeatureChannels is " +
              str(d.inputFeatureChannels));
}

}  // namespace detail
}  // namespace vkcnn
