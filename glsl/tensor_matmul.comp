#version 450
// Batched matrix products, D = alpha * A B + beta * C: MatMul (alpha 1, no C) and Gemm. The
// outer index space walks the batch axes (args 0 A, 1 B, 2 C, 3 D; broadcast axes stride 0);
// innerStrides[0].xy are each operand's strides along its two matrix axes (A: m, k; B: k, n;
// C and D: m, n), so transposed operands are only other strides. K in steps of 16 through shared
// memory; float32 accumulation.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer A { TENSOR_T a[]; };
layout(set = 0, binding = 2, std430) readonly buffer B { TENSOR_T b[]; };
layout(set = 0, binding = 3, std430) readonly buffer C { TENSOR_T c[]; };
layout(set = 0, binding = 4, std430) writeonly buffer D { TENSOR_T d[]; };

// 64x64 tiles of D per workgroup, each invocation 4x4 of them (rows ly + 16i, columns lx + 16j):
// a quarter of the loads and a sixteenth of the barriers per output of 16x16 tiles of one each.
shared float tileA[64][17];  // [m][k]
shared float tileB[16][65];  // [k][n]

// i0 M, i1 N, i2 K, i3 tiles along N, i4 tiles along M; a alpha, b beta; flags bit 0: C bound.
void main() {
  int group = flatGroup();
  int tiles = p.i3 * p.i4;
  int item = group / tiles;
  if (item >= p.count) return;  // the whole workgroup, before any barrier
  int t = group % tiles;
  int m0 = (t / p.i3) * 64, n0 = (t % p.i3) * 64;
  int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);
  int tid = ly * 16 + lx;
  ivec4 base = outerOffsets(item);
  ivec2 sa = p.args[0].innerStrides[0].xy, sb = p.args[1].innerStrides[0].xy;
  float acc[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;
  for (int k0 = 0; k0 < p.i2; k0 += 16) {
    for (int r = 0; r < 4; ++r) {
      int e = tid + 256 * r;
      int am = e >> 4, ak = e & 15, bk = e >> 6, bn = e & 63;
      int m = m0 + am, ka = k0 + ak, kb = k0 + bk, n = n0 + bn;
      tileA[am][ak] = m < p.i0 && ka < p.i2 ? float(a[base.x + m * sa.x + ka * sa.y]) : 0.0;
      tileB[bk][bn] = kb < p.i2 && n < p.i1 ? float(b[base.y + kb * sb.x + n * sb.y]) : 0.0;
    }
    barrier();
    for (int k = 0; k < 16; ++k) {
      float av[4], bv[4];
      for (int i = 0; i < 4; ++i) av[i] = tileA[ly + 16 * i][k];
      for (int j = 0; j < 4; ++j) bv[j] = tileB[k][lx + 16 * j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }
  ivec2 sc = p.args[2].innerStrides[0].xy, sd = p.args[3].innerStrides[0].xy;
  for (int i = 0; i < 4; ++i) {
    int m = m0 + ly + 16 * i;
    if (m >= p.i0) break;
    for (int j = 0; j < 4; ++j) {
      int n = n0 + lx + 16 * j;
      if (n >= p.i1) break;
      float y = p.a * acc[i][j];
      if ((p.flags & 1) != 0) y += p.b * float(c[base.z + m * sc.x + n * sc.y]);
      d[base.w + m * sd.x + n * sd.y] = TENSOR_T(toStorage(y));
    }
  }
}
