// Push-constant layout of the transposed convolution, shared by GLSL and C++ (4-byte members only).
#ifndef VKCNN_CONVOLUTION_TRANSPOSE_INTERFACE_H
#define VKCNN_CONVOLUTION_TRANSPOSE_INTERFACE_H

#include "interface.h"

#ifdef __cplusplus
namespace vkcnn::detail::shader {
#endif

// Destination pixel p holds the output element at position q = (p - clip) + geometry.offset of
// the transposed convolution's padded output, where the host folds offset * stride + padding
// begin into geometry.offset. Input pixel i feeds q through tap k when q - k * dilation =
// i * stride.
VKCNN_STRUCT(ConvolutionTransposeParams) {
  int_t kernelX, kernelY, strideX, strideY;
  int_t dilationX, dilationY;
  int_t inputsPerGroup;   // input channels of a group
  int_t outputsPerGroup;  // output channels of a group
};

// 128 bytes: the smallest push-constant limit devices have. Bias and PReLU slopes live in buffers.
VKCNN_STRUCT(ConvolutionTransposePush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  ConvolutionTransposeParams convolution;
  NeuronParams neuron;
};

#ifdef __cplusplus
}  // namespace vkcnn::detail::shader
#endif

#endif
