#version 450
// The GEMM ceiling of issue #11: C = A x B from storage buffers on the matrix units
// (GL_NV_cooperative_matrix, float16 operands, float32 accumulation), tiled like the convolution
// (glsl/convolution_tiled.glsl): WARPS_M x WARPS_N warps of FRAG_M x FRAG_N fragments of 16 x 16,
// K_STEPS 16-deep steps per stage, two shared-memory stages filled one chunk ahead through
// registers, rows padded by 16 bytes so that fragment loads do not conflict. What it reaches
// against the convolution on the same tiles separates the matrix pipeline from im2col through
// images. A is [M][K], B [K][N] (row-major float16), C [M][N] float32; M, N and K are multiples of
// the tile (the benchmark only asks for such sizes).
// MODE takes parts away to see what each costs (C is then not A x B): 0 the GEMM; 1 no global
// loads (every chunk multiplies the first chunk again, from alternating stages), barriers kept;
// 2 no barriers either; 3 the fragments loaded once, only the multiply-adds in the loop (the
// matrix units' own rate through VK_NV_cooperative_matrix). MODE + 4: B is stored [N][K] (K
// contiguous, the layout of the matrix units' B operand) and its fragments loaded column-major.
// MODE + 8 (K_STEPS even): the fragments of the next k-step are loaded before the multiply-adds of
// the current one, and a chunk's last k-step is multiplied after the barrier, behind the loads of
// the next chunk's first: the matrix units and the shared-memory loads overlap within a warp.
// MODE + 16: workgroups walk the output in column groups of GROUP_M tiles (all of a group's
// rows, then the next column), so that those running at once share A and B rows in L2.
// MODE + 32: warp-specialized (PARTS 0 or 1 only): the WARPS_M x WARPS_N warps only load
// fragments and multiply, PRODUCERS = (MODE >> 6) & 15 more warps only copy chunks from A and B
// into a ring of STAGES = (MODE >> 10) & 7 shared stages, and the two sides wait on counters in
// shared memory (a full and an empty count a stage) instead of a workgroup barrier a chunk: no
// barrier at all in the loop, and the copies of later chunks in flight while the matrix units
// work. PARTS 1: the producers copy nothing (the counters' cost alone). The host sizes the
// workgroup with the producer warps.
// -DACCUMULATE_FP16 (gemm_ceiling_fp16acc.spv): float16 accumulators, as MPS's
// accumulatorPrecisionOption = half allows (issue 40): half the registers a fragment, so twice the
// tile for the same register file, and the matrix units' float16-accumulate rate. C stays float32
// (each fragment converted at the store).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require

layout(constant_id = 0) const int WARPS_M = 2;
layout(constant_id = 1) const int WARPS_N = 4;
layout(constant_id = 2) const int FRAG_M = 4;
layout(constant_id = 3) const int FRAG_N = 2;
layout(constant_id = 4) const int K_STEPS = 2;
layout(local_size_x_id = 5) in;  // 32 * WARPS_M * WARPS_N
layout(constant_id = 6) const int MODE = 0;
const int PARTS = MODE & 3;
const bool B_T = (MODE & 4) != 0;
const bool SPECIALIZED = (MODE & 32) != 0;
const int PRODUCERS = (MODE >> 6) & 15;
const int STAGES = SPECIALIZED ? (MODE >> 10) & 7 : 2;

// -DRESTRICT_OPERANDS: A and B also restrict (may the driver use its read-only data path?).
#ifdef RESTRICT_OPERANDS
#define OPERAND readonly restrict
#else
#define OPERAND readonly
#endif
#ifdef ACCUMULATE_FP16
#define ACCUMULATOR fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#else
#define ACCUMULATOR fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#endif
layout(set = 0, binding = 0, std430) OPERAND buffer MatrixA { uvec4 a[]; };
layout(set = 0, binding = 1, std430) OPERAND buffer MatrixB { uvec4 b[]; };
layout(set = 0, binding = 2, std430) writeonly buffer MatrixC { float c[]; };
layout(push_constant) uniform Push { int M, N, K; } p;

const int THREADS = 32 * WARPS_M * WARPS_N;
const int TILE_M = WARPS_M * FRAG_M * 16;
const int TILE_N = WARPS_N * FRAG_N * 16;
const int K_CHUNK = 16 * K_STEPS;
const int A_VECS = K_CHUNK / 8;      // uvec4 per A row and chunk
const int B_VECS = B_T ? K_CHUNK / 8 : TILE_N / 8;  // uvec4 per B row of the tile
const int A_ROW = A_VECS + 1;        // padded
const int B_ROW = B_VECS + 1;
const int A_STAGE = TILE_M * A_ROW;
const int B_STAGE = (B_T ? TILE_N : K_CHUNK) * B_ROW;
const int A_LOADS = TILE_M * A_VECS / THREADS;
const int B_LOADS = K_CHUNK * TILE_N / 8 / THREADS;
shared uvec4 aS[STAGES * A_STAGE];
shared uvec4 bS[STAGES * B_STAGE];
// MODE + 32: chunks stored into each stage (counted by producer warps) and released from it
// (counted by consumer warps), from the start of the dispatch.
shared uint fullCount[8], emptyCount[8];
const int P_THREADS = 32 * PRODUCERS;
const int P_A_LOADS = SPECIALIZED ? TILE_M * A_VECS / P_THREADS : 1;
const int P_B_LOADS = SPECIALIZED ? K_CHUNK * TILE_N / 8 / P_THREADS : 1;

