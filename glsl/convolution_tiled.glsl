// Dense convolution as an implicit GEMM on the matrix units (GL_NV_cooperative_matrix, float16
// operands, float32 accumulation or float16: below) in large tiles: the layers with enough output
// pixels to give every multiprocessor a tile (convolution.cpp picks; convolution_matrix.glsl takes
// the rest, with its reduction split inside the workgroup). The tile's shape comes from
// specialization constants (convolution_tiles.h holds the table; ids below).
//
// Rows are destination pixels of all images, columns output channels, and the reduction runs
// over k = (tap * S + s) * 4 + c (input channel 4s + c of the tap, S = input slices), in chunks
// of K_CHUNK. Each chunk of the source window (the im2col step) and of the weights goes through
// registers into one of two shared-memory stages while the matrix units work on the other: one
// barrier per chunk. A rows are padded by 16 bytes and B rows too, so that the fragment loads (8
// rows of 16 bytes at a time) hit distinct banks. Each invocation fetches one texel slot of the
// chunk for A_LOADS rows, so tap and slice are worked out once per chunk, and the rows' origins
// once per dispatch; the source is bound starting at a layer (the host checks), so a texel is one
// fetch. Consecutive invocations take consecutive rows of one slot: a warp's fetch reads
// neighbouring pixels of one source layer, not 4 pixels of 8 layers (8 texels a slot, as
// before, made the long 3x3 layers 10% slower and 1x1 ones up to 19%; their shared-memory
// stores, 80 bytes apart, conflict 2-way now, which costs less; bench/NOTES.md, 2026-11-27,
// session 17). The epilogue goes through a small per-warp fragment in shared memory, fragment by
// fragment, so that no tile-sized float buffer competes with the stages for the 48 KiB.
//
// Float16 accumulators (VKCNN_ACCUMULATE_FP16: convolution_tiled_fp16acc.comp and
// convolution_tiled_pieces_fp16acc.comp, for ConvolutionDescriptor::accumulatorPrecision float16,
// as MPS's accumulatorPrecisionOption half): half the registers a fragment, so tiles of twice the
// outputs (256 x 256, convolution_tiles.h), and the matrix units' float16-accumulate rate (the
// GEMM ceiling, bench/gemm_ceiling.comp -DACCUMULATE_FP16: 214 TFLOP/s against at best 182 with
// float32 on the H200). The epilogue's fragments go through shared memory as float16 (nothing is
// lost: the sums are float16) and are applied in float32. The split reduction keeps float32
// accumulators: its partial sums are float32, and its layers are few tiles long, bound by latency
// rather than by the matrix units. Promoting the float16 sums into float32 every chunk would need
// a float32 copy of every fragment besides the float16 one: more registers than float32
// accumulators alone, so it is not built.
//
// Built twice: convolution_tiled.comp, and convolution_tiled_split.comp (VKCNN_SPLIT_REDUCTION)
// for dense layers with too few tiles to fill the device (late layers at batch 1), which split
// the reduction over the dispatch's z: workgroup z of Z reduces chunks [z C / Z, (z + 1) C / Z)
// and stores its float32 sums in `partials`; the last of a tile's Z workgroups to finish (a
// counter per tile, which it puts back to zero for the next run) adds the Z partial tiles in
// order z = 0, 1, ... and writes the output: the same sums whichever workgroup finishes last. No
// second dispatch: at batch 1 a dispatch and its barrier cost more than most layers' reductions.
// A module of its own, so that the other layers' pipelines bind no scratch buffers: with them
// bound (host-visible counters), every batch-32 network ran 5-20% slower (bench/NOTES.md,
// 2026-11-28, session 18).
//
// Grouped convolutions whose groups start at layers (channels per group a multiple of 4 on both
// sides) run as one GEMM per group, the group being the dispatch's z: its source layers start at
// group x input slices per group, its weights are a matrix of their own (columns padded to
// VKCNN_MATRIX_GROUP_COLUMN_ALIGN, so narrow tiles do not compute 128 columns of zeros), and its
// outputs start at group x output slices per group.
#ifndef VKCNN_CONVOLUTION_TILED_GLSL
#define VKCNN_CONVOLUTION_TILED_GLSL

