#version 450
// Winograd F(2x2,3x3), the output transform: reads the 16 positions x output slices that the
// per-position GEMMs left in a temporary image (layer p * T + t of an image, T = output slices,
// one pixel per 2x2 block of destination pixels), Y = A^T M A, and writes the block through the
// convolution's epilogue (bias, residual, neuron: convolution_bindings.glsl). A^T's
// coefficients are 0 and +-1.
//
// Push constants are the convolution family's: the temporary (source, whole layers), the
// destination window (starting at a layer: the host checks), geometry.clip* = the destination's
// clip rectangle, geometry.slices = T.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#define VKCNN_ALIGNED_DESTINATION
#include "convolution_bindings.glsl"

void main() {
  const ivec3 gid = ivec3(gl_GlobalInvocationID);
  const Geometry g = pc.geometry;
  const int T = g.slices;
  const ivec2 tiles = (ivec2(g.clipWidth, g.clipHeight) + 1) / 2;
  if (gid.x >= tiles.x || gid.y >= tiles.y || gid.z >= g.imageCount * T) return;
  const int img = gid.z / T, t = gid.z % T;
  const int base = img * pc.source.layersPerImage + t;
  // Rows of A^T M first (2 x 4), then columns: Y = (A^T M) A.
  vec4 r[2][4];
  for (int x = 0; x < 4; ++x) {
    const vec4 m0 = texelFetch(uSource, ivec3(gid.xy, base + (0 + x) * T), 0);
    const vec4 m1 = texelFetch(uSource, ivec3(gid.xy, base + (4 + x) * T), 0);
    const vec4 m2 = texelFetch(uSource, ivec3(gid.xy, base + (8 + x) * T), 0);
    const vec4 m3 = texelFetch(uSource, ivec3(gid.xy, base + (12 + x) * T), 0);
    r[0][x] = m0 + m1 + m2;
    r[1][x] = m1 - m2 - m3;
  }
  const ivec4 oc = min(ivec4(4 * t) + ivec4(0, 1, 2, 3), pc.destination.featureChannels - 1);
  for (int i = 0; i < 2; ++i) {
    const vec4 y[2] = vec4[2](r[i][0] + r[i][1] + r[i][2], r[i][1] - r[i][2] - r[i][3]);
    for (int j = 0; j < 2; ++j) {
      const ivec2 q = 2 * gid.xy + ivec2(j, i);
      if (q.x >= g.clipWidth || q.y >= g.clipHeight) continue;
      const ivec2 p = ivec2(g.clipX, g.clipY) + q;
      writeSlice(pc.destination, p, img, t, convolutionOutput(p, img, t, oc, y[j]));
    }
  }
}
