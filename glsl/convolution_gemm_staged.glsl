// Dense convolution as an implicit GEMM in large register tiles with two shared-memory stages: the
// portable path (float32, and float16 destinations on devices without matrix units) for layers
// with many outputs. The GEMM is convolution_gemm.glsl's (rows destination pixels of all images,
// columns destination slices, k = tap * S + s over (tap, input slice) pairs, weights as mat4
// blocks [outputSlice][k]); what differs is how a chunk of k reaches the arithmetic:
//
// - Each invocation accumulates THREAD_M pixels x THREAD_N slices, so that one chunk step reads
//   THREAD_M texels and THREAD_N mat4 blocks from shared memory for 16 * THREAD_M * THREAD_N FMAs
//   (4 x 2 in convolution_gemm.glsl: twice the FMAs per shared load at 8 x 2; 8 x 4 with 128
//   invocations needed 255 registers and spilled, and ran at half the speed of 8 x 2).
// - Two stages: chunk c + 1 is fetched into registers before chunk c is computed from shared
//   memory, and stored into the other stage only after the FMAs, so that the fetches' latency
//   hides behind them; one barrier per chunk (the stage written in step c was last read in step
//   c - 1, before that step's barrier).
// - Each slice's product is four fused multiply-adds a lane (addSlice): 7% faster in float32
//   than `acc += w * x` (bench/NOTES.md, 2026-11-27, session 21).
// - Every loop has compile-time bounds and [[unroll]]: accumulators indexed at run time would live
//   in local memory (bench/NOTES.md, issue #11).
// Shared rows are read as consecutive vec4 (A: a warp's pixels are consecutive; B: a warp reads a
// few mat4 blocks, broadcast), so they need no padding against bank conflicts.
//
// Each .comp including this file defines TILE_M, TILE_N, THREAD_M, THREAD_N and K_CHUNK, and sets
// local_size_x to THREADS below; THREADS must be a multiple of TILE_M, and both tiles' sizes
// multiples of THREADS.
#ifndef VKCNN_CONVOLUTION_GEMM_STAGED_GLSL
#define VKCNN_CONVOLUTION_GEMM_STAGED_GLSL

#extension GL_EXT_control_flow_attributes : require

// The host picks these shaders only for destinations that start at a layer.
#define VKCNN_ALIGNED_DESTINATION
#include "convolution_bindings.glsl"

const int ROWS = TILE_M / THREAD_M;              // invocations along the pixels
const int COLUMNS = TILE_N / THREAD_N;           // invocations along the slices
const int THREADS = ROWS * COLUMNS;
const int A_SIZE = K_CHUNK * TILE_M;             // vec4 per stage
const int B_SIZE = K_CHUNK * TILE_N * 4;
const int STAGE = A_SIZE + B_SIZE;
const int A_LOADS = A_SIZE / THREADS;            // texels each invocation fetches per chunk
const int B_LOADS = B_SIZE / THREADS;            // weight vec4 each invocation loads per chunk
const int K_STEP = THREADS / TILE_M;             // chunk rows between one invocation's texels

shared vec4 tiles[2 * STAGE];

