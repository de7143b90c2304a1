// Squeeze-and-excitation (Hu et al.; torchvision's SqueezeExcitation in EfficientNet,
// MobileNetV3 and RegNetY): after a global average pool has reduced x to one mean per image and
// channel (GlobalPoolingAverage),
//
//   y[n, c, h, w] = x[n, c, h, w] * gate(fc2(inner(fc1(mean[n]))))[c]
//
// with fc1: C -> R and fc2: R -> C fully-connected layers (1x1 convolutions on the pooled map).
// One dispatch: each workgroup recomputes the small MLP from the means and scales its share of
// the map, so a block costs the pool and this kernel instead of five kernels.
//
// A BinaryKernel: the primary source is x, the secondary the means (a 1x1 image of the primary's
// channel window, the images paired as in Arithmetic). The destination has the primary window's
// shape. Weights in MPS order: fc1 [R][C], fc2 [C][R] (a 1x1 convolution's
// weight[out][1][1][in]); biases may be empty (zero). The neurons may be any but PReLU and the
// three that take a third parameter c (power, exponential, logarithm). C <= 4096, R <= 1024.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"

namespace vkcnn {

// The block's sizes and neurons (the weights go to the constructor).
struct SqueezeExcitationDescriptor {
  uint32_t featureChannels = 0;                                       // C
  uint32_t reducedChannels = 0;                                       // R
  NeuronDescriptor inner = NeuronDescriptor::relu();                  // after fc1
  NeuronDescriptor gate = NeuronDescriptor::of(NeuronType::sigmoid);  // after fc2
};

// The whole block after its pool in one dispatch: x times the gate of the MLP of its means.
class VKCNN_API SqueezeExcitation : public BinaryKernel {
 public:
  // The largest C and R the kernel takes (a larger one is an invalidArgument Error).
  static constexpr uint32_t kMaxFeatureChannels = 4096, kMaxReducedChannels = 1024;
  // Every workgroup recomputes the MLP from the means: the Graph fuses blocks of at most this
  // many fc1 weights (C x R), where that is cheaper than the dispatches it saves.
  static constexpr uint32_t kFusedWeightLimit = 16384;

  // Weights copied to the device.
  SqueezeExcitation(const Context& context, const SqueezeExcitationDescriptor& descriptor,
                    const std::vector<float>& fc1Weights, const std::vector<float>& fc1Bias,
                    const std::vector<float>& fc2Weights, const std::vector<float>& fc2Bias);

  // As given at construction.
  const SqueezeExcitationDescriptor& descriptor() const { return descriptor_; }

 protected:
  void validate(const detail::BinaryKernelEncoding& encoding) const override;
  void encodeKernel(detail::BinaryKernelEncoding& encoding) override;

 private:
  SqueezeExcitationDescriptor descriptor_;
  std::shared_ptr<void> weights_;  // device buffer: fc1, its bias, fc2 transposed, its bias
};

}  // namespace vkcnn
