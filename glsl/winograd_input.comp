#version 450
// Winograd F(2x2,3x3), the input transform: for every 2x2 block of destination pixels, the 4x4
// source tile under its windows, V = B^T d B, written as 16 positions x the input slices of a
// temporary image of ceil(clipWidth / 2) x ceil(clipHeight / 2) pixels, position-major (layer
// p * S + s of an image, S = input slices), so that the 16 per-position GEMMs run as one 16-group
// 1x1 convolution (convolution.cpp). B^T's coefficients are 0 and +-1: exact in float16 apart
// from the sums' rounding.
//
// Push constants are the convolution family's: the source window, the temporary (destination,
// whole layers), geometry.clip* = the tile grid, geometry.offsetX/Y = where tile (0, 0)'s window
// starts in the source (the padding folded in), convolution.inputChannelsPerGroup = S (slices).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "convolution_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform image2DArray uDestination;
layout(push_constant) uniform Push { ConvolutionPush pc; };

#include "image_io.glsl"

void main() {
  const ivec3 gid = ivec3(gl_GlobalInvocationID);
  const Geometry g = pc.geometry;
  const int S = pc.convolution.inputChannelsPerGroup;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * S) return;
  const int img = gid.z / S, s = gid.z % S;
  const ivec2 origin = ivec2(g.offsetX, g.offsetY) + 2 * gid.xy;
  // Rows first: r[i][j] = (B^T d)[i][j], then columns: V = r B.
  vec4 d[4][4];
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x)
      d[y][x] = readChannels(uSource, pc.source, origin + ivec2(x, y), img, 4 * s);
  vec4 r[4][4];
  for (int x = 0; x < 4; ++x) {
    r[0][x] = d[0][x] - d[2][x];
    r[1][x] = d[1][x] + d[2][x];
    r[2][x] = d[2][x] - d[1][x];
    r[3][x] = d[1][x] - d[3][x];
  }
  for (int i = 0; i < 4; ++i) {
    const vec4 v[4] = vec4[4](r[i][0] - r[i][2], r[i][1] + r[i][2], r[i][2] - r[i][1],
                              r[i][1] - r[i][3]);
    for (int j = 0; j < 4; ++j) writeSlice(pc.destination, gid.xy, img, (4 * i + j) * S + s, v[j]);
  }
}