void main() {
  Geometry g = pc.geometry;
  ConvolutionParams cp = pc.convolution;
  const int t = int(gl_LocalInvocationID.x);
  const int row = t % ROWS, column = t / ROWS;
  const int pixels = g.clipWidth * g.clipHeight;
  const int rowCount = pixels * g.imageCount;
  const int m0 = int(gl_WorkGroupID.x) * TILE_M;
  const int n0 = int(gl_WorkGroupID.y) * TILE_N;
  const int S = (cp.inputChannelsPerGroup + 3) / 4;
  const int K = cp.kernelWidth * cp.kernelHeight * S;
  const int outputSlices = (pc.destination.featureChannels + 3) / 4;

  // The pixel this invocation fetches into the A tile: always the same one.
  const int loadRow = t % TILE_M;
  const int loadM = m0 + loadRow;
  const bool loadValid = loadM < rowCount;
  const int loadImage = loadValid ? loadM / pixels : 0;
  const int loadPixel = loadM - loadImage * pixels;
  const ivec2 loadOrigin =
      ivec2(loadPixel % g.clipWidth, loadPixel / g.clipWidth) * ivec2(cp.strideX, cp.strideY) +
      ivec2(g.offsetX, g.offsetY);
  const int kFirst = t / TILE_M;

  vec4 aNext[A_LOADS];
  vec4 bNext[B_LOADS];
  // Fetches chunk `chunk` into aNext / bNext; zero past K, past the pixels and past the slices.
#define VKCNN_FETCH(chunk)                                                                     \
  {                                                                                            \
    const int k0 = (chunk) * K_CHUNK;                                                          \
    [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                                             \
      const int k = k0 + kFirst + l * K_STEP;                                                  \
      aNext[l] = vec4(0.0);                                                                    \
      if (loadValid && k < K) {                                                                \
        const int tap = k / S, s = k - tap * S;                                                \
        const int ky = tap / cp.kernelWidth, kx = tap - ky * cp.kernelWidth;                   \
        const ivec2 p = loadOrigin + ivec2(kx * cp.dilationX, ky * cp.dilationY);              \
        aNext[l] = readSourceChannels(p, loadImage, 4 * s);                                    \
      }                                                                                        \
    }                                                                                          \
    [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                                             \
      const int idx = t + l * THREADS;                                                         \
      const int c = idx & 3, kk = (idx >> 2) % K_CHUNK, j = (idx >> 2) / K_CHUNK;              \
      const int k = k0 + kk, n = n0 + j;                                                       \
      bNext[l] = (k < K && n < outputSlices) ? weights[(n * K + k) * 4 + c] : vec4(0.0);       \
    }                                                                                          \
  }
  // Stores aNext / bNext into stage `stage`.
#define VKCNN_STORE(stage)                                                                     \
  {                                                                                            \
    const int base = (stage) * STAGE;                                                          \
    [[unroll]] for (int l = 0; l < A_LOADS; ++l)                                               \
      tiles[base + (kFirst + l * K_STEP) * TILE_M + loadRow] = aNext[l];                        \
    [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                                             \
      const int idx = t + l * THREADS;                                                         \
      const int c = idx & 3, kk = (idx >> 2) % K_CHUNK, j = (idx >> 2) / K_CHUNK;              \
      tiles[base + A_SIZE + (kk * TILE_N + j) * 4 + c] = bNext[l];                             \
    }                                                                                          \
  }

  vec4 acc[THREAD_M][THREAD_N];
  [[unroll]] for (int i = 0; i < THREAD_M; ++i)
    [[unroll]] for (int j = 0; j < THREAD_N; ++j) acc[i][j] = vec4(0.0);

  const int chunks = (K + K_CHUNK - 1) / K_CHUNK;
  VKCNN_FETCH(0)
  VKCNN_STORE(0)
  barrier();
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const bool more = chunk + 1 < chunks;
    if (more) VKCNN_FETCH(chunk + 1)
    const int aBase = (chunk & 1) * STAGE, bBase = aBase + A_SIZE;
    [[unroll]] for (int kk = 0; kk < K_CHUNK; ++kk) {
      vec4 x[THREAD_M];
      [[unroll]] for (int i = 0; i < THREAD_M; ++i)
        x[i] = tiles[aBase + kk * TILE_M + row + i * ROWS];
      [[unroll]] for (int j = 0; j < THREAD_N; ++j) {
        const int b = bBase + (kk * TILE_N + column + j * COLUMNS) * 4;
        const mat4 w = mat4(tiles[b], tiles[b + 1], tiles[b + 2], tiles[b + 3]);
        [[unroll]] for (int i = 0; i < THREAD_M; ++i) acc[i][j] = addSlice(acc[i][j], w, x[i]);
      }
    }
    if (more) VKCNN_STORE((chunk + 1) & 1)
    barrier();
  }
#undef VKCNN_FETCH
#undef VKCNN_STORE

  // The epilogue is too large to unroll THREAD_M x THREAD_N times, and one run-time index into acc
  // would put the whole array in local memory (every FMA above then a load and a store: the old
  // tiles ran at 5-10 TFLOP/s that way, bench/NOTES.md). So its loops stay loops and pick their
  // accumulator through constant indices.
  [[dont_unroll]] for (int i = 0; i < THREAD_M; ++i) {
    const int m = m0 + row + i * ROWS;
    if (m >= rowCount) break;
    vec4 sums[THREAD_N];
    [[unroll]] for (int j = 0; j < THREAD_N; ++j) sums[j] = acc[0][j];
    [[unroll]] for (int q = 1; q < THREAD_M; ++q)
      if (i == q) [[unroll]] for (int j = 0; j < THREAD_N; ++j) sums[j] = acc[q][j];
    const int img = m / pixels, pixel = m - img * pixels;
    const ivec2 p = ivec2(g.clipX + pixel % g.clipWidth, g.clipY + pixel / g.clipWidth);
    [[dont_unroll]] for (int j = 0; j < THREAD_N; ++j) {
      const int n = n0 + column + j * COLUMNS;
      if (n >= g.slices) break;
      vec4 sum = sums[0];
      [[unroll]] for (int q = 1; q < THREAD_N; ++q)
        if (j == q) sum = sums[q];
      // Lanes past the output channels compute a clamped channel; writeSlice drops them.
      const ivec4 oc = min(ivec4(4 * n) + ivec4(0, 1, 2, 3), pc.destination.featureChannels - 1);
      writeSlice(pc.destination, p, img, n, convolutionOutput(p, img, n, oc, sum));
    }
  }
}

#endif
