// Dense convolution as an implicit GEMM tiled through shared memory: rows are destination pixels
// (of all images), columns destination slices (4 output channels each), and the reduction runs
// over (tap, input slice) pairs, k = tap * S + s with S = (inputFeatureChannels + 3) / 4.
//
// A workgroup computes a TILE_M x TILE_N tile (pixels x slices). Its invocations form SPLIT_K
// groups that each reduce a disjoint share of k and add their partial sums at the end: small
// layers (late layers at batch 1, fully connected layers) then still fill the GPU, where one
// invocation looping over all of k would leave it mostly idle and latency-bound.
//
// Weights (shared with convolution.glsl): mat4 blocks [outputSlice][k], stored as 4 vec4 columns;
// column c holds input channel 4s + c for output channels 4 * outputSlice + (0..3), so
// acc += W * x adds one input slice's contribution to one output slice.
//
// VKCNN_SLICE_AS_MULTIPLY_ADDS takes that product through addSlice (convolution_bindings.glsl),
// four fused multiply-adds a lane: in float32 on the H200 the 16 x 8 tiles run 3% faster with
// it, the 64 x 16 ones 4-11% slower (bench/NOTES.md, 2026-11-27, session 21).
//
// Each .comp including this file defines TILE_M, TILE_N, THREAD_M, THREAD_N, SPLIT_K and K_CHUNK,
// and sets local_size_x to (TILE_M / THREAD_M) * (TILE_N / THREAD_N) * SPLIT_K.
#ifndef VKCNN_CONVOLUTION_GEMM_GLSL
#define VKCNN_CONVOLUTION_GEMM_GLSL
#extension GL_EXT_control_flow_attributes : require

// The host picks these shaders only for destinations that start at a layer.
#define VKCNN_ALIGNED_DESTINATION
#include "convolution_bindings.glsl"

const int ROWS = TILE_M / THREAD_M;           // invocations along the pixels of a group
const int THREADS = ROWS * (TILE_N / THREAD_N);  // invocations per k group
const int A_SIZE = K_CHUNK * TILE_M;             // vec4 per k group
const int B_SIZE = K_CHUNK * TILE_N * 4;
const int GROUP_SIZE = A_SIZE + B_SIZE;
const int PARTIALS = (SPLIT_K - 1) * THREADS * THREAD_M * THREAD_N;
const int SHARED_SIZE = SPLIT_K * GROUP_SIZE > PARTIALS ? SPLIT_K * GROUP_SIZE : PARTIALS;

// The tiles while reducing, then the other k groups' partial sums.
shared vec4 tiles[SHARED_SIZE];

void main() {
  Geometry g = pc.geometry;
  ConvolutionParams cp = pc.convolution;
  const int lid = int(gl_LocalInvocationID.x);
  const int kGroup = lid / THREADS;
  const int t = lid % THREADS;
  const int row = t % ROWS, column = t / ROWS;
  const int pixels = g.clipWidth * g.clipHeight;
  const int rowCount = pixels * g.imageCount;
  const int m0 = int(gl_WorkGroupID.x) * TILE_M;
  const int n0 = int(gl_WorkGroupID.y) * TILE_N;
  const int S = (cp.inputChannelsPerGroup + 3) / 4;
  const int taps = cp.kernelWidth * cp.kernelHeight;
  const int K = taps * S;
  const ivec2 size = textureSize(uSource, 0).xy;

  // The pixel this invocation loads into the A tile: always the same one, as THREADS is a
  // multiple of TILE_M.
  const int loadRow = t % TILE_M;
  const int loadM = m0 + loadRow;
  const bool loadValid = loadM < rowCount;
  const int loadImage = loadValid ? loadM / pixels : 0;
  const int loadPixel = loadM - loadImage * pixels;
  const ivec2 loadOrigin =
      ivec2(loadPixel % g.clipWidth, loadPixel / g.clipWidth) * ivec2(cp.strideX, cp.strideY) +
      ivec2(g.offsetX, g.offsetY);
  const int outputSlices = (pc.destination.featureChannels + 3) / 4;

  vec4 acc[THREAD_M][THREAD_N];
  for (int i = 0; i < THREAD_M; ++i)
    for (int j = 0; j < THREAD_N; ++j) acc[i][j] = vec4(0.0);

  const int aBase = kGroup * GROUP_SIZE, bBase = aBase + A_SIZE;
  const int chunks = (K + K_CHUNK - 1) / K_CHUNK;
  for (int chunk0 = 0; chunk0 < chunks; chunk0 += SPLIT_K) {
    const int k0 = (chunk0 + kGroup) * K_CHUNK;  // past K for idle groups of the last round
    for (int kk = t / TILE_M; kk < K_CHUNK; kk += THREADS / TILE_M) {
      const int k = k0 + kk;
      vec4 x = vec4(0.0);
      if (loadValid && k < K) {
        const int tap = k / S, s = k - tap * S;
        const int ky = tap / cp.kernelWidth, kx = tap - ky * cp.kernelWidth;
        const ivec2 p = loadOrigin + ivec2(kx * cp.dilationX, ky * cp.dilationY);
        x = readSourceChannels(p, loadImage, 4 * s);
      }
      tiles[aBase + kk * TILE_M + loadRow] = x;
    }
    for (int idx = t; idx < B_SIZE; idx += THREADS) {
      const int c = idx & 3, kk = (idx >> 2) % K_CHUNK, j = (idx >> 2) / K_CHUNK;
      const int k = k0 + kk, n = n0 + j;
      tiles[bBase + (kk * TILE_N + j) * 4 + c] =
          (k < K && n < outputSlices) ? weights[(n * K + k) * 4 + c] : vec4(0.0);
    }
    barrier();
    for (int kk = 0; kk < K_CHUNK; ++kk) {
      vec4 x[THREAD_M];
      for (int i = 0; i < THREAD_M; ++i) x[i] = tiles[aBase + kk * TILE_M + row + i * ROWS];
      for (int j = 0; j < THREAD_N; ++j) {
        const int b = bBase + (kk * TILE_N + column + j * (TILE_N / THREAD_N)) * 4;
        const mat4 w = mat4(tiles[b], tiles[b + 1], tiles[b + 2], tiles[b + 3]);
#ifdef VKCNN_SLICE_AS_MULTIPLY_ADDS
        for (int i = 0; i < THREAD_M; ++i) acc[i][j] = addSlice(acc[i][j], w, x[i]);
#else
        for (int i = 0; i < THREAD_M; ++i) acc[i][j] += w * x[i];
#endif
      }
    }
    barrier();
  }

  if (SPLIT_K > 1) {
    if (kGroup > 0)
      for (int i = 0; i < THREAD_M; ++i)
        for (int j = 0; j < THREAD_N; ++j)
          tiles[(((kGroup - 1) * THREADS + t) * THREAD_M + i) * THREAD_N + j] = acc[i][j];
    barrier();
    if (kGroup > 0) return;
    for (int q = 0; q < SPLIT_K - 1; ++q)
      for (int i = 0; i < THREAD_M; ++i)
        for (int j = 0; j < THREAD_N; ++j)
          acc[i][j] += tiles[((q * THREADS + t) * THREAD_M + i) * THREAD_N + j];
  }

  // The driver does not unroll this epilogue (too large), and one run-time index into acc put the
  // whole array in local memory: every FMA above a load and a store, the float32 path 2x slower
  // (bench/NOTES.md, 2026-11-25). So its loops stay loops and pick their accumulator through
  // constant indices, as in convolution_gemm_staged.glsl.
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
      const int n = n0 + column + j * (TILE_N / THREAD_N);
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
