#version 450
// Winograd F(4x4,3x3), the 36 per-position GEMMs (winograd.glsl): for position p (the dispatch's
// z), products[row][p][T] = transformed[row][p][S] x weights[p][S][T], in vec4 elements and
// mat4 weight blocks (column c of block (n, k): input channel 4k + c for output channels 4n..4n+3,
// as convolution_gemm.glsl's). Float32 throughout, also for float16 images: the transforms'
// sums and differences would lose more in float16.
//
// convolution_gemm_staged.glsl's arithmetic and stages (128 rows x TILE_N slices a workgroup, 8 x 1
// outputs an invocation, 4-deep chunks, two shared stages), with operands from buffers: A is read
// with the chunk's 4 slices of a row on 4 neighbouring lanes (a row's 64 contiguous bytes), and
// stored XOR-swizzled (row ^ 2 * k) so that those lanes hit 8 distinct 16-byte bank groups while the
// compute loop's reads, 16 consecutive rows, stay conflict-free.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 0) const int TILE_N = 32;  // output slices a workgroup: 16 or 32
layout(local_size_x = 512, local_size_x_id = 1) in;  // 16 * TILE_N

#include "convolution_interface.h"
#include "slice_product.glsl"

layout(set = 0, binding = 0, std430) readonly buffer Transformed { vec4 transformed[]; };
layout(set = 0, binding = 1, std430) readonly buffer Weights { vec4 weights[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Products { vec4 products[]; };
layout(push_constant) uniform Push { WinogradGemmPush pc; };

const int TILE_M = 128;
const int THREAD_M = 8;
const int K_CHUNK = 4;
const int ROWS = TILE_M / THREAD_M;  // invocations along the rows
const int THREADS = ROWS * TILE_N;
const int A_SIZE = K_CHUNK * TILE_M;  // vec4 a stage
const int B_SIZE = K_CHUNK * TILE_N * 4;
const int STAGE = A_SIZE + B_SIZE;
const int A_LOADS = A_SIZE / THREADS;
const int B_LOADS = B_SIZE / THREADS;

shared vec4 tiles[2 * STAGE];

void main() {
  const int t = int(gl_LocalInvocationID.x);
  const int row = t % ROWS, column = t / ROWS;
  const int rows = pc.rows, S = pc.inputSlices, T = pc.outputSlices;
  const int p = int(gl_WorkGroupID.z);
  const int m0 = int(gl_WorkGroupID.x) * TILE_M;
  const int n0 = int(gl_WorkGroupID.y) * TILE_N;
  const int aBase = pc.sourceFirst + p * S;  // row m's slices at aBase + m * 36 * S
  const int bBase = pc.weightsFirst + p * T * S * 4;

  vec4 aNext[A_LOADS];
  vec4 bNext[B_LOADS];
  // Chunk `chunk` into aNext / bNext; zero past S, the rows and the output slices.
#define VKCNN_FETCH(chunk)                                                                     \
  {                                                                                            \
    const int k0 = (chunk) * K_CHUNK;                                                          \
    [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                                             \
      const int idx = t + l * THREADS;                                                         \
      const int k = k0 + idx % K_CHUNK, m = m0 + idx / K_CHUNK;                                \
      aNext[l] = (k < S && m < rows) ? transformed[aBase + m * 36 * S + k] : vec4(0.0);        \
    }                                                                                          \
    [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                                             \
      const int idx = t + l * THREADS;                                                         \
      const int c = idx & 3, kk = (idx >> 2) % K_CHUNK, j = (idx >> 2) / K_CHUNK;              \
      const int k = k0 + kk, n = n0 + j;                                                       \
      bNext[l] = (k < S && n < T) ? weights[bBase + (n * S + k) * 4 + c] : vec4(0.0);          \
    }                                                                                          \
  }
#define VKCNN_STORE(stage)                                                                     \
  {                                                                                            \
    const int base = (stage) * STAGE;                                                          \
    [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                                             \
      const int idx = t + l * THREADS;                                                         \
      const int kk = idx % K_CHUNK, m = idx / K_CHUNK;                                         \
      tiles[base + kk * TILE_M + (m ^ (2 * kk))] = aNext[l];                                   \
    }                                                                                          \
    [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                                             \
      const int idx = t + l * THREADS;                                                         \
      const int c = idx & 3, kk = (idx >> 2) % K_CHUNK, j = (idx >> 2) / K_CHUNK;              \
      tiles[base + A_SIZE + (kk * TILE_N + j) * 4 + c] = bNext[l];                             \
    }                                                                                          \
  }

  vec4 acc[THREAD_M];
  [[unroll]] for (int i = 0; i < THREAD_M; ++i) acc[i] = vec4(0.0);

  const int chunks = (S + K_CHUNK - 1) / K_CHUNK;
  VKCNN_FETCH(0)
  VKCNN_STORE(0)
  barrier();
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const bool more = chunk + 1 < chunks;
    if (more) VKCNN_FETCH(chunk + 1)
    const int aStage = (chunk & 1) * STAGE, bStage = aStage + A_SIZE;
    [[unroll]] for (int kk = 0; kk < K_CHUNK; ++kk) {
      vec4 x[THREAD_M];
      [[unroll]] for (int i = 0; i < THREAD_M; ++i)
        x[i] = tiles[aStage + kk * TILE_M + ((row + i * ROWS) ^ (2 * kk))];
      const int b = bStage + (kk * TILE_N + column) * 4;
      const mat4 w = mat4(tiles[b], tiles[b + 1], tiles[b + 2], tiles[b + 3]);
      [[unroll]] for (int i = 0; i < THREAD_M; ++i) acc[i] = addSlice(acc[i], w, x[i]);
    }
    if (more) VKCNN_STORE((chunk + 1) & 1)
    barrier();
  }
#undef VKCNN_FETCH
#undef VKCNN_STORE

  const int n = n0 + column;
  if (n >= T) return;
  const int cBase = pc.destinationFirst + p * T + n;
  [[unroll]] for (int i = 0; i < THREAD_M; ++i) {
    const int m = m0 + row + i * ROWS;
    if (m < rows) products[cBase + m * 36 * T] = acc[i];
  }
}
