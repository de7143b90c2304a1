#version 450
// Winograd F(4x4,3x3), the input transform (winograd.glsl): for every 4x4 block of destination
// pixels, the 6x6 source tile under its windows, V = B^T d B, written as 36 positions of a float32
// buffer [row][position][input slice] (vec4), rows = the round's blocks, image by image, row-major
// in the block grid. The per-position GEMMs (winograd_gemm.comp) read it.
//
// Push constants are the convolution family's: the source window, geometry.clip* = the block grid,
// geometry.offsetX/Y = where block (0, 0)'s window starts in the source (the padding folded in),
// geometry.imageCount = the round's images, convolution.inputChannelsPerGroup = S (input slices),
// convolution.kernelHeight = rows, convolution.kernelWidth = the buffer's first vec4,
// convolution.strideX / strideY / dilationX = the vec4 from one position / row / block of 128 rows
// to the next (as winograd_transform_output.glsl reads).
//
// One invocation per (row, slice), slices fastest: a warp's stores to each position are runs of S
// consecutive vec4.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#include "convolution_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 6, std430) writeonly buffer Transformed { vec4 transformed[]; };
// image_io.glsl's writeSlice names it; never written here, so reflection drops the binding.
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { ConvolutionPush pc; };

#include "image_io.glsl"
#include "winograd.glsl"

void main() {
  const Geometry g = pc.geometry;
  const int S = pc.convolution.inputChannelsPerGroup;
  const int rows = pc.convolution.kernelHeight, first = pc.convolution.kernelWidth;
  const int positionStride = pc.convolution.strideX, rowStride = pc.convolution.strideY;
  const int blockStride = pc.convolution.dilationX;
  const int i = int(gl_GlobalInvocationID.x);  // (row, slice)
  if (i >= rows * S) return;
  const int row = i / S, s = i - row * S;
  const int blocks = g.clipWidth * g.clipHeight;
  const int img = row / blocks, block = row - img * blocks;
  const ivec2 origin =
      ivec2(g.offsetX, g.offsetY) + 4 * ivec2(block % g.clipWidth, block / g.clipWidth);
  // Columns first (t[x][y] = (B^T d) along y), then rows.
  vec4 t[6][6];
  [[unroll]] for (int x = 0; x < 6; ++x) {
    vec4 column[6];
    [[unroll]] for (int y = 0; y < 6; ++y)
      column[y] = readChannels(uSource, pc.source, origin + ivec2(x, y), img, 4 * s);
    winogradInput(column);
    [[unroll]] for (int y = 0; y < 6; ++y) t[x][y] = column[y];
  }
  const int base = first + (row >> 7) * blockStride + (row & 127) * rowStride + s;
  [[unroll]] for (int y = 0; y < 6; ++y) {
    vec4 line[6];
    [[unroll]] for (int x = 0; x < 6; ++x) line[x] = t[x][y];
    winogradInput(line);
    [[unroll]] for (int x = 0; x < 6; ++x)
      transformed[base + (6 * y + x) * positionStride] = line[x];
  }
}