#ifndef VKCNN_REFLECTION
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#endif
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

layout(constant_id = 0) const int WARPS_M = 2;
layout(constant_id = 1) const int WARPS_N = 4;
layout(constant_id = 2) const int FRAG_M = 4;
layout(constant_id = 3) const int FRAG_N = 2;
layout(constant_id = 4) const int K_STEPS = 2;
layout(local_size_x_id = 5) in;  // 32 * WARPS_M * WARPS_N
layout(constant_id = 6) const int PREFETCH = 1;  // chunks in flight in registers: 1 or 2
// 0: the epilogue reads as it goes; 1: it reads ahead; 2: ahead, with a residual (below).
layout(constant_id = 7) const int EPILOGUE = 0;
// The epilogue's operations, known when the host makes the pipeline: the fused neuron's type, plus
// VKCNN_EPILOGUE_OPS_RESIDUAL where a residual is added (-1: both read from the push constants).
// Known, the neuron is its own few instructions instead of a switch over every type, and neither
// the residual nor PReLU's slopes are tested per output: on layers with short reductions the
// epilogue is most of the time (1x1 64->256 @56² b32, 128 us, of which 87 us without the reduction
// and the image stores; bench/NOTES.md, 2026-11-28, session 28).
layout(constant_id = 9) const int EPILOGUE_OPS = -1;
#define VKCNN_EPILOGUE_OPS EPILOGUE_OPS
#ifdef VKCNN_SPLIT_REDUCTION
const bool SPLIT = true;
#else
const bool SPLIT = false;
#endif
#ifdef VKCNN_ACCUMULATE_FP16
#ifdef VKCNN_SPLIT_REDUCTION
#error "the split reduction sums float32 partial tiles: float32 accumulators only"
#endif
#define ACCUMULATOR fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#else
#define ACCUMULATOR fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#endif

// The host picks this shader only for destinations and sources that start at a layer.
#define VKCNN_ALIGNED_DESTINATION
#define VKCNN_WEIGHT_TYPE uvec4  // 8 float16
#include "convolution_bindings.glsl"
#include "convolution_tiles.h"

const int THREADS = 32 * WARPS_M * WARPS_N;
const int TILE_M = WARPS_M * FRAG_M * 16;
const int TILE_N = WARPS_N * FRAG_N * 16;
const int K_CHUNK = 16 * K_STEPS;
const int SLOTS = K_CHUNK / 4;    // source texels per row and chunk
const int A_ROW = SLOTS + 2;      // uvec2 (4 float16) per shared row, 16 bytes of padding
const int B_VECS = TILE_N / 8;    // uvec4 (8 float16) per row of the weight tile
const int B_ROW = B_VECS + 1;
const int A_STAGE = TILE_M * A_ROW;
const int B_STAGE = K_CHUNK * B_ROW;
const int ROW_STEP = THREADS / SLOTS;
const int A_LOADS = TILE_M / ROW_STEP;
const int B_ELEMENTS = K_CHUNK * B_VECS;  // fewer than THREADS in narrow tiles
const int B_LOADS = (B_ELEMENTS + THREADS - 1) / THREADS;
const int C_ROW = 20;  // floats per row of a warp's epilogue fragment (padded)
shared uvec2 aS[2 * A_STAGE];
shared uvec4 bS[2 * B_STAGE];
#ifdef VKCNN_ACCUMULATE_FP16
// A float16 fragment's row: 16 values and 16 bytes of padding, as uvec2 (4 float16 each).
const int H_ROW = 6;
shared uvec2 cS[WARPS_M * WARPS_N * 16 * H_ROW];
// Tiles wider than the weight matrix's column padding (256 columns) read no weights past it.
const bool WIDE = TILE_N > VKCNN_MATRIX_COLUMN_ALIGN;
// The epilogue's fragments as the elements of cS and aS: a row's stride, the elements of 4
// channels, and the 4 sums at element `at`.
#define C_STRIDE H_ROW
#define C_QUAD 1
#define C_SUM(at) vec4(unpackHalf2x16(cS[at].x), unpackHalf2x16(cS[at].y))
#define A_STRIDE H_ROW
#define A_QUAD 1
#define A_SUM(at) vec4(unpackHalf2x16(aS[at].x), unpackHalf2x16(aS[at].y))
#else
shared float cS[WARPS_M * WARPS_N * 16 * C_ROW];
#define C_STRIDE C_ROW
#define C_QUAD 4
#define C_SUM(at) vec4(cS[at], cS[(at) + 1], cS[(at) + 2], cS[(at) + 3])
#define A_STRIDE (C_ROW / 2)
#define A_QUAD 2
#define A_SUM(at) uintBitsToFloat(uvec4(aS[at], aS[(at) + 1]))
#endif
#ifdef VKCNN_SPLIT_REDUCTION
// Each workgroup's TILE_M x TILE_N float sums, row-major, at (tile * Z + z) * TILE_M * TILE_N;
// and a counter per tile, zero before and after each dispatch.
layout(set = 0, binding = 6, std430) coherent buffer Partials { float partials[]; };
layout(set = 0, binding = 7, std430) coherent buffer Counters { uint counters[]; };
shared uint lastArrival;
#endif

