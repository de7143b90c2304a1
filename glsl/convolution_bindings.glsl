// The bindings and push constants of the convolution shaders (convolution.glsl,
// convolution_gemm.glsl, convolution_matrix.glsl), which one host class binds alike, and their
// common epilogue. VKCNN_WEIGHT_TYPE is the element type of the weight buffer (vec4 unless set).
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
layout(push_constant) uniform Push { ConvolutionPush pc; };

#include "image_io.glsl"
#include "neuron.glsl"

// Bias and the fused neuron for output channels `oc` (clamped into range by the caller).
vec4 convolutionOutput(ivec4 oc, vec4 sum) {
  vec4 y;
  for (int r = 0; r < 4; ++r) {
    const float slope =
        pc.neuron.slopeCount > 0 ? slopes[min(oc[r], pc.neuron.slopeCount - 1)] : 0.0;
    y[r] = applyNeuron(pc.neuron, sum[r] + bias[oc[r]], slope);
  }
  return y;
}

#endif
