#version 450
// Winograd F(2x2,3x3), the input transform for the matrix units (winograd.glsl): for every 2x2
// block of destination pixels, the 4x4 source tile under its windows, V = B^T d B, written in
// float16 as 16 positions of [row block][position][128 rows][K] (4 channels an element, K the
// input channels padded: those past the window's read zero), rows = the round's blocks, image by
// image, row-major in the block grid. winograd_matrix_gemm.comp reads it.
//
// A workgroup takes 8 x 4 blocks of 8 slices: it first reads their 18 x 10 source pixels of each
// slice into shared memory, neighbouring invocations along a row of one layer (an invocation per
// (block, slice) reading its own tile fetched 32 layers a warp instruction, and ran at 1.3 TB/s:
// bench/NOTES.md, 2026-11-27, session 23), then transforms one (block, slice) an invocation,
// slices fastest, so that a warp's stores to each position are runs of 64 bytes.
//
// Push constants are the convolution family's: the source window, geometry.clip* = the block grid,
// geometry.offsetX/Y = where block (0, 0)'s window starts in the source (the padding folded in),
// geometry.imageCount = the round's images, convolution.inputChannelsPerGroup = the slices written
// (a multiple of 8), convolution.kernelWidth = the buffer's first element (uvec2),
// convolution.strideX / strideY / dilationX = the elements from one position / row / block of 128
// rows to the next. Workgroups: (block columns / 8, block rows / 4, images x slices / 8).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "convolution_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 6, std430) writeonly buffer Transformed { uvec2 transformed[]; };
// image_io.glsl's writeSlice names it; never written here, so reflection drops the binding.
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { ConvolutionPush pc; };

#include "image_io.glsl"
#include "winograd.glsl"

const int BLOCKS_X = 8, BLOCKS_Y = 4, SLICES = 8;
const int PATCH_X = 2 * BLOCKS_X + 2, PATCH_Y = 2 * BLOCKS_Y + 2;
// A slice's pixels, padded by one vec4 so that the 8 slices of a quarter warp's reads fall in
// distinct banks.
const int PLANE = PATCH_X * PATCH_Y + 1;
shared vec4 pixels[SLICES * PLANE];

void main() {
  const Geometry g = pc.geometry;
  const int S = pc.convolution.inputChannelsPerGroup;
  const int first = pc.convolution.kernelWidth;
  const int positionStride = pc.convolution.strideX, rowStride = pc.convolution.strideY;
  const int blockStride = pc.convolution.dilationX;
  const int t = int(gl_LocalInvocationID.x);
  const int sliceGroups = S / SLICES;
  const int img = int(gl_WorkGroupID.z) / sliceGroups;
  const int s0 = (int(gl_WorkGroupID.z) - img * sliceGroups) * SLICES;
  const ivec2 b0 = ivec2(gl_WorkGroupID.xy) * ivec2(BLOCKS_X, BLOCKS_Y);
  const ivec2 origin = ivec2(g.offsetX, g.offsetY) + 2 * b0;
  for (int i = t; i < SLICES * PATCH_X * PATCH_Y; i += 256) {
    const int s = i / (PATCH_X * PATCH_Y), rest = i - s * (PATCH_X * PATCH_Y);
    const int y = rest / PATCH_X, x = rest - y * PATCH_X;
    pixels[s * PLANE + rest] =
        readChannels(uSource, pc.source, origin + ivec2(x, y), img, 4 * (s0 + s));
  }
  barrier();
  const int s = t % SLICES, b = t / SLICES;
  const ivec2 block = b0 + ivec2(b % BLOCKS_X, b / BLOCKS_X);
  if (block.x >= g.clipWidth || block.y >= g.clipHeight) return;
  const ivec2 local = 2 * ivec2(b % BLOCKS_X, b / BLOCKS_X);
  // Columns first (u[x][y] = (B^T d) along y), then rows.
  vec4 u[4][4];
  [[unroll]] for (int x = 0; x < 4; ++x) {
    vec4 column[4];
    [[unroll]] for (int y = 0; y < 4; ++y)
      column[y] = pixels[s * PLANE + (local.y + y) * PATCH_X + local.x + x];
    winogradInput(column);
    [[unroll]] for (int y = 0; y < 4; ++y) u[x][y] = column[y];
  }
  const int row = (img * g.clipHeight + block.y) * g.clipWidth + block.x;
  const int base = first + (row >> 7) * blockStride + (row & 127) * rowStride + s0 + s;
  [[unroll]] for (int y = 0; y < 4; ++y) {
    vec4 line[4];
    [[unroll]] for (int x = 0; x < 4; ++x) line[x] = u[x][y];
    winogradInput(line);
    [[unroll]] for (int x = 0; x < 4; ++x)
      transformed[base + (4 * y + x) * positionStride] =
          uvec2(packHalf2x16(line[x].xy), packHalf2x16(line[x].zw));
  }
}
