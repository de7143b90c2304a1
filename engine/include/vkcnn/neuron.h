// Neurons (activation functions): standalone as a kernel, or fused into convolution, depthwise and
// element-wise kernels, where they apply after the bias (and folded batch normalisation).
#pragma once

#include <cstdint>
#include <vector>

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"

namespace vkcnn {

// f(x) with parameters a, b, c.
enum class NeuronType : uint32_t {
  none = 0,          // x
  relu = 1,          // max(x, 0)
  linear = 2,        // a*x + b
  sigmoid = 3,       // 1 / (1 + exp(-x))
  hardSigmoid = 4,   // clamp(a*x + b, 0, 1)
  tanh = 5,          // a * tanh(b*x)
  absolute = 6,      // |x|
  softplus = 7,      // a * log(1 + exp(b*x))
  softsign = 8,      // x / (1 + |x|)
  elu = 9,           // x >= 0 ? x : a * (exp(x) - 1)
  leakyRelu = 10,    // x >= 0 ? x : a*x
  clamp = 11,        // min(max(x, a), b); ReLU6 is clamp(0, 6)
  power = 12,        // (a*x + b) ^ c
  exponential = 13,  // c ^ (a*x + b); c <= 0 means e
  logarithm = 14,    // log_c(a*x + b); c <= 0 means natural
  hardSwish = 15,    // x * clamp(x/6 + 1/2, 0, 1)
  gelu = 16,         // x/2 * (1 + erf(x / sqrt(2)))
  selu = 17,         // b * (x > 0 ? x : a * (exp(x) - 1))
  prelu = 18,        // x >= 0 ? x : a[channel] * x, one a per channel
  silu = 19,         // x * sigmoid(x) (swish; ONNX exports it as Mul(x, Sigmoid(x)))
};
inline constexpr uint32_t kNeuronTypeCount = 20;  // NeuronType's values are 0 to this - 1

// The type's name as the enum spells it ("relu", "hardSigmoid", ...).
VKCNN_API const char* toString(NeuronType type);

// A neuron: its type and parameters (NeuronType says what a, b and c mean for each), fused into
// kernels or run as a Neuron layer.
struct NeuronDescriptor {
  NeuronType type = NeuronType::none;  // none: the identity
  float a = 0, b = 0, c = 0;           // the type's parameters
  std::vector<float> preluSlopes;      // prelu: one per channel (a single value applies to all)

  // Shorthands: max(x, 0); clamp(x, 0, 6); any type with its parameters.
  static NeuronDescriptor relu() { return {NeuronType::relu}; }
  static NeuronDescriptor relu6() { return {NeuronType::clamp, 0.f, 6.f}; }
  static NeuronDescriptor of(NeuronType type, float a = 0, float b = 0, float c = 0) {
    return {type, a, b, c, {}};
  }
};

// Double-precision reference of one neuron, used by tests and host-side folding.
VKCNN_API double applyNeuron(const NeuronDescriptor& neuron, double x, uint32_t channel);

// A standalone neuron layer (MPSCNNNeuron). Also the copy kernel: NeuronType::none moves a channel
// window into a destination at destinationFeatureChannelOffset (concatenation).
class VKCNN_API Neuron : public UnaryKernel {
 public:
  // PReLU slopes are copied to the device.
  Neuron(const Context& context, const NeuronDescriptor& neuron);
  // As given at construction.
  const NeuronDescriptor& neuron() const { return neuron_; }

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  NeuronDescriptor neuron_;
  std::shared_ptr<void> slopes_;  // device buffer of PReLU slopes
};

}  // namespace vkcnn
