// Winograd F(4x4,3x3) (Lavin and Gray, 2015): the one-dimensional transforms that
// winograd_input.comp and winograd_output.comp apply along columns and then rows of a tile. A 6x6
// source tile d becomes V = B^T d B; the 36 products M = U .* V, summed over input channels by
// winograd_gemm.comp, become the 4x4 outputs Y = A^T M A. The weights' U = G g G^T is made on the
// host (winograd.cpp).
#ifndef VKCNN_WINOGRAD_GLSL
#define VKCNN_WINOGRAD_GLSL

// B^T x for 6 values:
//   [4  0 -5  0 1 0]   [0 -4 -4  1 1 0]   [0 4 -4 -1 1 0]
//   [0 -2 -1  2 1 0]   [0  2 -1 -2 1 0]   [0 4  0 -5 0 1]
void winogradInput(inout vec4 x[6]) {
  const vec4 a = x[4] - 4.0 * x[2], b = x[3] - 4.0 * x[1];
  const vec4 c = x[4] - x[2], e = 2.0 * (x[3] - x[1]);
  const vec4 r0 = 4.0 * x[0] - 5.0 * x[2] + x[4];
  const vec4 r5 = 4.0 * x[1] - 5.0 * x[3] + x[5];
  x[0] = r0;
  x[1] = a + b;
  x[2] = a - b;
  x[3] = c + e;
  x[4] = c - e;
  x[5] = r5;
}

// A^T x, 4 values from 6:
//   [1 1 1 1 1 0]   [0 1 -1 2 -2 0]   [0 1 1 4 4 0]   [0 1 -1 8 -8 1]
void winogradOutput(vec4 x[6], out vec4 y[4]) {
  const vec4 s12 = x[1] + x[2], d12 = x[1] - x[2];
  const vec4 s34 = x[3] + x[4], d34 = x[3] - x[4];
  y[0] = x[0] + s12 + s34;
  y[1] = d12 + 2.0 * d34;
  y[2] = s12 + 4.0 * s34;
  y[3] = d12 + 8.0 * d34 + x[5];
}

#endif
