#version 450
// Fully connected layers over a batch on the matrix units (FullyConnected::encodeBatch, float16
// networks): partials[split][row][column] = source[rows][inputs of the split] x weights^T, in
// float32; fully_connected_reduce.comp adds the splits in order (deterministic), the bias and the
// neuron. At batch 32 a layer has 32 rows against thousands of columns and inputs, and it streams
// its weights once: the work is split along the inputs so that every multiprocessor streams a
// part (vgg16's fc6: 64 column tiles x 2 splits on an H100).
//
// A workgroup of 4 warps owns TILE_M rows (images) x TILE_N columns (destination channels) of
// one split, K_CHUNK inputs a stage; the warps split the columns into fragments of 16 and, where
// there are fewer than 4 fragments, each stage's 16-deep steps (WARPS_K groups), each group
// writing partials of its own (the host counts splits x WARPS_K). The source is the gathered
// Tensor [images][inputs] (float16, inputs = taps x channels, a multiple of 4); the weights are
// the float16 copy of convolution.glsl's mat4 blocks [slice][k] (column c of block (t, k) holds
// input 4k + c for the 4 destination channels of slice t), read as they are and turned into a
// row-major [inputs][columns] stage in shared memory, 8 bytes at a time. Rows past the images and
// inputs past the layer's read as zero; the partials hold whole tiles (the host pads them).
#extension GL_GOOGLE_include_directive : require
// vkcnn-build: reflect-separately (SPIRV-Cross cannot parse cooperative matrices)
#ifndef VKCNN_REFLECTION
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#endif
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;
// From the host's table (kFullyConnectedMatrixTiles, convolution_tiles.h).
layout(constant_id = 0) const int FRAG_M = 2;   // 16-row fragments of images a workgroup
layout(constant_id = 1) const int TILE_N = 64;  // 16, 32 or 64
layout(constant_id = 2) const int K_CHUNK = 64; // a multiple of 16 x 4 / (TILE_N / 16)

#include "convolution_interface.h"

layout(set = 0, binding = 0, std430) readonly buffer Source { uvec2 source[]; };  // 4 float16
layout(set = 0, binding = 1, std430) readonly buffer Weights { uvec4 weights[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Partials { uvec4 partials[]; };  // 4 float
layout(push_constant) uniform Push { FullyConnectedMatrixPush pc; };

#ifdef VKCNN_REFLECTION
// The build SPIRV-Cross reflects (see cmake/VkcnnShaders.cmake): every binding used.
void main() {
  partials[0] = weights[0] + uvec4(source[0], uvec2(pc.imageCount));
}
#else
const int THREADS = 128;
const int TILE_M = 16 * FRAG_M;
const int WARPS_N = TILE_N / 16;
const int WARPS_K = 4 / WARPS_N;
const int STEPS = K_CHUNK / 16 / WARPS_K;  // 16-deep steps a warp takes of each stage
const int A_VECS = K_CHUNK / 4;            // uvec2 (4 float16) a source row of a stage
const int B_HALVES = K_CHUNK / 2;          // half blocks (uvec4) a slice of a stage
const int A_ROW = A_VECS + 2;              // uvec2 a staged source row, padded by 16 bytes
const int B_ROW = TILE_N / 4 + 2;          // uvec2 a staged weight row (one input), likewise
const int A_STAGE = TILE_M * A_ROW;
const int B_STAGE = K_CHUNK * B_ROW;
const int A_LOADS = TILE_M * A_VECS / THREADS;
const int B_LOADS = (TILE_N / 4) * B_HALVES / THREADS;
shared uvec2 aS[2 * A_STAGE];
shared uvec2 bS[2 * B_STAGE];

void main() {
  const int t = int(gl_LocalInvocationID.x), warp = t / 32;
  const int wn = warp % WARPS_N, wk = warp / WARPS_N;
  const int n0 = int(gl_WorkGroupID.x) * TILE_N;
  const int split = int(gl_WorkGroupID.y);
  const int m0 = int(gl_WorkGroupID.z) * TILE_M;
  const int inputs = pc.inputs, blocks = inputs / 4, slices = (pc.destinationChannels + 3) / 4;
  const int chunks = (inputs + K_CHUNK - 1) / K_CHUNK;
  const int firstChunk = split * pc.chunksPerSplit;
  const int lastChunk = min(firstChunk + pc.chunksPerSplit, chunks);

  fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FRAG_M];
  [[unroll]] for (int i = 0; i < FRAG_M; ++i) acc[i] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> pa[FRAG_M], pb;
  uvec2 ra[A_LOADS];
  uvec4 rb[B_LOADS];
  // The chunk at input k0 into registers: source rows of 16 uvec2, weight slices of 16 blocks.
#define FETCH(k0)                                                                        \
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                                         \
    const int e = t + l * THREADS, row = m0 + e / A_VECS, q = (k0) / 4 + e % A_VECS;     \
    ra[l] = row < pc.imageCount && q < blocks                                            \
                ? source[pc.sourceFirst / 4 + row * blocks + q]                          \
                : uvec2(0);                                                              \
  }                                                                                      \
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                                         \
    const int e = t + l * THREADS;                                                       \
    const int slice = n0 / 4 + e / B_HALVES, k = (k0) / 4 + (e % B_HALVES) / 2;          \
    rb[l] = slice < slices && k < blocks ? weights[2 * (slice * blocks + k) + e % 2]     \
                                         : uvec4(0);                                     \
  }
  // The registers into shared stage `stage`: a half block is inputs 4k + 2h and 4k + 2h + 1 of
  // its slice's 4 columns.
