#version 450
// Winograd F(2x2,3x3) on the matrix units, the 16 per-position GEMMs (winograd.glsl): for
// position p (the dispatch's z), products[p] = transformed[p] x weights[p], [rows][K] x [K][N] in
// float16 (row-major) into [rows][N] in float32. The operands are held by blocks of TILE_M rows,
// [row block][position][TILE_M rows][K or N], so that a tile's rows of a position are contiguous
// (the transforms write and read that layout: winograd.cpp). rows, K and N are whole tiles (the
// host pads them: rows past the blocks are never read back, the channels past the layer's are
// zero in both operands), so that nothing is bounds-checked.
//
// The tiling of bench/gemm_ceiling.comp's GEMM (GL_NV_cooperative_matrix): WARPS_M x WARPS_N
// warps of FRAG_M x FRAG_N fragments of 16 x 16, K_STEPS 16-deep steps a stage, two shared stages
// filled one chunk ahead through registers, rows padded by 16 bytes so that fragment loads do not
// conflict (bench/NOTES.md, 2026-11-27, session 16: 150-175 TFLOP/s on the H200).
#extension GL_GOOGLE_include_directive : require
// vkcnn-build: reflect-separately (SPIRV-Cross cannot parse cooperative matrices)
#ifndef VKCNN_REFLECTION
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#endif
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require

layout(constant_id = 0) const int WARPS_M = 2;
layout(constant_id = 1) const int WARPS_N = 4;
layout(constant_id = 2) const int FRAG_M = 4;
layout(constant_id = 3) const int FRAG_N = 2;
layout(constant_id = 4) const int K_STEPS = 2;
layout(local_size_x = 256, local_size_x_id = 5) in;  // 32 * WARPS_M * WARPS_N
// The products through shared memory, a warp's fragment row at a time, so that each invocation
// writes 16-byte runs of whole rows (1), or straight from the fragments (0).
layout(constant_id = 6) const int STAGED_STORE = 1;

#include "convolution_interface.h"

layout(set = 0, binding = 0, std430) readonly buffer Transformed { uvec4 a[]; };
layout(set = 0, binding = 1, std430) readonly buffer Weights { uvec4 b[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Products { uvec4 c[]; };
layout(push_constant) uniform Push { WinogradMatrixGemmPush pc; };

#ifdef VKCNN_REFLECTION
// The build SPIRV-Cross reflects (see cmake/VkcnnShaders.cmake): every binding used.
void main() {
  c[0] = a[0] + b[0] + uvec4(pc.rows);
}
#else
const int THREADS = 32 * WARPS_M * WARPS_N;
const int TILE_M = WARPS_M * FRAG_M * 16;
const int TILE_N = WARPS_N * FRAG_N * 16;
const int K_CHUNK = 16 * K_STEPS;
const int A_VECS = K_CHUNK / 8;  // uvec4 per A row and chunk
const int B_VECS = TILE_N / 8;   // uvec4 per B row of the tile
const int A_ROW = A_VECS + 1;    // padded
const int B_ROW = B_VECS + 1;
const int A_STAGE = TILE_M * A_ROW;
const int B_STAGE = K_CHUNK * B_ROW;
const int A_LOADS = TILE_M * A_VECS / THREADS;
const int B_LOADS = K_CHUNK * TILE_N / 8 / THREADS;
// The staged store (below) takes each warp's 16 rows of FRAG_N fragments, padded by a uvec4, from
// A's stages, which are made at least that large.
const int STORE_VECS = STAGED_STORE != 0 ? THREADS / 32 * 16 * (FRAG_N * 4 + 1) : 0;
shared uvec4 aS[2 * A_STAGE > STORE_VECS ? 2 * A_STAGE : STORE_VECS];
shared uvec4 bS[2 * B_STAGE];

void main() {
  const int t = int(gl_LocalInvocationID.x), warp = t / 32, lane = t % 32;
  const int wm = warp % WARPS_M, wn = warp / WARPS_M;
  const int n0 = int(gl_WorkGroupID.y) * TILE_N;
  const int position = int(gl_WorkGroupID.z);
  // This tile's rows of this position: its row block's position-th slab.
  const int block = int(gl_WorkGroupID.x) * 16 + position;
  const int KV = pc.K / 8, NV = pc.N / 8;
  const int aFirst = pc.transformedFirst + block * TILE_M * KV;
  const int bFirst = pc.weightsFirst + position * pc.K * NV;
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FRAG_M][FRAG_N];
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)
    [[unroll]] for (int j = 0; j < FRAG_N; ++j)
      acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  uvec4 ra[A_LOADS], rb[B_LOADS];
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> pa[FRAG_M], pb[FRAG_N];
  // The chunk at depth k0 from A and B into registers.
#define FETCH(k0)                                                          \
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                           \
    const int e = t + l * THREADS;                                         \
    ra[l] = a[aFirst + (e / A_VECS) * KV + (k0) / 8 + e % A_VECS];         \
  }                                                                        \
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                           \
    const int e = t + l * THREADS;                                         \
    rb[l] = b[bFirst + ((k0) + e / B_VECS) * NV + n0 / 8 + e % B_VECS];    \
  }
  // The registers into shared stage `stage`.
