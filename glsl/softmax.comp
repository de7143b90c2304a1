#version 450
// Softmax and log-softmax across the feature channels of each pixel (MPSCNNSoftMax,
// MPSCNNLogSoftMax). One invocation owns one pixel of one image: it needs every channel of the
// window before it can write any, so it reads the window twice (max, then the sum of
// exponentials) and writes every destination layer of that pixel.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "reductions_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { SoftmaxPush pc; };

#include "image_io.glsl"
#include "nan.glsl"

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount) return;
  int img = gid.z;
  ivec2 dst = ivec2(g.clipX, g.clipY) + gid.xy;
  ivec2 src = gid.xy + ivec2(g.offsetX, g.offsetY);
  int channels = pc.source.featureChannels;

  // Subtracting the maximum keeps exp() finite for any logits; lanes past the window stay out.
  // A NaN maximum (nan.glsl) makes every output NaN, and a +inf one gives exp(inf - inf), as
  // PyTorch's softmax does; all -inf gives 0 / 0.
  float m = -3.402823466e38;
  for (int c = 0; c < channels; c += 4) {
    vec4 x = readChannels(uSource, pc.source, src, img, c);
    for (int k = 0; k < 4; ++k)
      if (c + k < channels) m = nanMax(m, x[k]);
  }
  float sum = 0.0;
  for (int c = 0; c < channels; c += 4) {
    vec4 x = readChannels(uSource, pc.source, src, img, c);
    for (int k = 0; k < 4; ++k)
      if (c + k < channels) sum += exp(x[k] - m);
  }
  // sum >= 1 for finite logits: the maximum contributes exp(0).
  float logSum = log(sum);
  float inverseSum = 1.0 / sum;

  for (int t = 0; t < g.slices; ++t) {
    int c0 = firstChannelOfSlice(pc.destination, t);
    vec4 x = readChannels(uSource, pc.source, src, img, c0);
    vec4 y = pc.logarithm != 0 ? x - m - logSum : exp(x - m) * inverseSum;
    writeSlice(pc.destination, dst, img, t, y);
  }
}