#define LOAD_COUNT(counter) \
  atomicLoad(counter, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsAcquire)
#define COUNT_ONE(counter) \
  atomicAdd(counter, 1u, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelease)

// The uvec4 of B that element e of a chunk's staging loads.
int bIndex(int e, int k0, int n0, int NV, int KV) {
  return B_T ? (n0 + e / B_VECS) * KV + k0 / 8 + e % B_VECS
             : (k0 + e / B_VECS) * NV + n0 / 8 + e % B_VECS;
}
// Where fragment j of a k-step starts in a B stage, in uvec4.
int bFragment(int step, int j) {
  return B_T ? j * 16 * B_ROW + step * 2 : step * 16 * B_ROW + j * 2;
}

void main() {
  const int t = int(gl_LocalInvocationID.x), warp = t / 32;
  const int wm = warp % WARPS_M, wn = warp / WARPS_M;
  int tileRow = int(gl_WorkGroupID.x), tileColumn = int(gl_WorkGroupID.y);
  if ((MODE & 16) != 0) {  // the dispatch's linear index, re-walked in groups of GROUP_M rows
    const int rows = int(gl_NumWorkGroups.x), GROUP_M = 8;
    const int linear = tileColumn * rows + tileRow;
    const int perGroup = GROUP_M * int(gl_NumWorkGroups.y);
    const int group = linear / perGroup, first = group * GROUP_M;
    const int height = min(rows - first, GROUP_M);
    tileRow = first + (linear % perGroup) % height;
    tileColumn = (linear % perGroup) / height;
  }
  const int m0 = tileRow * TILE_M, n0 = tileColumn * TILE_N;
  const int KV = p.K / 8, NV = p.N / 8;
  ACCUMULATOR acc[FRAG_M][FRAG_N];
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)
    [[unroll]] for (int j = 0; j < FRAG_N; ++j)
      acc[i][j] = ACCUMULATOR(0.0);
  uvec4 ra[A_LOADS], rb[B_LOADS];
  // The chunk at depth k0 from A and B into registers.
#define FETCH(k0)                                                  \
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                   \
    const int e = t + l * THREADS;                                 \
    ra[l] = a[(m0 + e / A_VECS) * KV + (k0) / 8 + e % A_VECS];     \
  }                                                                \
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                   \
    const int e = t + l * THREADS;                                 \
    rb[l] = b[bIndex(e, k0, n0, NV, KV)];                          \
  }
  // The registers into shared stage `stage`.
#define STAGE(stage)                                                  \
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                      \
    const int e = t + l * THREADS;                                    \
    aS[(stage) * A_STAGE + (e / A_VECS) * A_ROW + e % A_VECS] = ra[l]; \
  }                                                                   \
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                      \
    const int e = t + l * THREADS;                                    \
    bS[(stage) * B_STAGE + (e / B_VECS) * B_ROW + e % B_VECS] = rb[l]; \
  }
  // A k-step's fragments of a stage into fragment set `set`, and their multiply-adds.
#define LOAD_FRAGMENTS(set, stage, step)                                                     \
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)                                                 \
    coopMatLoadNV(pa[set][i], aS,                                                             \
                  uint((stage) * A_STAGE + (wm * FRAG_M + i) * 16 * A_ROW + (step) * 2),      \
                  uint(A_ROW), false);                                                        \
  [[unroll]] for (int j = 0; j < FRAG_N; ++j)                                                 \
    coopMatLoadNV(pb[set][j], bS, uint((stage) * B_STAGE + bFragment(step, wn * FRAG_N + j)), \
                  uint(B_ROW), B_T);
