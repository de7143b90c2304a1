#version 450
// Batched matrix products, D = alpha * A B + beta * C: MatMul (alpha 1, no C) and Gemm. The
// outer index space walks the batch axes (args 0 A, 1 B, 2 C, 3 D; broadcast axes stride 0);
// innerStrides[0].xy are each operand's strides along its two matrix axes (A: m, k; B: k, n;
// C and D: m, n), so transposed operands are only other strides. 16x16 tiles of D per workgroup,
// K in steps of 16 through shared memory; float32 accumulation.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer A { TENSOR_T a[]; };
layout(set = 0, binding = 2, std430) readonly buffer B { TENSOR_T b[]; };
layout(set = 0, binding = 3, std430) readonly buffer C { TENSOR_T c[]; };
layout(set = 0, binding = 4, std430) writeonly buffer D { TENSOR_T d[]; };

shared float tileA[16][17];
shared float tileB[16][17];

// i0 M, i1 N, i2 K, i3 tiles along N, i4 tiles along M; a alpha, b beta; flags bit 0: C bound.
void main() {
  int group = flatGroup();
  int tiles = p.i3 * p.i4;
  int item = group / tiles;
  if (item >= p.count) return;  // the whole workgroup, before any barrier
  int t = group % tiles;
  int m0 = (t / p.i3) * 16, n0 = (t % p.i3) * 16;
  int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);
  ivec4 base = outerOffsets(item);
  ivec2 sa = p.args[0].innerStrides[0].xy, sb = p.args[1].innerStrides[0].xy;
  int m = m0 + ly, n = n0 + lx;
  float acc = 0.0;
  for (int k0 = 0; k0 < p.i2; k0 += 16) {
    // tileA[row m][col k], tileB[row k][col n].
    int ka = k0 + lx, kb = k0 + ly;
    tileA[ly][lx] = m < p.i0 && ka < p.i2 ? float(a[base.x + m * sa.x + ka * sa.y]) : 0.0;
    tileB[ly][lx] = kb < p.i2 && n < p.i1 ? float(b[base.y + kb * sb.x + n * sb.y]) : 0.0;
    barrier();
    for (int k = 0; k < 16; ++k) acc += tileA[ly][k] * tileB[k][lx];
    barrier();
  }
  if (m >= p.i0 || n >= p.i1) return;
  float y = p.a * acc;
  if ((p.flags & 1) != 0) {
    ivec2 sc = p.args[2].innerStrides[0].xy;
    y += p.b * float(c[base.z + m * sc.x + n * sc.y]);
  }
  ivec2 sd = p.args[3].innerStrides[0].xy;
  d[base.w + m * sd.x + n * sd.y] = TENSOR_T(toStorage(y));
}
