#version 450
// Windowed max and average pooling: one invocation per destination pixel and slice.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "pooling_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { PoolingPush pc; };

#include "image_io.glsl"
#include "nan.glsl"

// Taps k in [0, kernel) with lo <= start + k * dilation < hi.
int tapsWithin(int start, int kernel, int dilation, int lo, int hi) {
  int n = 0;
  for (int k = 0; k < kernel; ++k) {
    int at = start + k * dilation;
    n += (at >= lo && at < hi) ? 1 : 0;
  }
  return n;
}

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  PoolingParams P = pc.pooling;
  ivec2 start = gid.xy * ivec2(P.strideX, P.strideY) + ivec2(g.offsetX, g.offsetY);
  ivec2 size = textureSize(uSource, 0).xy;
  int c0 = firstChannelOfSlice(pc.destination, t);

  // Padded positions are skipped, never read: max pooling must not see them as zeros.
  vec4 largest = vec4(uintBitsToFloat(0xff800000u));
  vec4 sum = vec4(0.0);
  bool seen = false;
  for (int ky = 0; ky < P.kernelY; ++ky) {
    int y = start.y + ky * P.dilationY;
    if (y < 0 || y >= size.y) continue;
    for (int kx = 0; kx < P.kernelX; ++kx) {
      int x = start.x + kx * P.dilationX;
      if (x < 0 || x >= size.x) continue;
      vec4 v = readChannels(uSource, pc.source, ivec2(x, y), img, c0);
      largest = nanMax(largest, v);  // a NaN in the window is the result, as in PyTorch
      sum += v;
      seen = true;
    }
  }
  vec4 result = vec4(0.0);
  if (P.average != 0) {
    int count = tapsWithin(start.x, P.kernelX, P.dilationX, P.countLoX, P.countHiX) *
                tapsWithin(start.y, P.kernelY, P.dilationY, P.countLoY, P.countHiY);
    if (count > 0) result = sum / float(count);
  } else if (seen) {
    result = largest;
  }
  writeSlice(pc.destination, ivec2(g.clipX, g.clipY) + gid.xy, img, t, result);
}
