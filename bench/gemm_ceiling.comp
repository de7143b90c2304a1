#version 450
// The GEMM ceiling of issue #11: C = A x B from storage buffers on the matrix units
// (GL_NV_cooperative_matrix, float16 operands, float32 accumulation), tiled like the convolution
// (glsl/convolution_tiled.comp): WARPS_M x WARPS_N warps of FRAG_M x FRAG_N fragments of 16 x 16,
// K_STEPS 16-deep steps per stage, two shared-memory stages filled one chunk ahead through
// registers, rows padded by 16 bytes so that fragment loads do not conflict. What it reaches
// against the convolution on the same tiles separates the matrix pipeline from im2col through
// images. A is [M][K], B [K][N] (row-major float16), C [M][N] float32; M, N and K are multiples of
// the tile (the benchmark only asks for such sizes).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 0) const int WARPS_M = 2;
layout(constant_id = 1) const int WARPS_N = 4;
layout(constant_id = 2) const int FRAG_M = 4;
layout(constant_id = 3) const int FRAG_N = 2;
layout(constant_id = 4) const int K_STEPS = 2;
layout(local_size_x_id = 5) in;  // 32 * WARPS_M * WARPS_N

layout(set = 0, binding = 0, std430) readonly buffer MatrixA { uvec4 a[]; };
layout(set = 0, binding = 1, std430) readonly buffer MatrixB { uvec4 b[]; };
layout(set = 0, binding = 2, std430) writeonly buffer MatrixC { float c[]; };
layout(push_constant) uniform Push { int M, N, K; } p;

const int THREADS = 32 * WARPS_M * WARPS_N;
const int TILE_M = WARPS_M * FRAG_M * 16;
const int TILE_N = WARPS_N * FRAG_N * 16;
const int K_CHUNK = 16 * K_STEPS;
const int A_VECS = K_CHUNK / 8;      // uvec4 per A row and chunk
const int B_VECS = TILE_N / 8;       // uvec4 per B row of the tile
const int A_ROW = A_VECS + 1;        // padded
const int B_ROW = B_VECS + 1;
const int A_STAGE = TILE_M * A_ROW;
const int B_STAGE = K_CHUNK * B_ROW;
const int A_LOADS = TILE_M * A_VECS / THREADS;
const int B_LOADS = K_CHUNK * B_VECS / THREADS;
shared uvec4 aS[2 * A_STAGE];
shared uvec4 bS[2 * B_STAGE];

void main() {
  const int t = int(gl_LocalInvocationID.x), warp = t / 32;
  const int wm = warp % WARPS_M, wn = warp / WARPS_M;
  const int m0 = int(gl_WorkGroupID.x) * TILE_M, n0 = int(gl_WorkGroupID.y) * TILE_N;
  const int KV = p.K / 8, NV = p.N / 8;
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FRAG_M][FRAG_N];
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)
    [[unroll]] for (int j = 0; j < FRAG_N; ++j)
      acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  uvec4 ra[A_LOADS], rb[B_LOADS];
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {
    const int e = t + l * THREADS;
    ra[l] = a[(m0 + e / A_VECS) * KV + e % A_VECS];
  }
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {
    const int e = t + l * THREADS;
    rb[l] = b[(e / B_VECS) * NV + n0 / 8 + e % B_VECS];
  }
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {
    const int e = t + l * THREADS;
    aS[(e / A_VECS) * A_ROW + e % A_VECS] = ra[l];
  }
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {
    const int e = t + l * THREADS;
    bS[(e / B_VECS) * B_ROW + e % B_VECS] = rb[l];
  }
  barrier();
  const int chunks = p.K / K_CHUNK;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const int stage = chunk & 1;
    const bool more = chunk + 1 < chunks;
    if (more) {
      const int k0 = (chunk + 1) * K_CHUNK;
      [[unroll]] for (int l = 0; l < A_LOADS; ++l) {
        const int e = t + l * THREADS;
        ra[l] = a[(m0 + e / A_VECS) * KV + k0 / 8 + e % A_VECS];
      }
      [[unroll]] for (int l = 0; l < B_LOADS; ++l) {
        const int e = t + l * THREADS;
        rb[l] = b[(k0 + e / B_VECS) * NV + n0 / 8 + e % B_VECS];
      }
    }
    [[unroll]] for (int step = 0; step < K_STEPS; ++step) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[FRAG_M], fb[FRAG_N];
      [[unroll]] for (int i = 0; i < FRAG_M; ++i)
        coopMatLoadNV(fa[i], aS, uint(stage * A_STAGE + (wm * FRAG_M + i) * 16 * A_ROW + step * 2),
                      uint(A_ROW), false);
      [[unroll]] for (int j = 0; j < FRAG_N; ++j)
        coopMatLoadNV(fb[j], bS,
                      uint(stage * B_STAGE + step * 16 * B_ROW + (wn * FRAG_N + j) * 2),
                      uint(B_ROW), false);
      [[unroll]] for (int i = 0; i < FRAG_M; ++i)
        [[unroll]] for (int j = 0; j < FRAG_N; ++j)
          acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
    }
    if (more) {
      const int next = (stage ^ 1);
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
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)
    [[unroll]] for (int j = 0; j < FRAG_N; ++j)
      coopMatStoreNV(acc[i][j], c,
                     uint((m0 + (wm * FRAG_M + i) * 16) * p.N + n0 + (wn * FRAG_N + j) * 16),
                     uint(p.N), false);
}
