// Winograd's output transform (winograd.glsl) for F(WINOGRAD_M x WINOGRAD_M, 3x3): reads the
// (WINOGRAD_M + 2)^2 positions of one block's products from the float32 buffer the per-position
// GEMMs wrote (vec4, 4 output channels an element), Y = A^T M A, and writes the block through the
// convolution's epilogue (bias, residual, neuron: convolution_bindings.glsl).
//
// Push constants are the convolution family's: the destination window (starting at a layer: the
// host checks), geometry.clip* = the destination's clip rectangle, geometry.imageCount = the
// dispatch's images, geometry.slices = T (output slices), convolution.kernelHeight = rows (its
// blocks), convolution.kernelWidth = the buffer's first vec4, convolution.strideX / strideY /
// dilationX = the vec4 from one position / row / block of 128 rows to the next.
//
// One invocation per (row, slice), slices fastest, as the products were written.
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#define VKCNN_ALIGNED_DESTINATION
#include "convolution_bindings.glsl"
#include "winograd.glsl"

layout(set = 0, binding = 6, std430) readonly buffer Products { vec4 products[]; };

const int TILE = WINOGRAD_M + 2;

void main() {
  const Geometry g = pc.geometry;
  const int T = g.slices;
  const int rows = pc.convolution.kernelHeight, first = pc.convolution.kernelWidth;
  const int positionStride = pc.convolution.strideX, rowStride = pc.convolution.strideY;
  const int blockStride = pc.convolution.dilationX;  // 128 rows
  const int i = int(gl_GlobalInvocationID.x);
  if (i >= rows * T) return;
  const int row = i / T, t = i - row * T;
  const ivec2 grid = (ivec2(g.clipWidth, g.clipHeight) + WINOGRAD_M - 1) / WINOGRAD_M;
  const int blocks = grid.x * grid.y;
  const int img = row / blocks, block = row - img * blocks;
  const ivec2 q0 = WINOGRAD_M * ivec2(block % grid.x, block / grid.x);
  const int base = first + (row >> 7) * blockStride + (row & 127) * rowStride + t;
  // Columns first (r[x][y] = (A^T M) along y), then rows.
  vec4 r[TILE][WINOGRAD_M];
  [[unroll]] for (int x = 0; x < TILE; ++x) {
    vec4 column[TILE];
    [[unroll]] for (int y = 0; y < TILE; ++y)
      column[y] = products[base + (TILE * y + x) * positionStride];
    vec4 ym[WINOGRAD_M];
    winogradOutput(column, ym);
    [[unroll]] for (int y = 0; y < WINOGRAD_M; ++y) r[x][y] = ym[y];
  }
  // Lanes past the output channels compute a clamped channel; writeSlice drops them.
  const ivec4 oc = min(ivec4(4 * t) + ivec4(0, 1, 2, 3), pc.destination.featureChannels - 1);
  const vec4 biasValues = biasOf(oc);
  [[unroll]] for (int y = 0; y < WINOGRAD_M; ++y) {
    vec4 line[TILE];
    [[unroll]] for (int x = 0; x < TILE; ++x) line[x] = r[x][y];
    vec4 out4[WINOGRAD_M];
    winogradOutput(line, out4);
    [[unroll]] for (int x = 0; x < WINOGRAD_M; ++x) {
      const ivec2 q = q0 + ivec2(x, y);
      if (q.x >= g.clipWidth || q.y >= g.clipHeight) continue;
      const ivec2 p = ivec2(g.clipX, g.clipY) + q;
      const vec4 residual = pc.neuron.residual != 0 ? residualOf(p, img, t) : vec4(0.0);
      writeSlice(pc.destination, p, img, t, convolutionOutputOf(oc, out4[x], residual, biasValues));
    }
  }
}
