#version 450
// Local response normalisation across channels (ONNX LRN, MPSCNNCrossChannelNormalization):
// y[c] = x[c] / (bias + alphaOverSize * sum_{c' in [c - before, c + after]} x[c']^2)^beta.
// One invocation per destination layer of one pixel of one image.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "reductions_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { LrnPush pc; };

#include "image_io.glsl"

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  ivec2 dst = ivec2(g.clipX, g.clipY) + gid.xy;
  ivec2 src = gid.xy + ivec2(g.offsetX, g.offsetY);
  int c0 = firstChannelOfSlice(pc.destination, t);

  // The four outputs share most of their windows: read each channel of the union once. Channels
  // outside the source window are zero, so the loop skips them (and a huge size costs nothing).
  int first = max(c0 - pc.before, 0);
  int last = min(c0 + 3 + pc.after, pc.source.featureChannels - 1);
  vec4 squares = vec4(0.0);
  for (int c = first; c <= last; ++c) {
    float x = readChannel(uSource, pc.source, src, img, c);
    float x2 = x * x;
    for (int k = 0; k < 4; ++k)
      if (c >= c0 + k - pc.before && c <= c0 + k + pc.after) squares[k] += x2;
  }
  vec4 x = readChannels(uSource, pc.source, src, img, c0);
  vec4 base = vec4(pc.bias) + pc.alphaOverSize * squares;
  // base^-beta, NaN for a NaN base (a NaN in the window): GLSL leaves log2/pow of NaN undefined,
  // and lavapipe's gives a finite number. An infinite base gives 0, as x / inf^beta does.
  vec4 scale = mix(exp2(-pc.beta * log2(base)), base, isnan(base));
  writeSlice(pc.destination, dst, img, t, x * scale);
}
