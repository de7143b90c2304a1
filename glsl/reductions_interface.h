// Push-constant layouts of the channel and spatial reductions (softmax, local response
// normalisation, instance normalisation), shared by GLSL and C++: 4-byte members only.
#ifndef VKCNN_REDUCTIONS_INTERFACE_H
#define VKCNN_REDUCTIONS_INTERFACE_H

#include "interface.h"

#ifdef __cplusplus
namespace vkcnn::detail::shader {
#endif

// geometry.slices: destination layers per image (each invocation loops over all of them).
VKCNN_STRUCT(SoftmaxPush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  int_t logarithm;  // 1: log-softmax
  int_t pad0, pad1, pad2;
};

// Channel c sums the squares of window channels [c - before, c + after].
VKCNN_STRUCT(LrnPush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  int_t before, after;
  float_t alphaOverSize, beta, bias;
  int_t pad0, pad1, pad2;
};

// One workgroup per (destination layer, image): gl_WorkGroupID.x is the layer, .y the image.
VKCNN_STRUCT(InstanceNormPush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  NeuronParams neuron;
  float_t epsilon;
  int_t channels;  // gamma and beta each hold this many floats in the parameter buffer
  int_t pad0, pad1;
};

#ifdef __cplusplus
}  // namespace vkcnn::detail::shader
#endif

#endif
