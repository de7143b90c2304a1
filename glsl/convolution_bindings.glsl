// The bindings and push constants of the convolution shaders (convolution.glsl,
// convolution_gemm.glsl, convolution_matrix.glsl, depthwise_convolution.comp), which one host class
// binds alike, and their common epilogue. VKCNN_WEIGHT_TYPE is the element type of the weight
// buffer (vec4 unless set).
#ifndef VKCNN_CONVOLUTION_BINDINGS_GLSL
#define VKCNN_CONVOLUTION_BINDINGS_GLSL

#include "convolution_interface.h"

#ifndef VKCNN_WEIGHT_TYPE
#define VKCNN_WEIGHT_TYPE vec4
#endif

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform image2DArray uDestination;
layout(set = 0, binding = 2, std430) readonly buffer Weights { VKCNN_WEIGHT_TYPE weights[]; };
layout(set = 0, binding = 3, std430) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 4, std430) readonly buffer Slopes { float slopes[]; };
#define VKCNN_NEURON_SLOPES
// Added before the neuron when pc.neuron.residual is set (a residual block's shortcut); the host
// binds the source here otherwise.
layout(set = 0, binding = 5) uniform sampler2DArray uResidual;
layout(push_constant) uniform Push { ConvolutionPush pc; };

#include "image_io.glsl"
#include "neuron.glsl"
#include "slice_product.glsl"

// The residual's channels for destination layer t of image img at pixel p: its pixel, image and
// window channel are the destination's. Shaders that only write destinations starting at a layer
// (VKCNN_ALIGNED_DESTINATION) read one texel: the residual view starts at a layer too (views
// always do), so its layer t holds the same channels, and lanes past the window, which may hold
// anything, are dropped by writeSlice.
vec4 residualOf(ivec2 p, int img, int t) {
#ifdef VKCNN_ALIGNED_DESTINATION
  return texelFetch(uResidual, ivec3(p, img * pc.neuron.residualLayersPerImage + t), 0);
#else
  const ImageView residual = ImageView(pc.neuron.residualLayersPerImage,
                                       pc.destination.featureChannels,
                                       pc.neuron.residualChannelShift, 0);
  return readChannels(uResidual, residual, p, img, firstChannelOfSlice(pc.destination, t));
#endif
}

vec4 biasOf(ivec4 oc) { return vec4(bias[oc.x], bias[oc.y], bias[oc.z], bias[oc.w]); }

// convolutionOutput with the residual texel and the bias already read (residual unused unless
// pc.neuron.residual is set).
vec4 convolutionOutputOf(ivec4 oc, vec4 sum, vec4 residual, vec4 biasValues) {
  if (pc.neuron.residual != 0) sum += residual;
  return applyNeuron4(pc.neuron, sum + biasValues, neuronSlopes(oc, pc.neuron.slopeCount));
}

// What destination layer t of image img holds at pixel p for the accumulated `sum` of output
// channels `oc` (clamped into range by the caller): bias, the residual, then the fused neuron.
vec4 convolutionOutput(ivec2 p, int img, int t, ivec4 oc, vec4 sum) {
  const vec4 residual = pc.neuron.residual != 0 ? residualOf(p, img, t) : vec4(0.0);
  return convolutionOutputOf(oc, sum, residual, biasOf(oc));
}

#endif