#ifdef VKCNN_REFLECTION
void main() {
  storeTexel(ivec3(0),
             texelFetch(uSource, ivec3(0), 0) + texelFetch(uResidual, ivec3(0), 0) +
                 float(weights[0].x) + bias[0] + slopes[0] + float(pc.geometry.clipX)
#ifdef VKCNN_SPLIT_REDUCTION
                 + partials[0] + float(counters[0])
#endif
  );
}
#else

void main() {
  Geometry g = pc.geometry;
  ConvolutionParams cp = pc.convolution;
  const int t = int(gl_LocalInvocationID.x);
  const int warp = t / 32, lane = t % 32;
  const int wm = warp % WARPS_M, wn = warp / WARPS_M;
  const int pixels = g.clipWidth * g.clipHeight;
  const int rowCount = pixels * g.imageCount;
  const int m0 = int(gl_WorkGroupID.x) * TILE_M;
  const int n0 = int(gl_WorkGroupID.y) * TILE_N;
  const int S = (cp.inputChannelsPerGroup + 3) / 4;
  const int slots = cp.kernelWidth * cp.kernelHeight * S;
  const int allChunks = (slots + SLOTS - 1) / SLOTS;
  const int rowsOfWeights = (slots * 4 + VKCNN_MATRIX_ROW_ALIGN - 1) / VKCNN_MATRIX_ROW_ALIGN *
                            VKCNN_MATRIX_ROW_ALIGN;
  const bool grouped = cp.outputChannelsPerGroup != pc.destination.featureChannels;
  // z: a grouped layer's group, or a dense layer's share of the reduction (above).
  const int group = grouped ? int(gl_WorkGroupID.z) : 0;
  const int splits = SPLIT && !grouped ? int(gl_NumWorkGroups.z) : 1;
  const int split = SPLIT && !grouped ? int(gl_WorkGroupID.z) : 0;
  const int firstChunk = split * allChunks / splits, endChunk = (split + 1) * allChunks / splits;
  const int align = grouped ? VKCNN_MATRIX_GROUP_COLUMN_ALIGN : VKCNN_MATRIX_COLUMN_ALIGN;
  const int columns = (cp.outputChannelsPerGroup + align - 1) / align * align;
  // This group's weight matrix (in uvec4) and its first output slice.
  const int weightBase = group * (rowsOfWeights * columns / 8);
  const int groupSlices = (cp.outputChannelsPerGroup + 3) / 4;
  const int firstSlice = group * groupSlices;
  const ivec2 size = textureSize(uSource, 0).xy;
  const int slot = t / ROW_STEP;

  // The rows this invocation fetches: their window origin and first layer, once.
  ivec2 origin[A_LOADS];
  int layer[A_LOADS];
#ifdef VKCNN_PIECES
  // Over a batch's pieces each row fetches from its own piece's source: an index per row
  // (bench/NOTES.md, 2026-11-28, session 27: a workgroup-uniform index where a tile lies in one
  // piece, chosen at run time, made every layer slower).
  int sourcePiece[A_LOADS];
#define FETCH_TEXEL(l, p, s)                                                                       \
  texelFetch(uSources[nonuniformEXT(sourcePiece[l])], ivec3(p, layer[l] + (s)), 0)
#else
#define FETCH_TEXEL(l, p, s) texelFetch(uSource, ivec3(p, layer[l] + (s)), 0)
#endif
  [[unroll]] for (int l = 0; l < A_LOADS; ++l) {
    const int m = m0 + t % ROW_STEP + l * ROW_STEP;
    const int img = min(m, rowCount - 1) / pixels, pixel = min(m, rowCount - 1) - img * pixels;
    origin[l] = ivec2(pixel % g.clipWidth, pixel / g.clipWidth) * ivec2(cp.strideX, cp.strideY) +
                ivec2(g.offsetX, g.offsetY);
    // Rows past the end read nothing: an origin no tap brings inside the source.
    if (m >= rowCount) origin[l] = ivec2(-1 << 30);
    layer[l] = pieceImage(img) * pc.source.layersPerImage + group * S;
#ifdef VKCNN_PIECES
    sourcePiece[l] = currentPiece;
#endif
  }

  ACCUMULATOR acc[FRAG_M][FRAG_N];
  [[unroll]] for (int i = 0; i < FRAG_M; ++i)
    [[unroll]] for (int j = 0; j < FRAG_N; ++j)
      acc[i][j] = ACCUMULATOR(0.0);

  // The chunks ahead wait in registers as fetched (texels as vec4, weights as uvec4): nothing
  // reads them until STORE, after the matrix steps, so their latency hides behind those (packing
  // the texels at fetch time would wait for them right there). PREFETCH 2 keeps two chunks in
  // flight, in two register sets used in turn, for twice the time to hide.
  vec4 xa0[A_LOADS], xa1[A_LOADS];
  bvec4 lanes0 = bvec4(true), lanes1 = bvec4(true);
  // The source activation of each set's slot and which of its texels were read (bit l), applied
  // when STORE packs them (SOURCE_ACTIVATION): at fetch it would wait for the texels there.
  SourceAffine affine0, affine1;
  uint inside0 = 0u, inside1 = 0u;
  uvec4 rb0[B_LOADS], rb1[B_LOADS];
  // Only a group whose input channels end inside a layer has lanes to mask (another layer's data,
  // or padding, past its last channel); elsewhere a slot is all inside or past the reduction, whose
  // texels FETCH leaves zero. Uniform branches, so that the common case issues no selects.
  const bool ragged = (cp.inputChannelsPerGroup & 3) != 0;
  // Each B load's element of the weight matrix in chunk 0; chunk c's is K_CHUNK * columns / 8 on.
  // The weight rows are padded to VKCNN_MATRIX_ROW_ALIGN, a multiple of every K_CHUNK, so a chunk
  // is all inside the matrix or all past it.
  int weightIndex[B_LOADS];
#ifdef VKCNN_ACCUMULATE_FP16
  bool weightColumn[B_LOADS];  // inside the matrix's padded columns (what WIDE tiles check)
#define AND_WEIGHT_COLUMN(l) &&weightColumn[l]
#else
#define AND_WEIGHT_COLUMN(l)
#endif
  [[unroll]] for (int l = 0; l < B_LOADS; ++l) {
    const int e = t + l * THREADS;
    weightIndex[l] = weightBase + (e / B_VECS) * (columns / 8) + n0 / 8 + e % B_VECS;
#ifdef VKCNN_ACCUMULATE_FP16
    weightColumn[l] = !WIDE || n0 + (e % B_VECS) * 8 < columns;
#endif
  }
  const int weightChunk = K_CHUNK * columns / 8;
  // The im2col cursor of this invocation's slot, for the next chunk FETCH takes (chunks are fetched
  // in order): the slot's index gs in the reduction, its input slice s, its tap's column kx and
  // the tap's offset d in the source. Moved on by SLOTS slots a chunk without dividing: two
  // integer divisions a chunk (tap and slice, then the tap's row and column) were a large share of
  // the instructions a chunk issues besides the matrix steps. Where ROW_STEP is 32 (the large
  // tiles) a warp's invocations share the slot, and so the cursor.
  int gs = firstChunk * SLOTS + slot, s, kx;
  ivec2 d;
  {
    const int tap = gs / S, ky = tap / cp.kernelWidth;
    s = gs - tap * S;
    kx = tap - ky * cp.kernelWidth;
    d = ivec2(kx * cp.dilationX, ky * cp.dilationY);
  }
  // Chunk `chunk` of this invocation's texels and weights into register set R (zero past the
  // end); the texels at the cursor, which then moves on to the next chunk.
#define FETCH(R, chunk)                                                                            \
  {                                                                                                \
    if (ragged)                                                                                    \
      lanes##R = lessThan(ivec4(4 * s) + ivec4(0, 1, 2, 3), ivec4(cp.inputChannelsPerGroup));      \
    const bool inside = gs < slots;                                                                \
    if (SOURCE_ACTIVATION != 0) {                                                                  \
      affine##R = sourceAffineOf(4 * (group * S + s));                                             \
      inside##R = 0u;                                                                              \
    }                                                                                              \
    [[unroll]] for (int l = 0; l < A_LOADS; ++l) {                                                 \
      const ivec2 p = origin[l] + d;                                                               \
      xa##R[l] = vec4(0.0);                                                                        \
      /* unsigned: a negative coordinate compares past the end */                                 \
      if (all(lessThan(uvec2(p), uvec2(size))) && inside) {                                        \
        xa##R[l] = FETCH_TEXEL(l, p, s);                                                           \
        if (SOURCE_ACTIVATION != 0) inside##R |= 1u << l;                                          \
      }                                                                                            \
    }                                                                                              \
    gs += SLOTS;                                                                                   \
    s += SLOTS;                                                                                    \
    while (s >= S) {                                                                               \
      s -= S;                                                                                      \
      if (++kx == cp.kernelWidth) {                                                                \
        kx = 0;                                                                                    \
        d = ivec2(0, d.y + cp.dilationY);                                                          \
      } else {                                                                                     \
        d.x += cp.dilationX;                                                                       \
      }                                                                                            \
    }                                                                                              \
    const bool weightsInside = (chunk) * K_CHUNK < rowsOfWeights;                                  \
    [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                                                 \
      rb##R[l] = uvec4(0);                                                                         \
      if (weightsInside && (B_ELEMENTS % THREADS == 0 || t + l * THREADS < B_ELEMENTS)             \
                               AND_WEIGHT_COLUMN(l))                                               \
        rb##R[l] = weights[weightIndex[l] + (chunk) * weightChunk];                                \
    }                                                                                              \
  }
  // Register set R into shared stage `stage`: channels past the window (another layer's data, or
  // padding) as zero, whatever they hold.
#define STORE(R, stage)                                                                            \
  {                                                                                                \
    if (SOURCE_ACTIVATION != 0) {                                                                  \
      [[unroll]] for (int l = 0; l < A_LOADS; ++l)                                                 \
        xa##R[l] = (inside##R & (1u << l)) != 0u ? activateSource(xa##R[l], affine##R) : vec4(0.0);\
    }                                                                                              \
    if (ragged) {                                                                                  \
      [[unroll]] for (int l = 0; l < A_LOADS; ++l) xa##R[l] = mix(vec4(0.0), xa##R[l], lanes##R);  \
    }                                                                                              \
    [[unroll]] for (int l = 0; l < A_LOADS; ++l)                                                   \
      aS[(stage) * A_STAGE + (t % ROW_STEP + l * ROW_STEP) * A_ROW + slot] =                       \
          uvec2(packHalf2x16(xa##R[l].xy), packHalf2x16(xa##R[l].zw));                             \
    [[unroll]] for (int l = 0; l < B_LOADS; ++l) {                                                 \
      const int e = t + l * THREADS;                                                               \
      if (B_ELEMENTS % THREADS == 0 || e < B_ELEMENTS)                                             \
        bS[(stage) * B_STAGE + (e / B_VECS) * B_ROW + e % B_VECS] = rb##R[l];                      \
    }                                                                                              \
  }
#define COMPUTE(stage)                                                                             \
  {                                                                                                \
    [[unroll]] for (int step = 0; step < K_STEPS; ++step) {                                        \
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[FRAG_M], fb[FRAG_N];                             \
      [[unroll]] for (int i = 0; i < FRAG_M; ++i)                                                  \
        coopMatLoadNV(fa[i], aS,                                                                   \
                      uint((stage) * A_STAGE + (wm * FRAG_M + i) * 16 * A_ROW + step * 4),         \
                      uint(A_ROW), false);                                                         \
      [[unroll]] for (int j = 0; j < FRAG_N; ++j)                                                  \
        coopMatLoadNV(fb[j], bS,                                                                   \
                      uint((stage) * B_STAGE + step * 16 * B_ROW + (wn * FRAG_N + j) * 2),         \
                      uint(B_ROW), false);                                                         \
      [[unroll]] for (int i = 0; i < FRAG_M; ++i)                                                  \
        [[unroll]] for (int j = 0; j < FRAG_N; ++j)                                                \
          acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);                                    \
    }                                                                                              \
  }

  // Past the last chunk FETCH fetches nothing and STORE stores zeros nobody reads (past a split's
  // last, the next split's chunk, unread too): no branch, so nothing stands between the fetch and
  // the matrix steps.
  if (PREFETCH == 2) {
    FETCH(0, firstChunk)
    STORE(0, 0)
    FETCH(1, firstChunk + 1)
    barrier();
    for (int chunk = firstChunk; chunk < endChunk; chunk += 2) {
      FETCH(0, chunk + 2)
      COMPUTE(0)
      STORE(1, 1)
      barrier();
      if (chunk + 1 < endChunk) {
        FETCH(1, chunk + 3)
        COMPUTE(1)
        STORE(0, 0)
        barrier();
      }
    }
  } else {
    FETCH(0, firstChunk)
    STORE(0, 0)
    barrier();
    for (int chunk = firstChunk; chunk < endChunk; ++chunk) {
      const int stage = (chunk - firstChunk) & 1;
      FETCH(0, chunk + 1)
      COMPUTE(stage)
      STORE(0, stage ^ 1)
      barrier();
    }
  }

  // The split reduction: this workgroup's partial tile out; the last one of the tile (coherent
  // buffers, a device-wide barrier before the counter and after it) loads them all back as
  // fragments, every fragment of a partial at once, and adds them in order. (Read texel by texel
  // in the epilogue, one after another, they cost 5-10 us: bench/NOTES.md, session 18.)
#ifdef VKCNN_SPLIT_REDUCTION
  if (splits > 1) {
    const int partialTile = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    const int warpTile = (wm * FRAG_M * 16) * TILE_N + wn * FRAG_N * 16;
    int at = (partialTile * splits + split) * TILE_M * TILE_N + warpTile;
    [[unroll]] for (int i = 0; i < FRAG_M; ++i)
      [[unroll]] for (int j = 0; j < FRAG_N; ++j)
        coopMatStoreNV(acc[i][j], partials, uint(at + i * 16 * TILE_N + j * 16), uint(TILE_N),
                       false);
    memoryBarrierBuffer();
    barrier();
    if (t == 0) lastArrival = atomicAdd(counters[partialTile], 1u) == uint(splits - 1) ? 1u : 0u;
    barrier();
    if (lastArrival == 0u) return;
    memoryBarrierBuffer();
    if (t == 0) counters[partialTile] = 0u;
    at = partialTile * splits * TILE_M * TILE_N + warpTile;
    [[unroll]] for (int i = 0; i < FRAG_M; ++i)
      [[unroll]] for (int j = 0; j < FRAG_N; ++j)
        coopMatLoadNV(acc[i][j], partials, uint(at + i * 16 * TILE_N + j * 16), uint(TILE_N),
                      false);
    for (int z = 1; z < splits; ++z) {
      at += TILE_M * TILE_N;
      [[unroll]] for (int i = 0; i < FRAG_M; ++i)
        [[unroll]] for (int j = 0; j < FRAG_N; ++j) {
          fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> partial;
          coopMatLoadNV(partial, partials, uint(at + i * 16 * TILE_N + j * 16), uint(TILE_N),
                        false);
          // Element by element: glslang 12's optimizer (-Os) crashes on a matrix addition.
          for (int e = 0; e < partial.length(); ++e) acc[i][j][e] += partial[e];
        }
    }
  }
#endif

  // Epilogue, one fragment at a time through this warp's 16 x 16 floats (two at a time where it
  // reads ahead, below): each lane takes two (pixel, slice) pairs of it. The loop over fragments
  // stays a loop: unrolled, it held a copy of the whole output path (residual, bias, a 20-way
  // neuron switch per channel, the image store) per fragment, ~25 KB of code each, 80-250 KB in
  // all (pipeline statistics), streamed through the instruction caches by every workgroup; as a
  // loop the shader is 42-58 KB and short reductions run 15-25% faster (bench/NOTES.md,
  // 2026-11-26). Accumulators are picked by constant indices (an array indexed at run time would
  // not stay in registers).
  //
  // EPILOGUE 1 and 2 first work out each lane's output pixels (no integer division left in the
  // loop) and read the bias and, with 2, every residual texel, all in flight at once: read in
  // the loop, each fragment waited for its own, one memory round trip after another with one
  // workgroup per multiprocessor to cover them. On dispatches of several waves that takes 5-9%
  // off the short reductions (1x1 64->256 @56² b32: 0.146 -> 0.136 ms; with a residual 0.215 ->
  // 0.160). It costs code (+4-12 KB, and a residual epilogue is a pipeline of its own): at batch
  // 1, where a dispatch is less than a wave, each pipeline's first dispatch in an inference took
  // ~8-10 us longer, more than it saved, so the host picks 0 there (bench/NOTES.md, 2026-11-27,
  // session 17).
  const int cBase = warp * 16 * C_STRIDE;
  if (EPILOGUE == 0) {
    [[dont_unroll]] for (int f = 0; f < FRAG_M * FRAG_N; ++f) {
      [[unroll]] for (int k = 0; k < FRAG_M * FRAG_N; ++k)
        if (k == f)
          coopMatStoreNV(acc[k / FRAG_N][k % FRAG_N], cS, uint(cBase), uint(C_STRIDE), false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      const int i = f / FRAG_N, j = f - i * FRAG_N;
      // The two lane pairs stay unrolled, so that their residual fetches are in flight together.
      [[unroll]] for (int h = 0; h < 2; ++h) {
        const int e = lane + 32 * h, row = e % 16, q = e / 16;
        const int m = m0 + (wm * FRAG_M + i) * 16 + row;
        const int n = (n0 + (wn * FRAG_N + j) * 16) / 4 + q;  // this group's slice
        if (m >= rowCount || n >= groupSlices) continue;
        const vec4 sum = C_SUM(cBase + row * C_STRIDE + C_QUAD * q);
        const int batchImage = m / pixels, pixel = m - batchImage * pixels;
        const int img = pieceImage(batchImage);  // the piece's, which becomes the current one
        const ivec2 p = ivec2(g.clipX + pixel % g.clipWidth, g.clipY + pixel / g.clipWidth);
        // Lanes past the output channels compute a clamped channel; writeSlice drops them.
        const int slice = firstSlice + n;
        const ivec4 oc =
            min(ivec4(4 * slice) + ivec4(0, 1, 2, 3), pc.destination.featureChannels - 1);
        writeSlice(pc.destination, p, img, slice, convolutionOutput(p, img, slice, oc, sum));
      }
      subgroupBarrier();
    }
  } else {
    // Per fragment row i and lane pair h: the output pixel and image of the batch (x -1 past the
    // last row).
    ivec3 positions[FRAG_M][2];
    // Per fragment column j and lane pair h: the bias; per fragment and h: the residual texel.
    vec4 biases[FRAG_N][2], residuals[FRAG_M * FRAG_N][2];
    [[unroll]] for (int h = 0; h < 2; ++h) {
      const int e = lane + 32 * h, row = e % 16, q = e / 16;
      [[unroll]] for (int i = 0; i < FRAG_M; ++i) {
        const int m = m0 + (wm * FRAG_M + i) * 16 + row;
        const int img = m / pixels, pixel = m - img * pixels;
        positions[i][h] = m < rowCount ? ivec3(g.clipX + pixel % g.clipWidth,
                                               g.clipY + pixel / g.clipWidth, img)
                                       : ivec3(-1);
      }
      [[unroll]] for (int j = 0; j < FRAG_N; ++j) {
        const int slice = firstSlice + (n0 + (wn * FRAG_N + j) * 16) / 4 + q;
        biases[j][h] = biasOf(min(ivec4(4 * slice) + ivec4(0, 1, 2, 3),
                                  pc.destination.featureChannels - 1));
      }
      if (EPILOGUE == 2) {
        [[unroll]] for (int k = 0; k < FRAG_M * FRAG_N; ++k) {
          const ivec3 at = positions[k / FRAG_N][h];
          const int n = (n0 + (wn * FRAG_N + k % FRAG_N) * 16) / 4 + q;
          residuals[k][h] = vec4(0.0);
          if (at.x >= 0 && n < groupSlices)
            residuals[k][h] = residualOf(at.xy, pieceImage(at.z), firstSlice + n);
        }
      }
    }
    // Two fragments a round, so that each lane has four texels to write between two subgroup
    // barriers instead of two: the first fragment through this warp's cS, the second through its
    // share of A's stages, which nothing reads once the reduction is done (the shared memory
    // holds nothing more: 128x128 has 48128 of its 49152 bytes). 1x1 64->256 @56² b32 -3%, the
    // other batch-32 shapes -1 to -2% (bench/NOTES.md, 2026-11-28, session 29).
    const int aBase = warp * 16 * A_STRIDE;
    [[dont_unroll]] for (int f = 0; f < FRAG_M * FRAG_N; f += 2) {
      ivec3 position[2][2];
      vec4 biasValues[2][2], residual[2][2];
      [[unroll]] for (int g = 0; g < 2; ++g) residual[g] = vec4[2](vec4(0.0), vec4(0.0));
      [[unroll]] for (int k = 0; k < FRAG_M * FRAG_N; ++k) {
        if (k == f) {
          coopMatStoreNV(acc[k / FRAG_N][k % FRAG_N], cS, uint(cBase), uint(C_STRIDE), false);
          position[0] = positions[k / FRAG_N];
          biasValues[0] = biases[k % FRAG_N];
          if (EPILOGUE == 2) residual[0] = residuals[k];
        }
        if (k == f + 1) {
          coopMatStoreNV(acc[k / FRAG_N][k % FRAG_N], aS, uint(aBase), uint(A_STRIDE), false);
          position[1] = positions[k / FRAG_N];
          biasValues[1] = biases[k % FRAG_N];
          if (EPILOGUE == 2) residual[1] = residuals[k];
        }
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      [[unroll]] for (int g = 0; g < 2; ++g) {
        const int j = (f + g) % FRAG_N;
        [[unroll]] for (int h = 0; h < 2; ++h) {
          const int e = lane + 32 * h, row = e % 16, q = e / 16;
          const int n = (n0 + (wn * FRAG_N + j) * 16) / 4 + q;  // this group's slice
          if (position[g][h].x < 0 || n >= groupSlices) continue;
          vec4 sum;
          if (g == 0)
            sum = C_SUM(cBase + row * C_STRIDE + C_QUAD * q);
          else
            sum = A_SUM(aBase + row * A_STRIDE + A_QUAD * q);
          const int slice = firstSlice + n;
          const ivec4 oc =
              min(ivec4(4 * slice) + ivec4(0, 1, 2, 3), pc.destination.featureChannels - 1);
          writeSlice(pc.destination, position[g][h].xy, pieceImage(position[g][h].z), slice,
                     convolutionOutputOf(oc, sum, residual[g][h], biasValues[g][h]));
        }
      }
      subgroupBarrier();
    }
  }
}
#endif

#endif  // VKCNN_CONVOLUTION_TILED_GLSL
