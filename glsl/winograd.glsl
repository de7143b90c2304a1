// Winograd F(4x4,3x3) and F(2x2,3x3) (Lavin and Gray, 2015): the one-dimensional transforms that
// the input transforms (winograd_input.comp, winograd_matrix_input.comp) and the output transform
// (winograd_transform_output.glsl) apply along columns and then rows of a tile. An (m+2)x(m+2)
// source tile d becomes V = B^T d B; the products M = U .* V, summed over input channels by the
// per-position GEMMs, become the m x m outputs Y = A^T M A. The weights' U = G g G^T is made on
// the host (winograd.cpp).
#ifndef VKCNN_WINOGRAD_GLSL
#define VKCNN_WINOGRAD_GLSL

// The interpolation points are 0, 1, -1, -2, 1/2 and infinity rather than Lavin's 0, +-1, +-2:
// their coefficients (A^T's powers of 1/2 among them) lose less to float32 rounding. Simulated
// over 64 channels, the relative L2 error goes 1.6e-6 -> 1.0e-6 (direct summation: 0.44e-6); on
// the H200, resnet50's against PyTorch 4.2e-5 -> 3.2e-5 for 0.5% more time (bench/NOTES.md,
// 2026-11-27, session 22, run 7). winograd.cpp's G matches them.

// B^T x for 6 values:
//   [1 -3/2   -2  3/2 1 0]   [0 -1  1/2 5/2 1 0]   [0 1 -5/2  1/2 1 0]
//   [0  1/2   -1 -1/2 1 0]   [0 -2   -1   2 1 0]   [0 1 -3/2   -2 3/2 1]
void winogradInput(inout vec4 x[6]) {
  const vec4 r0 = x[0] - 1.5 * x[1] - 2.0 * x[2] + 1.5 * x[3] + x[4];
  const vec4 r1 = -x[1] + 0.5 * x[2] + 2.5 * x[3] + x[4];
  const vec4 r2 = x[1] - 2.5 * x[2] + 0.5 * x[3] + x[4];
  const vec4 r3 = 0.5 * x[1] - x[2] - 0.5 * x[3] + x[4];
  const vec4 r4 = -2.0 * x[1] - x[2] + 2.0 * x[3] + x[4];
  const vec4 r5 = x[1] - 1.5 * x[2] - 2.0 * x[3] + 1.5 * x[4] + x[5];
  x[0] = r0;
  x[1] = r1;
  x[2] = r2;
  x[3] = r3;
  x[4] = r4;
  x[5] = r5;
}

// A^T x, 4 values from 6:
//   [1 1 1 1 1 0]   [0 1 -1 -2 1/2 0]   [0 1 1 4 1/4 0]   [0 1 -1 -8 1/8 1]
void winogradOutput(vec4 x[6], out vec4 y[4]) {
  const vec4 s12 = x[1] + x[2], d12 = x[1] - x[2];
  y[0] = x[0] + s12 + x[3] + x[4];
  y[1] = d12 - 2.0 * x[3] + 0.5 * x[4];
  y[2] = s12 + 4.0 * x[3] + 0.25 * x[4];
  y[3] = d12 - 8.0 * x[3] + 0.125 * x[4] + x[5];
}

// F(2x2,3x3), for float16 on the matrix units, where the transformed input is stored in float16:
// its B^T and A^T hold 0 and +-1 alone, so V = B^T d B loses one rounding (F(4x4)'s coefficients
// would cost float16 4x direct summation's error; bench/NOTES.md, 2026-11-27, session 23).
//   B^T = [1 0 -1 0]  [0 1 1 0]  [0 -1 1 0]  [0 1 0 -1]
void winogradInput(inout vec4 x[4]) {
  const vec4 r0 = x[0] - x[2], r1 = x[1] + x[2], r2 = x[2] - x[1], r3 = x[1] - x[3];
  x[0] = r0;
  x[1] = r1;
  x[2] = r2;
  x[3] = r3;
}

//   A^T = [1 1 1 0]  [0 1 -1 -1]
void winogradOutput(vec4 x[4], out vec4 y[2]) {
  y[0] = x[0] + x[1] + x[2];
  y[1] = x[1] - x[2] - x[3];
}

#endif
