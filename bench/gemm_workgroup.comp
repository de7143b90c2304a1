#version 450
// Issue #11's workgroup-scope GEMM ceiling: C = A x B with one cooperative matrix per workgroup
// (TILE_M x TILE_N float32 accumulator, TILE_M x TILE_K and TILE_K x TILE_N float16 operands),
// the whole workgroup cooperating, as VK_NV_cooperative_matrix2's cooperativeMatrixWorkgroupScope
// allows. Debian 12's glslang knows only GL_NV_cooperative_matrix (subgroup scope), so this is
// written in its syntax and scripts/bench/coopmat_khr.py rewrites the SPIR-V into
// SPV_KHR_cooperative_matrix at Workgroup scope; the operand types must stay distinct for that
// (A is TILE_M x TILE_K, B TILE_K x TILE_N: distinct specialization constants).
// Without STAGED, the operands are loaded straight from the storage buffers (the driver stages
// them as it sees fit, like NVIDIA's own workgroup sample); with STAGED, the workgroup copies each
// K chunk into shared memory first (two stages filled one chunk ahead through registers, rows
// padded by 16 bytes, as bench/gemm_ceiling.comp) and the matrices are loaded from there; with
// TENSOR, as without STAGED but through VK_NV_cooperative_matrix2's tensor-addressing loads.
// A is [M][K], B [K][N] (row-major float16), C [M][N] float32; M, N, K multiples of the tile.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

// -DTM=.. -DTN=.. -DTK=.. and -DWG=.. fix the tile and the workgroup size at compile time
// instead of through specialization constants (the driver's compiler is sensitive to that).
#ifdef TM
const int TILE_M = TM, TILE_N = TN, TILE_K = TK;
#else
layout(constant_id = 0) const int TILE_M = 128;
layout(constant_id = 1) const int TILE_N = 128;
layout(constant_id = 2) const int TILE_K = 32;
#endif
#ifdef WG
layout(local_size_x = WG) in;
#else
layout(local_size_x_id = 3) in;
#endif

layout(set = 0, binding = 0, std430) readonly buffer MatrixA { uvec4 a[]; };
layout(set = 0, binding = 1, std430) readonly buffer MatrixB { uvec4 b[]; };
layout(set = 0, binding = 2, std430) writeonly buffer MatrixC { float c[]; };
layout(push_constant) uniform Push { int M, N, K; } p;

// The scope is rewritten to Workgroup after compilation (coopmat_khr.py --scope workgroup).
#define ACC fcoopmatNV<32, gl_ScopeSubgroup, TILE_M, TILE_N>
#define MAT_A fcoopmatNV<16, gl_ScopeSubgroup, TILE_M, TILE_K>
#define MAT_B fcoopmatNV<16, gl_ScopeSubgroup, TILE_K, TILE_N>

#ifdef STAGED
const int THREADS = int(gl_WorkGroupSize.x);
const int A_VECS = TILE_K / 8;  // uvec4 per A row and chunk
const int B_VECS = TILE_N / 8;  // uvec4 per B row of the tile
const int A_ROW = A_VECS + 1;   // padded
const int B_ROW = B_VECS + 1;
const int A_STAGE = TILE_M * A_ROW;
const int B_STAGE = TILE_K * B_ROW;
const int A_LOADS = TILE_M * A_VECS / THREADS;
const int B_LOADS = TILE_K * B_VECS / THREADS;
shared uvec4 aS[2 * A_STAGE];
shared uvec4 bS[2 * B_STAGE];
#endif

void main() {
  const int m0 = int(gl_WorkGroupID.x) * TILE_M, n0 = int(gl_WorkGroupID.y) * TILE_N;
  const int KV = p.K / 8, NV = p.N / 8;
  ACC acc = ACC(0.0);
#ifndef STAGED
  for (int k0 = 0; k0 < p.K; k0 += TILE_K) {
    MAT_A fa;
    MAT_B fb;
#ifdef TENSOR
    // Column-major marks a tensor-addressing load for coopmat_khr.py --tensor: the block starts
    // at the pointer, the stride is the tensor's row length in elements.
    coopMatLoadNV(fa, a, uint(m0 * KV + k0 / 8), uint(p.K), true);
    coopMatLoadNV(fb, b, uint(k0 * NV + n0 / 8), uint(p.N), true);
#else
    coopMatLoadNV(fa, a, uint(m0 * KV + k0 / 8), uint(KV), false);
    coopMatLoadNV(fb, b, uint(k0 * NV + n0 / 8), uint(NV), false);
#endif
    acc = coopMatMulAddNV(fa, fb, acc);
  }
#else
  const int t = int(gl_LocalInvocationID.x);
  uvec4 ra[A_LOADS], rb[B_LOADS];
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {
    const int e = t + l * THREADS;
    aS[(e / A_VECS) * A_ROW + e % A_VECS] = a[(m0 + e / A_VECS) * KV + e % A_VECS];
  }
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {
    const int e = t + l * THREADS;
    bS[(e / B_VECS) * B_ROW + e % B_VECS] = b[(e / B_VECS) * NV + n0 / 8 + e % B_VECS];
  }
  barrier();
  const int chunks = p.K / TILE_K;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const int stage = chunk & 1;
    const bool more = chunk + 1 < chunks;
    if (more) {
      const int k0 = (chunk + 1) * TILE_K;
      [[unroll]] for (int l = 0; l < A_LOADS; ++l) {
        const int e = t + l * THREADS;
        ra[l] = a[(m0 + e / A_VECS) * KV + k0 / 8 + e % A_VECS];
      }
      [[unroll]] for (int l = 0; l < B_LOADS; ++l) {
        const int e = t + l * THREADS;
        rb[l] = b[(k0 + e / B_VECS) * NV + n0 / 8 + e % B_VECS];
      }
    }
    MAT_A fa;
    MAT_B fb;
    coopMatLoadNV(fa, aS, uint(stage * A_STAGE), uint(A_ROW), false);
    coopMatLoadNV(fb, bS, uint(stage * B_STAGE), uint(B_ROW), false);
    acc = coopMatMulAddNV(fa, fb, acc);
    if (more) {
      const int next = stage ^ 1;
      [[unroll]] for (int l = 0; l < A_LOADS; ++l) {
        const int e = t + l * THREADS;
        aS[next * A_STAGE + (e / A_VECS) * A_ROW + e % A_VECS] = ra[l];
      }
      [[unroll]] for (int l = 0; l < B_LOADS; ++l) {
        const int e = t + l * THREADS;
        bS[next * B_STAGE + (e / B_VECS) * B_ROW + e % B_VECS] = rb[l];
      }
    }
    barrier();
  }
#endif
  coopMatStoreNV(acc, c, uint(m0 * p.N + n0), uint(p.N), false);
}