#define STAGE(stage)                                                                     \
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                                         \
    const int e = t + l * THREADS;                                                       \
    aS[(stage) * A_STAGE + (e / A_VECS) * A_ROW + e % A_VECS] = ra[l];                   \
  }                                                                                      \
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                                         \
    const int e = t + l * THREADS, column = e / B_HALVES;                                \
    const int i = 4 * ((e % B_HALVES) / 2) + 2 * (e % 2);                                \
    bS[(stage) * B_STAGE + i * B_ROW + column] = rb[l].xy;                               \
    bS[(stage) * B_STAGE + (i + 1) * B_ROW + column] = rb[l].zw;                         \
  }

  if (firstChunk < lastChunk) {
    FETCH(firstChunk * K_CHUNK)
    STAGE(0)
  }
  barrier();
  for (int chunk = firstChunk; chunk < lastChunk; ++chunk) {
    const int stage = (chunk - firstChunk) & 1;
    const bool more = chunk + 1 < lastChunk;
    if (more) {
      FETCH((chunk + 1) * K_CHUNK)
    }
    [[unroll]] for (int s = 0; s < STEPS; ++s) {
      const int step = wk * STEPS + s;
      [[unroll]] for (int i = 0; i < FRAG_M; ++i)
        coopMatLoadNV(pa[i], aS, uint(stage * A_STAGE + i * 16 * A_ROW + step * 4), uint(A_ROW),
                      false);
      coopMatLoadNV(pb, bS, uint(stage * B_STAGE + step * 16 * B_ROW + wn * 4), uint(B_ROW),
                    false);
      [[unroll]] for (int i = 0; i < FRAG_M; ++i) acc[i] = coopMatMulAddNV(pa[i], pb, acc[i]);
    }
    if (more) {
      STAGE(stage ^ 1)
    }
    barrier();
  }
  // In uvec4 (4 floats): the partials' row stride and this warp's first element (its step group's
  // own split).
  const int columnsQ = pc.partialColumns / 4;
  const int first = pc.partialsFirst / 4 + ((split * WARPS_K + wk) * pc.partialRows + m0) * columnsQ +
                    (n0 + wn * 16) / 4;
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)
    coopMatStoreNV(acc[i], partials, uint(first + i * 16 * columnsQ), uint(columnsQ), false);
}
#endif
