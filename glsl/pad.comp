#version 450
// Spatial padding: constant, edge, reflect, wrap (see vkcnn/padding.h).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "elementwise_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { PadPush pc; };

#include "image_io.glsl"

// n mod d in [0, d). GLSL leaves % undefined for negative operands (NVIDIA and lavapipe differ),
// so negative n is folded onto non-negative operands first.
int positiveMod(int n, int d) {
  return n >= 0 ? n % d : (d - 1) - ((-n - 1) % d);
}

// The source index that shows at index s (possibly outside [0, size)) along one axis.
int padIndex(int s, int size) {
  switch (pc.mode) {
    case 1: return clamp(s, 0, size - 1);
    case 2: {
      // Mirror about the edge pixels, periodically so any distance stays inside.
      if (size == 1) return 0;
      int period = 2 * (size - 1);
      int m = positiveMod(s, period);
      return m < size ? m : period - m;
    }
    case 3: return positiveMod(s, size);
  }
  return s;
}

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  ivec2 dst = ivec2(g.clipX, g.clipY) + gid.xy;
  ivec2 s = gid.xy + ivec2(g.offsetX - pc.left, g.offsetY - pc.top);
  int c0 = firstChannelOfSlice(pc.destination, t);
  vec4 y;
  if (pc.mode == 0 && (any(lessThan(s, ivec2(0))) ||
                       any(greaterThanEqual(s, ivec2(pc.sourceWidth, pc.sourceHeight))))) {
    y = vec4(pc.value);
  } else {
    ivec2 p = ivec2(padIndex(s.x, pc.sourceWidth), padIndex(s.y, pc.sourceHeight));
    y = readChannels(uSource, pc.source, p, img, c0);
  }
  writeSlice(pc.destination, dst, img, t, y);
}
