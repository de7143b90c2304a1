// Dense convolution as an implicit GEMM on the matrix units (GL_NV_cooperative_matrix): float16
// operands, float32 accumulation. Used for float16 destinations on devices that expose it; the
// portable path is convolution_gemm.glsl.
//
// Rows are destination pixels (of all images), columns output channels, and the reduction runs
// over k = (tap * S + s) * 4 + c, input channel 4s + c of the tap, S = (inputFeatureChannels+3)/4.
// The workgroup's warps form SPLIT_K groups of WARPS_M x WARPS_N warps; each group reduces a
// disjoint share of the k chunks of a TILE_M x TILE_N tile, each warp FRAG_M x FRAG_N fragments
// of 16 x 16, and the groups' partial sums are added in the epilogue. The source window is copied
// into shared memory (the im2col step), and so is the chunk's slice of the weights, a row-major
// float16 [kRows][columns] matrix padded with zeros to whole tiles; both are fetched into
// registers one round ahead.
//
// Each .comp including this file defines WARPS_M, WARPS_N, FRAG_M, FRAG_N, SPLIT_K and K_STEPS
// (16-deep steps per chunk), and sets local_size_x to 32 * WARPS_M * WARPS_N * SPLIT_K.
#ifndef VKCNN_CONVOLUTION_MATRIX_GLSL
#define VKCNN_CONVOLUTION_MATRIX_GLSL

#ifndef VKCNN_REFLECTION
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#endif
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

// The host picks these shaders only for destinations that start at a layer.
#define VKCNN_ALIGNED_DESTINATION
#define VKCNN_WEIGHT_TYPE uvec4  // 8 float16
#include "convolution_bindings.glsl"
#include "convolution_tiles.h"

const int TILE_M = WARPS_M * FRAG_M * 16;
const int TILE_N = WARPS_N * FRAG_N * 16;
const int K_CHUNK = 16 * K_STEPS;
const int GROUP_THREADS = 32 * WARPS_M * WARPS_N;
const int SLOTS = K_CHUNK / 4;         // texels (4 channels) per pixel per chunk
const int A_SIZE = TILE_M * SLOTS;     // uvec2 (4 packed float16) per k group
const int C_SIZE = TILE_M * TILE_N;   // float per k group

// Row-major [pixel][slot]; 4 float16 packed per uvec2, so that a warp's stores of consecutive
// slots are consecutive (single float16 stores down a column would all hit one bank).
shared uvec2 aTiles[SPLIT_K * A_SIZE];
// Row-major [k][column], 8 float16 per uvec4.
const int B_ROW = TILE_N / 8;
const int B_SIZE = K_CHUNK * B_ROW;
shared uvec4 bTiles[SPLIT_K * B_SIZE];
const int B_LOADS = B_SIZE / GROUP_THREADS;
shared float cTiles[SPLIT_K * C_SIZE];

// Texels an invocation loads into the A tile per round: one slot of the chunk (t % SLOTS) for
// LOADS pixels (rows t / SLOTS + l * ROW_STEP).
const int ROW_STEP = GROUP_THREADS / SLOTS;
const int LOADS = TILE_M / ROW_STEP;

// Every loop over LOADS, B_LOADS and the fragments is [[unroll]]ed: the H100's compiler did not
// unroll all of them in the larger tiles, and an array indexed at run time lives in local memory
// for the whole shader (160 and 288 bytes in matrix_large and matrix_medium; bench/NOTES.md,
// 2026-11-25, shader audit).
struct LoadRows {
  ivec2 origin[LOADS];
  int image[LOADS];
  bool valid[LOADS];
};

// A round's source activation (SOURCE_ACTIVATION), applied when the texels are stored: applied at
// fetch, it would wait for them there, before the matrix steps they are fetched to hide behind.
// Bit l of `inside`: texel l was read (inside the source, the rows and the reduction); the others
// stay zero.
struct RoundActivation {
  SourceAffine affine;
  uint inside;
};