#define STAGE(stage)                                                       \
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                           \
    const int e = t + l * THREADS;                                         \
    aS[(stage) * A_STAGE + (e / A_VECS) * A_ROW + e % A_VECS] = ra[l];     \
  }                                                                        \
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                           \
    const int e = t + l * THREADS;                                         \
    bS[(stage) * B_STAGE + (e / B_VECS) * B_ROW + e % B_VECS] = rb[l];     \
  }

  FETCH(0)
  STAGE(0)
  barrier();
  const int chunks = pc.K / K_CHUNK;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const int stage = chunk & 1;
    const bool more = chunk + 1 < chunks;
    if (more) {
      FETCH((chunk + 1) * K_CHUNK)
    }
    [[unroll]] for (int step = 0; step < K_STEPS; ++step) {
      [[unroll]] for (int i = 0; i < FRAG_M; ++i)
        coopMatLoadNV(pa[i], aS,
                      uint(stage * A_STAGE + (wm * FRAG_M + i) * 16 * A_ROW + step * 2),
                      uint(A_ROW), false);
      [[unroll]] for (int j = 0; j < FRAG_N; ++j)
        coopMatLoadNV(pb[j], bS, uint(stage * B_STAGE + step * 16 * B_ROW + (wn * FRAG_N + j) * 2),
                      uint(B_ROW), false);
      [[unroll]] for (int i = 0; i < FRAG_M; ++i)
        [[unroll]] for (int j = 0; j < FRAG_N; ++j)
          acc[i][j] = coopMatMulAddNV(pa[i], pb[j], acc[i][j]);
    }
    if (more) {
      STAGE(stage ^ 1)
    }
    barrier();
  }
  // In uvec4 (4 floats): the products' row stride and where this warp's first row starts.
  const int NQ = pc.N / 4;
  const int cFirst = pc.productsFirst + block * TILE_M * NQ + (wm * FRAG_M * 16) * NQ +
                     (n0 + wn * FRAG_N * 16) / 4;
  if (STAGED_STORE == 0) {
    [[unroll]] for (int i = 0; i < FRAG_M; ++i)
      [[unroll]] for (int j = 0; j < FRAG_N; ++j)
        coopMatStoreNV(acc[i][j], c, uint(cFirst + i * 16 * NQ + j * 4), uint(NQ), false);
    return;
  }
  // Past the loop's last barrier the stages are free: each warp stages a fragment row (16 rows
  // of FRAG_N fragments, rows padded by 16 bytes) in its own part of them, then writes it out
  // as whole rows, 16 bytes an invocation.
  const int W_ROW = FRAG_N * 4 + 1;  // uvec4 a staged row
  const int region = warp * 16 * W_ROW;
  [[unroll]] for (int i = 0; i < FRAG_M; ++i) {
    [[unroll]] for (int j = 0; j < FRAG_N; ++j)
      coopMatStoreNV(acc[i][j], aS, uint(region + j * 4), uint(W_ROW), false);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    [[unroll]] for (int v = lane; v < 16 * FRAG_N * 4; v += 32) {
      const int r = v / (FRAG_N * 4), q = v - r * (FRAG_N * 4);
      c[cFirst + (i * 16 + r) * NQ + q] = aS[region + r * W_ROW + q];
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
  }
}
#endif
