// Transposed convolution (MPSCNNConvolutionTranspose, ONNX ConvTranspose), with a fused neuron.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"

namespace vkcnn {

// Every field of ONNX ConvTranspose for 2D images. The output along one axis is
//   out[o] = sum over input i and tap k with o + padBegin = i * stride + k * dilation
//            of in[i] * w[k]   (+ bias, then the neuron),
// so a source of size `in` gives (in - 1) * stride - padBegin - padEnd + dilation * (k - 1) +
// outputPadding + 1 pixels. Weights are used as given: no 180-degree rotation (as in MPS).
//
// padding: Padding::explicitPadding(top, left, bottom, right) are ONNX's pads (cropping the full
// output); Padding::Mode::mpsDefault means no padding at all, i.e. (in - 1) * stride + dilated
// kernel + outputPadding pixels. ceilMode has no meaning here and is an error.
// outputPaddingX/Y add pixels at the right/bottom edge (ONNX output_padding); each must be smaller
// than the stride or the dilation of its axis (as PyTorch requires).
struct ConvolutionTransposeDescriptor {
  uint32_t kernelWidth = 1, kernelHeight = 1;         // taps, before dilation
  uint32_t inputFeatureChannels = 1;                  // per image; divisible by groups
  uint32_t outputFeatureChannels = 1;                 // per image; divisible by groups
  uint32_t strideInPixelsX = 1, strideInPixelsY = 1;  // ONNX strides
  uint32_t dilationRateX = 1, dilationRateY = 1;      // ONNX dilations
  uint32_t groups = 1;                                // ONNX group
  Padding padding;                                    // ONNX pads (the comment above)
  uint32_t outputPaddingX = 0, outputPaddingY = 0;    // ONNX output_padding
  NeuronDescriptor neuron;  // applied after the bias; PReLU: 1 or outputFeatureChannels slopes
};

// Geometry: destination pixel p inside clipRect holds output element (p - clipRect.origin) +
// offset * stride of the padded output above (MPS: the offset is in source pixels). offset.z and
// clipRect select the images, as for every kernel. The source channel window must hold exactly
// inputFeatureChannels channels; the kernel writes outputFeatureChannels channels at
// destinationFeatureChannelOffset (aligned or not).
class VKCNN_API ConvolutionTranspose : public UnaryKernel {
 public:
  // weights: float32, weight[outputFeatureChannels][kernelHeight][kernelWidth]
  //   [inputFeatureChannels / groups], where output channel o belongs to group
  //   o / (outputFeatureChannels / groups) and its inputs are that group's input channels.
  //   An ONNX ConvTranspose weight is [C_in][C_out / groups][kH][kW] and must be permuted first:
  //   convolutionTransposeWeightsFromOnnx does it.
  // bias: empty, or outputFeatureChannels values.
  // Both are copied at init.
  ConvolutionTranspose(const Context& context, const ConvolutionTransposeDescriptor& descriptor,
                       std::span<const float> weights, std::span<const float> bias = {});

  // As given at construction.
  const ConvolutionTransposeDescriptor& descriptor() const { return descriptor_; }
  // The padded output's size for a source of this size (the formula above).
  uint32_t destinationWidth(uint32_t sourceWidth) const override;
  uint32_t destinationHeight(uint32_t sourceHeight) const override;
  // destinationWidth (horizontal) or destinationHeight of a kernel of `descriptor`, without one
  // (the Graph's shapes before it makes the kernel); checks the descriptor. `what` names the
  // kernel in errors.
  static uint32_t destinationSize(const ConvolutionTransposeDescriptor& descriptor,
                                  uint32_t sourceSize, bool horizontal, const std::string& what);
  uint32_t destinationFeatureChannels(uint32_t) const override {
    return descriptor_.outputFeatureChannels;
  }

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  ConvolutionTransposeDescriptor descriptor_;
  std::shared_ptr<void> weights_, bias_, slopes_;  // device buffers
};

// Reorders an ONNX ConvTranspose weight [C_in][C_out / groups][kH][kW] into the order
// ConvolutionTranspose takes: [C_out][kH][kW][C_in / groups].
VKCNN_API std::vector<float> convolutionTransposeWeightsFromOnnx(
    const ConvolutionTransposeDescriptor& descriptor, std::span<const float> onnxWeights);

}  // namespace vkcnn