// Fetches this invocation's texels of k chunk `chunk` (zero past the reduction or the rows).
void fetchRound(out vec4 x[LOADS], out RoundActivation activation, int chunk, int slots, int S,
                LoadRows rows, int t) {
  ConvolutionParams cp = pc.convolution;
  const int slot = chunk * SLOTS + t % SLOTS;
  const int tap = slot / S, s = slot - tap * S;
  const int ky = tap / cp.kernelWidth, kx = tap - ky * cp.kernelWidth;
  const ivec2 d = ivec2(kx * cp.dilationX, ky * cp.dilationY);
  activation.inside = 0u;
  ivec2 size = ivec2(0);
  if (SOURCE_ACTIVATION != 0) {
    activation.affine = sourceAffineOf(4 * s);
    size = textureSize(uSource, 0).xy;
  }
  [[unroll]] for (int l = 0; l < LOADS; ++l) {
    x[l] = vec4(0.0);
    const ivec2 p = rows.origin[l] + d;
    if (rows.valid[l] && slot < slots) {
      x[l] = readChannels(uSource, pc.source, p, rows.image[l], 4 * s);
      if (SOURCE_ACTIVATION != 0 && all(lessThan(uvec2(p), uvec2(size))))
        activation.inside |= 1u << l;
    }
  }
}

// The texels of a round as the convolution reads them (SOURCE_ACTIVATION).
void activateRound(inout vec4 x[LOADS], RoundActivation activation) {
  if (SOURCE_ACTIVATION == 0) return;
  [[unroll]] for (int l = 0; l < LOADS; ++l)
    x[l] = (activation.inside & (1u << l)) != 0u ? activateSource(x[l], activation.affine)
                                                  : vec4(0.0);
}