#define MULTIPLY(set)                           \
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)   \
    [[unroll]] for (int j = 0; j < FRAG_N; ++j) \
      acc[i][j] = coopMatMulAddNV(pa[set][i], pb[set][j], acc[i][j]);
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> pa[2][FRAG_M], pb[2][FRAG_N];

  if (SPECIALIZED) {
    const int chunks = p.K / K_CHUNK, consumers = WARPS_M * WARPS_N;
    if (t < 8) fullCount[t] = emptyCount[t] = 0u;
    barrier();
    if (warp >= consumers) {
      const int pt = t - 32 * consumers, lane = t % 32;
      uvec4 qa[P_A_LOADS], qb[P_B_LOADS];
      for (int chunk = 0; chunk < chunks; ++chunk) {
        const int s = chunk % STAGES, round = chunk / STAGES, k0 = chunk * K_CHUNK;
        [[unroll]] for (int l = 0; l < P_A_LOADS; ++l) {
          const int e = pt + l * P_THREADS;
          qa[l] = PARTS == 0 ? a[(m0 + e / A_VECS) * KV + k0 / 8 + e % A_VECS] : uvec4(0);
        }
        [[unroll]] for (int l = 0; l < P_B_LOADS; ++l) {
          const int e = pt + l * P_THREADS;
          qb[l] = PARTS == 0 ? b[bIndex(e, k0, n0, NV, KV)] : uvec4(0);
        }
        // The stage's previous chunk released by every consumer warp.
        if (round > 0)
          while (LOAD_COUNT(emptyCount[s]) < uint(consumers * round)) {
          }
        [[unroll]] for (int l = 0; l < P_A_LOADS; ++l) {
          const int e = pt + l * P_THREADS;
          aS[s * A_STAGE + (e / A_VECS) * A_ROW + e % A_VECS] = qa[l];
        }
        [[unroll]] for (int l = 0; l < P_B_LOADS; ++l) {
          const int e = pt + l * P_THREADS;
          bS[s * B_STAGE + (e / B_VECS) * B_ROW + e % B_VECS] = qb[l];
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        if (lane == 0) COUNT_ONE(fullCount[s]);
      }
      return;
    }
    for (int chunk = 0; chunk < chunks; ++chunk) {
      const int s = chunk % STAGES, round = chunk / STAGES;
      while (LOAD_COUNT(fullCount[s]) < uint(PRODUCERS * (round + 1))) {
      }
      [[unroll]] for (int step = 0; step < K_STEPS; ++step) {
        LOAD_FRAGMENTS(0, s, step)
        MULTIPLY(0)
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      if (t % 32 == 0) COUNT_ONE(emptyCount[s]);
    }
    [[unroll]] for (int i = 0; i < FRAG_M; ++i)
      [[unroll]] for (int j = 0; j < FRAG_N; ++j)
        coopMatStoreNV(fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(acc[i][j]), c,
                       uint((m0 + (wm * FRAG_M + i) * 16) * p.N + n0 + (wn * FRAG_N + j) * 16),
                       uint(p.N), false);
    return;
  }

  FETCH(0)
  STAGE(0)
  if (PARTS == 1 || PARTS == 2) {  // both stages, so that the loop still alternates between them
    STAGE(1)
  }
  barrier();
  const int chunks = p.K / K_CHUNK;
  // Not a constant: glslang 12 emits a spec-constant && that refers to itself ahead of its
  // definition. The driver folds it once specialized.
  bool pipelined = (MODE & 8) != 0;
  pipelined = pipelined && (K_STEPS & 1) == 0;
  if (PARTS == 3) {
    LOAD_FRAGMENTS(0, 0, 0)
    for (int chunk = 0; chunk < chunks; ++chunk)
      [[unroll]] for (int step = 0; step < K_STEPS; ++step) {
        MULTIPLY(0)
      }
  } else if (pipelined) {
    LOAD_FRAGMENTS(0, 0, 0)
    for (int chunk = 0; chunk < chunks; ++chunk) {
      const int stage = chunk & 1;
      const bool more = PARTS == 0 && chunk + 1 < chunks;
      if (more) {
        FETCH((chunk + 1) * K_CHUNK)
      }
      [[unroll]] for (int step = 0; step + 1 < K_STEPS; ++step) {
        LOAD_FRAGMENTS((step + 1) & 1, stage, step + 1)
        MULTIPLY(step & 1)
      }
      if (more) {
        STAGE(stage ^ 1)
      }
      if (PARTS <= 1) barrier();
      if (chunk + 1 < chunks) {
        LOAD_FRAGMENTS(0, stage ^ 1, 0)
      }
      MULTIPLY(1)
    }
  } else {
    for (int chunk = 0; chunk < chunks; ++chunk) {
      const int stage = chunk & 1;
      const bool more = PARTS == 0 && chunk + 1 < chunks;
      if (more) {
        FETCH((chunk + 1) * K_CHUNK)
      }
      [[unroll]] for (int step = 0; step < K_STEPS; ++step) {
        LOAD_FRAGMENTS(0, stage, step)
        MULTIPLY(0)
      }
      if (more) {
        STAGE(stage ^ 1)
      }
      if (PARTS <= 1) barrier();
    }
  }
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)
    [[unroll]] for (int j = 0; j < FRAG_N; ++j)
      coopMatStoreNV(fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(acc[i][j]), c,
                     uint((m0 + (wm * FRAG_M + i) * 16) * p.N + n0 + (wn * FRAG_N + j) * 16),
                     uint(p.N), false);
}
