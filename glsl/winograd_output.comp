#version 450
// Winograd F(4x4,3x3), the output transform (winograd.glsl): reads the 36 positions of one block's
// products from the float32 buffer winograd_gemm.comp wrote ([row][position][output slice], vec4),
// Y = A^T M A, and writes the 4x4 block through the convolution's epilogue (bias, residual,
// neuron: convolution_bindings.glsl).
//
// Push constants are the convolution family's: the destination window (starting at a layer: the
// host checks), geometry.clip* = the destination's clip rectangle, geometry.imageCount = the
// dispatch's images, geometry.slices = T (output slices), convolution.kernelHeight = rows (its
// blocks), convolution.kernelWidth = the buffer's first vec4.
//
// One invocation per (row, slice), slices fastest, as the products were written.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#define VKCNN_ALIGNED_DESTINATION
#include "convolution_bindings.glsl"
#include "winograd.glsl"

layout(set = 0, binding = 6, std430) readonly buffer Products { vec4 products[]; };

void main() {
  const Geometry g = pc.geometry;
  const int T = g.slices;
  const int rows = pc.convolution.kernelHeight, first = pc.convolution.kernelWidth;
  const int i = int(gl_GlobalInvocationID.x);
  if (i >= rows * T) return;
  const int row = i / T, t = i - row * T;
  const ivec2 grid = (ivec2(g.clipWidth, g.clipHeight) + 3) / 4;
  const int blocks = grid.x * grid.y;
  const int img = row / blocks, block = row - img * blocks;
  const ivec2 q0 = 4 * ivec2(block % grid.x, block / grid.x);
  // Columns first (r[x][y] = (A^T M) along y), then rows.
  vec4 r[6][4];
  [[unroll]] for (int x = 0; x < 6; ++x) {
    vec4 column[6];
    [[unroll]] for (int y = 0; y < 6; ++y)
      column[y] = products[first + (row * 36 + 6 * y + x) * T + t];
    vec4 y4[4];
    winogradOutput(column, y4);
    [[unroll]] for (int y = 0; y < 4; ++y) r[x][y] = y4[y];
  }
  // Lanes past the output channels compute a clamped channel; writeSlice drops them.
  const ivec4 oc = min(ivec4(4 * t) + ivec4(0, 1, 2, 3), pc.destination.featureChannels - 1);
  const vec4 biasValues = biasOf(oc);
  [[unroll]] for (int y = 0; y < 4; ++y) {
    vec4 line[6];
    [[unroll]] for (int x = 0; x < 6; ++x) line[x] = r[x][y];
    vec4 out4[4];
    winogradOutput(line, out4);
    [[unroll]] for (int x = 0; x < 4; ++x) {
      const ivec2 q = q0 + ivec2(x, y);
      if (q.x >= g.clipWidth || q.y >= g.clipHeight) continue;
      const ivec2 p = ivec2(g.clipX, g.clipY) + q;
      const vec4 residual = pc.neuron.residual != 0 ? residualOf(p, img, t) : vec4(0.0);
      writeSlice(pc.destination, p, img, t, convolutionOutputOf(oc, out4[x], residual, biasValues));
    }
  }
}
