// Winograd's input transform (winograd.glsl) for F(WINOGRAD_M x WINOGRAD_M, 3x3): for every
// block of WINOGRAD_M x WINOGRAD_M destination pixels, the source tile under its windows,
// V = B^T d B, written as (WINOGRAD_M + 2)^2 positions of a buffer, 4 input channels an element:
// vec4, or float16 where WINOGRAD_HALF_STORAGE is defined (uvec2, for the matrix units). Rows are
// the round's blocks, image by image, row-major in the block grid. The per-position GEMMs read it.
//
// Push constants are the convolution family's: the source window, geometry.clip* = the block grid,
// geometry.offsetX/Y = where block (0, 0)'s window starts in the source (the padding folded in),
// geometry.imageCount = the round's images, convolution.inputChannelsPerGroup = the slices written
// (those past the window's channels read zero), convolution.kernelHeight = rows,
// convolution.kernelWidth = the buffer's first element, convolution.strideX / strideY /
// dilationX = the elements from one position / row / block of 128 rows to the next.
//
// One invocation per (row, slice), slices fastest: a warp's stores to each position are runs of
// consecutive elements.
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#include "convolution_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
#ifdef WINOGRAD_HALF_STORAGE
layout(set = 0, binding = 6, std430) writeonly buffer Transformed { uvec2 transformed[]; };
#define WINOGRAD_STORE(i, v) transformed[i] = uvec2(packHalf2x16((v).xy), packHalf2x16((v).zw))
#else
layout(set = 0, binding = 6, std430) writeonly buffer Transformed { vec4 transformed[]; };
#define WINOGRAD_STORE(i, v) transformed[i] = (v)
#endif
// image_io.glsl's writeSlice names it; never written here, so reflection drops the binding.
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform image2DArray uDestination;
layout(push_constant) uniform Push { ConvolutionPush pc; };

#include "image_io.glsl"
#include "winograd.glsl"

const int TILE = WINOGRAD_M + 2;

void main() {
  const Geometry g = pc.geometry;
  const int S = pc.convolution.inputChannelsPerGroup;
  const int rows = pc.convolution.kernelHeight, first = pc.convolution.kernelWidth;
  const int positionStride = pc.convolution.strideX, rowStride = pc.convolution.strideY;
  const int blockStride = pc.convolution.dilationX;  // 128 rows
  const int i = int(gl_GlobalInvocationID.x);  // (row, slice)
  if (i >= rows * S) return;
  const int row = i / S, s = i - row * S;
  const int blocks = g.clipWidth * g.clipHeight;
  const int img = row / blocks, block = row - img * blocks;
  const ivec2 origin = ivec2(g.offsetX, g.offsetY) +
                       WINOGRAD_M * ivec2(block % g.clipWidth, block / g.clipWidth);
  // Columns first (t[x][y] = (B^T d) along y), then rows.
  vec4 t[TILE][TILE];
  [[unroll]] for (int x = 0; x < TILE; ++x) {
    vec4 column[TILE];
    [[unroll]] for (int y = 0; y < TILE; ++y)
      column[y] = readChannels(uSource, pc.source, origin + ivec2(x, y), img, 4 * s);
    winogradInput(column);
    [[unroll]] for (int y = 0; y < TILE; ++y) t[x][y] = column[y];
  }
  const int base = first + (row >> 7) * blockStride + (row & 127) * rowStride + s;
  [[unroll]] for (int y = 0; y < TILE; ++y) {
    vec4 line[TILE];
    [[unroll]] for (int x = 0; x < TILE; ++x) line[x] = t[x][y];
    winogradInput(line);
    [[unroll]] for (int x = 0; x < TILE; ++x)
      WINOGRAD_STORE(base + (TILE * y + x) * positionStride, line[x]);
  }
}
