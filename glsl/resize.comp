#version 450
// Nearest and bilinear resize; reads clamp to the source's edge (see vkcnn/resize.h).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "elementwise_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { ResizePush pc; };

#include "image_io.glsl"

// Division rounding towards -infinity (GLSL's rounds towards zero); d > 0.
int floorDiv(int n, int d) { return n >= 0 ? n / d : -((d - 1 - n) / d); }
int ceilDiv(int n, int d) { return -floorDiv(-n, d); }

// The source pixel nearest to output coordinate u: the source coordinate is exactly n / d.
int nearestIndex(ResizeAxis axis, int u) {
  int n = axis.a * u + axis.b;
  int d = axis.d;
  int i;
  switch (pc.nearestMode) {
    case 0: i = ceilDiv(2 * n - d, 2 * d); break;   // round_prefer_floor: ceil(x - 1/2)
    case 1: i = floorDiv(2 * n + d, 2 * d); break;  // round_prefer_ceil: floor(x + 1/2)
    case 2: i = floorDiv(n, d); break;
    default: i = ceilDiv(n, d); break;
  }
  return clamp(i, 0, axis.size - 1);
}

// Bilinear taps along one axis: the two clamped indices and the weight of the second.
ivec2 linearTaps(ResizeAxis axis, int u, out float t) {
  int n = axis.a * u + axis.b;
  int i = floorDiv(n, axis.d);
  t = float(n - i * axis.d) / float(axis.d);
  return clamp(ivec2(i, i + 1), 0, axis.size - 1);
}

// a * (1 - t) + b * t, PyTorch's and onnxruntime's weighting: mix() may compute a + t * (b - a),
// which turns two equal infinities into inf - inf = NaN (NaN still spreads through a zero weight,
// as in those kernels).
vec4 lerp(vec4 a, vec4 b, float t) { return a * (1.0 - t) + b * t; }

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  ivec2 dst = ivec2(g.clipX, g.clipY) + gid.xy;
  ivec2 u = gid.xy + ivec2(g.offsetX, g.offsetY);
  int c0 = firstChannelOfSlice(pc.destination, t);
  vec4 y;
  if (pc.mode == 0) {
    ivec2 p = ivec2(nearestIndex(pc.x, u.x), nearestIndex(pc.y, u.y));
    y = readChannels(uSource, pc.source, p, img, c0);
  } else {
    float tx, ty;
    ivec2 xs = linearTaps(pc.x, u.x, tx);
    ivec2 ys = linearTaps(pc.y, u.y, ty);
    vec4 top = lerp(readChannels(uSource, pc.source, ivec2(xs.x, ys.x), img, c0),
                    readChannels(uSource, pc.source, ivec2(xs.y, ys.x), img, c0), tx);
    vec4 bottom = lerp(readChannels(uSource, pc.source, ivec2(xs.x, ys.y), img, c0),
                       readChannels(uSource, pc.source, ivec2(xs.y, ys.y), img, c0), tx);
    y = lerp(top, bottom, ty);
  }
  writeSlice(pc.destination, dst, img, t, y);
}