#ifdef VKCNN_REFLECTION
// The build SPIRV-Cross reflects (see cmake/VkcnnShaders.cmake): every binding used.
void main() {
  storeTexel(ivec3(0),
             texelFetch(uSource, ivec3(0), 0) + texelFetch(uResidual, ivec3(0), 0) +
                 float(weights[0].x) + bias[0] + slopes[0] + float(pc.geometry.clipX));
}
#else
void main() {
  Geometry g = pc.geometry;
  ConvolutionParams cp = pc.convolution;
  const int lid = int(gl_LocalInvocationID.x);
  const int kGroup = lid / GROUP_THREADS;
  const int t = lid % GROUP_THREADS;
  const int warp = t / 32;
  const int warpM = warp % WARPS_M, warpN = warp / WARPS_M;
  const int pixels = g.clipWidth * g.clipHeight;
  const int rowCount = pixels * g.imageCount;
  const int m0 = int(gl_WorkGroupID.x) * TILE_M;
  const int n0 = int(gl_WorkGroupID.y) * TILE_N;
  const int S = (cp.inputChannelsPerGroup + 3) / 4;
  const int slots = cp.kernelWidth * cp.kernelHeight * S;  // k / 4
  const int K = slots * 4;
  // Columns of the weight matrix: the output channels padded (convolution_tiles.h).
  const int columns = (pc.destination.featureChannels + VKCNN_MATRIX_COLUMN_ALIGN - 1) /
                      VKCNN_MATRIX_COLUMN_ALIGN * VKCNN_MATRIX_COLUMN_ALIGN;

  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FRAG_M][FRAG_N];
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)
    [[unroll]] for (int j = 0; j < FRAG_N; ++j)
      acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

  LoadRows rows;
  [[unroll]] for (int l = 0; l < LOADS; ++l) {
    const int m = m0 + t / SLOTS + l * ROW_STEP;
    rows.valid[l] = m < rowCount;
    rows.image[l] = rows.valid[l] ? m / pixels : 0;
    const int pixel = m - rows.image[l] * pixels;
    rows.origin[l] =
        ivec2(pixel % g.clipWidth, pixel / g.clipWidth) * ivec2(cp.strideX, cp.strideY) +
        ivec2(g.offsetX, g.offsetY);
  }

  const int aBase = kGroup * A_SIZE;
  const int chunks = (K + K_CHUNK - 1) / K_CHUNK;
  // The next round's source texels are fetched into registers while this round's tile is on the
  // matrix units: with one or two workgroups per multiprocessor there are too few warps to hide
  // the fetch latency any other way.
  vec4 next[LOADS];
  RoundActivation nextActivation;
  fetchRound(next, nextActivation, kGroup, slots, S, rows, t);
  const int bBase = kGroup * B_SIZE;
  const int rowsOfWeights =
      (K + VKCNN_MATRIX_ROW_ALIGN - 1) / VKCNN_MATRIX_ROW_ALIGN * VKCNN_MATRIX_ROW_ALIGN;
  uvec4 nextB[B_LOADS];
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {
    const int e = t + l * GROUP_THREADS, k = kGroup * K_CHUNK + e / B_ROW;
    nextB[l] = k < rowsOfWeights ? weights[(k * columns + n0) / 8 + e % B_ROW] : uvec4(0);
  }
  for (int chunk0 = 0; chunk0 < chunks; chunk0 += SPLIT_K) {
    const int chunk = chunk0 + kGroup;  // past the end for idle groups of the last round
    activateRound(next, nextActivation);
    [[unroll]] for (int l = 0; l < LOADS; ++l)
      aTiles[aBase + (t / SLOTS + l * ROW_STEP) * SLOTS + t % SLOTS] =
          uvec2(packHalf2x16(next[l].xy), packHalf2x16(next[l].zw));
    [[unroll]] for (int l = 0; l < B_LOADS; ++l) bTiles[bBase + t + l * GROUP_THREADS] = nextB[l];
    barrier();
    fetchRound(next, nextActivation, chunk + SPLIT_K, slots, S, rows, t);
    [[unroll]] for (int l = 0; l < B_LOADS; ++l) {
      const int e = t + l * GROUP_THREADS, k = (chunk + SPLIT_K) * K_CHUNK + e / B_ROW;
      nextB[l] = k < rowsOfWeights ? weights[(k * columns + n0) / 8 + e % B_ROW] : uvec4(0);
    }
    if (chunk < chunks) {
      [[unroll]] for (int step = 0; step < K_STEPS; ++step) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[FRAG_M], b[FRAG_N];
        [[unroll]] for (int j = 0; j < FRAG_N; ++j)
          coopMatLoadNV(b[j], bTiles,
                        uint(bBase + step * 16 * B_ROW + (warpN * FRAG_N + j) * 2), uint(B_ROW),
                        false);
        [[unroll]] for (int i = 0; i < FRAG_M; ++i)
          coopMatLoadNV(a[i], aTiles,
                        uint(aBase + (warpM * FRAG_M + i) * 16 * SLOTS + step * 4), uint(SLOTS),
                        false);
        [[unroll]] for (int j = 0; j < FRAG_N; ++j)
          [[unroll]] for (int i = 0; i < FRAG_M; ++i)
            acc[i][j] = coopMatMulAddNV(a[i], b[j], acc[i][j]);
      }
    }
    barrier();
  }

  [[unroll]] for (int i = 0; i < FRAG_M; ++i)
    [[unroll]] for (int j = 0; j < FRAG_N; ++j)
      coopMatStoreNV(acc[i][j], cTiles,
                     uint(kGroup * C_SIZE + (warpM * FRAG_M + i) * 16 * TILE_N +
                          (warpN * FRAG_N + j) * 16),
                     uint(TILE_N), false);
  barrier();

  // Epilogue: every invocation of the workgroup takes (pixel, slice) pairs of the tile.
  for (int e = lid; e < TILE_M * (TILE_N / 4); e += GROUP_THREADS * SPLIT_K) {
    const int row = e % TILE_M, j = e / TILE_M;
    const int m = m0 + row, n = n0 / 4 + j;
    if (m >= rowCount || n >= g.slices) continue;
    vec4 sum = vec4(0.0);
    for (int q = 0; q < SPLIT_K; ++q) {
      const int at = q * C_SIZE + row * TILE_N + 4 * j;
      sum += vec4(cTiles[at], cTiles[at + 1], cTiles[at + 2], cTiles[at + 3]);
    }
    const int img = m / pixels, pixel = m - img * pixels;
    const ivec2 p = ivec2(g.clipX + pixel % g.clipWidth, g.clipY + pixel / g.clipWidth);
    // Lanes past the output channels compute a clamped channel; writeSlice drops them.
    const ivec4 oc = min(ivec4(4 * n) + ivec4(0, 1, 2, 3), pc.destination.featureChannels - 1);
    writeSlice(pc.destination, p, img, n, convolutionOutput(p, img, n, oc, sum));
  }
}
#endif

#endif
