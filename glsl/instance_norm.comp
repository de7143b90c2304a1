#version 450
// Instance normalisation (ONNX InstanceNormalization, MPSCNNInstanceNormalization) with an
// optional fused neuron, in one dispatch: one workgroup owns one destination layer (4 channels) of
// one image, reduces the statistics of those channels over the whole source image in shared
// memory, then writes the normalised layer.
//
// Accuracy: values offset far from zero (x = 100 + u) lose the small u in float32 sums and in
// E[x^2] - E[x]^2. So the reduction works on x - K, K the channel's value at pixel (0, 0) (exact
// for nearby values), takes the mean d of x - K, then the variance from a second pass over
// (x - K) - d (with the usual correction term), and normalises (x - K) - d: the mean is never
// rounded to a float of x's magnitude.
#extension GL_GOOGLE_include_directive : require

#define GROUP_SIZE 256
layout(local_size_x = GROUP_SIZE, local_size_y = 1, local_size_z = 1) in;

#include "reductions_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
// gamma[channels] then beta[channels], over the source window's channels.
layout(set = 0, binding = 2, std430) readonly buffer Parameters { float parameters[]; };
layout(set = 0, binding = 3, std430) readonly buffer Slopes { float slopes[]; };
#define VKCNN_NEURON_SLOPES
layout(push_constant) uniform Push { InstanceNormPush pc; };

#include "image_io.glsl"
#include "neuron.glsl"

shared vec4 partial[GROUP_SIZE];

// Sum of `value` over the workgroup; every invocation gets the result.
vec4 groupSum(vec4 value) {
  uint i = gl_LocalInvocationID.x;
  partial[i] = value;
  barrier();
  for (uint stride = GROUP_SIZE / 2; stride > 0; stride >>= 1) {
    if (i < stride) partial[i] += partial[i + stride];
    barrier();
  }
  vec4 total = partial[0];
  // partial[] is reused by the next call.
  barrier();
  return total;
}

void main() {
  Geometry g = pc.geometry;
  int t = int(gl_WorkGroupID.x);
  int img = int(gl_WorkGroupID.y);
  int local = int(gl_LocalInvocationID.x);
  int c0 = firstChannelOfSlice(pc.destination, t);

  ivec2 size = textureSize(uSource, 0).xy;
  int pixels = size.x * size.y;
  vec4 pivot = readChannels(uSource, pc.source, ivec2(0), img, c0);

  vec4 shifted = vec4(0.0);
  for (int i = local; i < pixels; i += GROUP_SIZE)
    shifted += readChannels(uSource, pc.source, ivec2(i % size.x, i / size.x), img, c0) - pivot;
  vec4 meanShift = groupSum(shifted) / float(pixels);

  vec4 deviation = vec4(0.0), squares = vec4(0.0);
  for (int i = local; i < pixels; i += GROUP_SIZE) {
    vec4 e = (readChannels(uSource, pc.source, ivec2(i % size.x, i / size.x), img, c0) - pivot) -
             meanShift;
    deviation += e;
    squares += e * e;
  }
  vec4 sumE = groupSum(deviation);
  // Rounding can leave a tiny negative variance; a NaN one (infinities in the image) must stay NaN,
  // which GLSL's max may not keep (nan.glsl).
  vec4 variance = (groupSum(squares) - sumE * sumE / float(pixels)) / float(pixels);
  variance = nanMax(variance, vec4(0.0));

  vec4 scale, shift;
  vec4 inverseDeviation = inversesqrt(variance + pc.epsilon);
  for (int k = 0; k < 4; ++k) {
    int c = clamp(c0 + k, 0, pc.channels - 1);
    scale[k] = parameters[c] * inverseDeviation[k];
    shift[k] = parameters[pc.channels + c];
  }
  const vec4 slope = neuronSlopes(ivec4(c0) + ivec4(0, 1, 2, 3), pc.neuron.slopeCount);

  // Statistics come from the whole source image; the clip and offset only place what is written,
  // so a clipped encode writes a tile of the unclipped result.
  int clipPixels = g.clipWidth * g.clipHeight;
  for (int i = local; i < clipPixels; i += GROUP_SIZE) {
    ivec2 p = ivec2(i % g.clipWidth, i / g.clipWidth);
    vec4 x = readChannels(uSource, pc.source, p + ivec2(g.offsetX, g.offsetY), img, c0);
    vec4 y = ((x - pivot) - meanShift) * scale + shift;
    writeSlice(pc.destination, ivec2(g.clipX, g.clipY) + p, img, t,
               applyNeuron4(pc.neuron, y, slope));
  }
}
