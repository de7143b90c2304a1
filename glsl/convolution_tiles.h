// The tiles of the matrix-unit convolution (convolution_tiled.glsl) and of the GEMM ceiling
// (bench/gemm_ceiling.comp): the one table both shaders' specialization constants come from. A
// tile is WARPS_M x WARPS_N warps (32 invocations each), each holding FRAG_M x FRAG_N fragments
// of 16 x 16 outputs, and reduces K_STEPS 16-deep steps per shared-memory stage; the shaders keep
// two stages, and convolution_tiled.glsl fetches PREFETCH chunks ahead into registers. Constant
// ids: 0 WARPS_M, 1 WARPS_N, 2 FRAG_M, 3 FRAG_N, 4 K_STEPS, 5 the workgroup size
// (32 x WARPS_M x WARPS_N), 6 PREFETCH, 7 EPILOGUE (0 reads as it goes, 1 reads ahead, 2 ahead
// with a residual: the host's choice per dispatch, not a tile's; the GEMM ceiling has neither 6
// nor 7). 8 and 9: below (specialization()).
//
// The float16 weight matrix of the matrix-unit shaders has its columns (output channels) padded
// with zeros to a multiple of VKCNN_MATRIX_COLUMN_ALIGN, which every tile's width divides, and its
// rows (the reduction) to a multiple of 64, which every stage's depth divides. A grouped
// convolution has one such matrix per group, its columns padded to VKCNN_MATRIX_GROUP_COLUMN_ALIGN
// only: a tile runs a group when its width divides that group's padded width (the narrow tiles,
// 16 or 32 columns, are made for groups of 8 to 32 output channels).
#ifndef VKCNN_CONVOLUTION_TILES_H
#define VKCNN_CONVOLUTION_TILES_H

#define VKCNN_MATRIX_COLUMN_ALIGN 128
#define VKCNN_MATRIX_ROW_ALIGN 64
#define VKCNN_MATRIX_GROUP_COLUMN_ALIGN 16
// The shared memory a workgroup the matrix-unit kernels' tiles are built within (the checks
// below); a device with less runs the portable kernels (DeviceCapabilities::matrixUnits).
#define VKCNN_MATRIX_SHARED_MEMORY 49152

// The GEMM shaders besides convolution_tiled, the one table their .comp files and the host's
// choice (kGemmKernels, convolution_choice.cpp) take their tiles from. Portable
// (convolution_gemm.glsl, convolution_gemm_staged.glsl): PIXELS x SLICES is the shader's
// TILE_M x TILE_N, SPLIT_K the ways a workgroup splits the reduction. Matrix units
// (convolution_matrix.glsl): WARPS_M x WARPS_N warps of FRAG_M x FRAG_N 16 x 16 fragments in each
// of SPLIT_K groups, a tile of PIXELS x SLICES (4 channels each).
#define VKCNN_GEMM_128X32W16_PIXELS 128
#define VKCNN_GEMM_128X32W16_SLICES 32
#define VKCNN_GEMM_128X32W8_PIXELS 128
#define VKCNN_GEMM_128X32W8_SLICES 32
#define VKCNN_GEMM_128X16W8_PIXELS 128
#define VKCNN_GEMM_128X16W8_SLICES 16
#define VKCNN_GEMM_LARGE_PIXELS 64
#define VKCNN_GEMM_LARGE_SLICES 16
#define VKCNN_GEMM_LARGE_SPLIT_K 1
#define VKCNN_GEMM_SMALL_PIXELS 16
#define VKCNN_GEMM_SMALL_SLICES 8
#define VKCNN_GEMM_SMALL_SPLIT_K 8
#define VKCNN_MATRIX_LARGE_WARPS_M 2
#define VKCNN_MATRIX_LARGE_WARPS_N 2
#define VKCNN_MATRIX_LARGE_FRAG_M 2
#define VKCNN_MATRIX_LARGE_FRAG_N 2
#define VKCNN_MATRIX_LARGE_SPLIT_K 1
#define VKCNN_MATRIX_MEDIUM_WARPS_M 1
#define VKCNN_MATRIX_MEDIUM_WARPS_N 1
#define VKCNN_MATRIX_MEDIUM_FRAG_M 2
#define VKCNN_MATRIX_MEDIUM_FRAG_N 2
#define VKCNN_MATRIX_MEDIUM_SPLIT_K 4
#define VKCNN_MATRIX_SMALL_WARPS_M 1
#define VKCNN_MATRIX_SMALL_WARPS_N 1
#define VKCNN_MATRIX_SMALL_FRAG_M 1
#define VKCNN_MATRIX_SMALL_FRAG_N 2
#define VKCNN_MATRIX_SMALL_SPLIT_K 8
#define VKCNN_MATRIX_LARGE_PIXELS (VKCNN_MATRIX_LARGE_WARPS_M * VKCNN_MATRIX_LARGE_FRAG_M * 16)
#define VKCNN_MATRIX_LARGE_SLICES (VKCNN_MATRIX_LARGE_WARPS_N * VKCNN_MATRIX_LARGE_FRAG_N * 4)
#define VKCNN_MATRIX_MEDIUM_PIXELS (VKCNN_MATRIX_MEDIUM_WARPS_M * VKCNN_MATRIX_MEDIUM_FRAG_M * 16)
#define VKCNN_MATRIX_MEDIUM_SLICES (VKCNN_MATRIX_MEDIUM_WARPS_N * VKCNN_MATRIX_MEDIUM_FRAG_N * 4)
#define VKCNN_MATRIX_SMALL_PIXELS (VKCNN_MATRIX_SMALL_WARPS_M * VKCNN_MATRIX_SMALL_FRAG_M * 16)
#define VKCNN_MATRIX_SMALL_SLICES (VKCNN_MATRIX_SMALL_WARPS_N * VKCNN_MATRIX_SMALL_FRAG_N * 4)

#ifdef __cplusplus
#include <array>
#include <cstdint>

namespace vkcnn::detail {

struct MatrixTile {
  const char* name;  // what VKCNN_CONVOLUTION_TILE and the profile call it
  uint32_t warpsM, warpsN, fragmentsM, fragmentsN, kSteps;
  // The selector's cost model (convolution.cpp): a layer's tiles run in waves of
  // residentPerMultiprocessor workgroups a multiprocessor, each wave costing nanosecondsPerStage
  // per stage of the reduction plus nanosecondsPerWave (its prologue and epilogue: what a short
  // reduction spends besides its stages). Fitted by scripts/bench/fit_cost_model.py --selection
  // to every tile forced on every dense shape of nine networks at batch 32 after session 29's
  // main loop, split batches timed as a Graph runs them (bench/results/2026-11-28-s30/;
  // bench/NOTES.md, session 30). 0 nanosecondsPerStage: not in the model.
  uint32_t residentPerMultiprocessor;
  uint32_t nanosecondsPerStage;
  uint32_t prefetch = 1;  // chunks in flight in registers (1 or 2)
  // The selector's latency model for layers with fewer tiles than about two waves (batch 1): one
  // workgroup's time per 32-deep chunk, alone on its multiprocessor, with the weights coming from
  // DRAM as they do inside a network. Fitted by scripts/bench/fit_cost_model.py --alone on every
  // batch-1 shape of five networks with the caches flushed (bench/results/2026-11-27-h200-b1-
  // splits/; bench/NOTES.md, session 20). 0: not a candidate there.
  uint32_t nanosecondsPerChunkAlone = 0;
  // The cost model offers the tile to dense layers of at least this many waves of its
  // workgroups only, never to grouped ones: 128x64w4k16 (at batch 1 vgg16 ran 3.5% slower with
  // it) and 256x128w8k16 (which loses on layers of fewer waves, where its per-stage and per-wave
  // times, fitted over every layer, would take it). 0: everywhere.
  uint32_t denseWaves = 0;
  uint32_t nanosecondsPerWave = 0;  // with nanosecondsPerStage above
  // Whether the cost model offers the tile to layers with a residual added in its epilogue:
  // 256x128w8k16's epilogue with one needs 255 registers and ran 1x1 64->256 @56² at batch 32 in
  // 154 us against 115 on 128x128 (bench/NOTES.md, 2026-11-28, session 30, run 6).
  bool withResidual = true;
  // The widest layer (output channels, padded to 4) the cost model offers the tile to; 0: any.
  // 128x64w4k16 beat the other tiles by 2% or more on eleven layers of at most 64 channels and
  // one wider (run 1), and inside resnet50, where the first-dispatch charge tipped 1x1 256->128
  // @56² to it, took 117.6 us against 84.6 on 128x128 (run 6).
  uint32_t maxColumns = 0;
  // Offered only with float16 accumulators (ConvolutionDescriptor::accumulatorPrecision, on
  // convolution_tiled_fp16acc): tiles whose float32 fragments the register file cannot hold. Only
  // these may be wider than VKCNN_MATRIX_COLUMN_ALIGN (that shader reads no weights past the
  // padding). Every other tile runs with float16 accumulators too where they are asked for.
  bool float16Accumulators = false;

  constexpr uint32_t rows() const { return warpsM * fragmentsM * 16; }
  constexpr uint32_t columns() const { return warpsN * fragmentsN * 16; }
  constexpr uint32_t threads() const { return 32 * warpsM * warpsN; }
  constexpr uint32_t depth() const { return 16 * kSteps; }
  // convolution_tiled.glsl's specialization constants for this tile: ids 0-7 above with `epilogue`
  // (0 as it goes, 1 ahead, 2 ahead with a residual), 8 the pieces shader's images a piece (set by
  // its encoder), 9 the epilogue's operations (`ops`: the neuron's type, plus
  // VKCNN_EPILOGUE_OPS_RESIDUAL with a residual; -1 read from the push constants).
  constexpr std::array<int32_t, 10> specialization(int32_t epilogue, int32_t ops = -1) const {
    return {int32_t(warpsM),
            int32_t(warpsN),
            int32_t(fragmentsM),
            int32_t(fragmentsN),
            int32_t(kSteps),
            int32_t(threads()),
            int32_t(prefetch),
            epilogue,
            1,
            ops};
  }
  // Shared memory of convolution_tiled.glsl: two stages of A (rows x depth float16, rows padded
  // by 16 bytes) and B (depth x columns, padded likewise), and a 16 x 20 float fragment per warp
  // (the epilogue's, C_ROW = 20; a float16-accumulator-only tile's is 16 x 24 float16, H_ROW).
  constexpr uint32_t sharedBytes() const {
    return aStagesBytes() + 2 * kSteps * 16 * (columns() * 2 + 16) + epilogueFragmentBytes();
  }
  // A's two stages (the epilogue that reads ahead writes a second fragment a warp through them).
  constexpr uint32_t aStagesBytes() const { return 2 * rows() * (kSteps * 32 + 16); }
  constexpr uint32_t epilogueFragmentBytes() const {
    return warpsM * warpsN * 16 * (float16Accumulators ? 24 * 2 : 20 * 4);
  }
};

// 128x64, 64x128 with 4 warps (of 64x32 / 32x64) and 128x128 with 4 warps of 64x64 were measured
// too and lost on every shape (NOTES.md); they are not kept. A tile whose nanosecondsPerStage and
// nanosecondsPerChunkAlone are 0 is in neither model: only VKCNN_CONVOLUTION_TILE or a tuning
// entry (vkcnn tune) picks it. The 128-row narrow tiles, which lost to their neighbours before,
// were not timed again for the refits. The latency model has three candidates: with the weights
// from DRAM, two chunks in flight (p2) beat one on 64-wide tiles, and 128x128 split over the
// reduction beat every other tile on the long 512-channel layers.
inline constexpr MatrixTile kMatrixTiles[] = {
    {"128x128", 2, 4, 4, 2, 2, 1, 873, 1, 1554, 0, 6382},
    {"64x64", 2, 2, 2, 2, 2, 2, 528, 1, 0, 0, 3928},
    {"64x64k64", 2, 2, 2, 2, 4, 1, 725, 1, 0, 0, 4004},
    {"32x64", 1, 2, 2, 2, 2, 2, 455, 1, 0, 0, 3240},
    {"128x64w8", 4, 2, 2, 2, 2, 1, 668, 1, 0, 0, 4184},
    {"64x128w8", 2, 4, 2, 2, 2, 1, 760, 1, 0, 0, 3570},
    {"128x128p2", 2, 4, 4, 2, 2, 1, 881, 2, 0, 0, 6554},
    {"64x64p2", 2, 2, 2, 2, 2, 1, 0, 2, 679},
    {"64x128w8p2", 2, 4, 2, 2, 2, 1, 578, 2, 818, 0, 3906},
    // Narrow tiles, made for grouped convolutions (8 to 32 output channels per group); the
    // selector considers them for dense layers too (few output channels: a 64-wide tile would
    // compute padding).
    {"128x16", 4, 1, 2, 1, 2, 1, 0},
    {"128x32", 4, 1, 2, 2, 2, 1, 0},
    {"64x16", 2, 1, 2, 1, 2, 3, 546, 1, 0, 0, 2255},
    {"64x32", 2, 1, 2, 2, 2, 2, 436, 1, 0, 0, 4006},
    // 16-deep stages (bench/NOTES.md, 2026-11-28, session 26): fewer registers than their 32-deep
    // siblings (64x64k16 110 against 145; 128x64w4k16 174 on 4 warps), so more workgroups reside.
    // 128x64w4k16 beat 64x64 on every 64-column layer of vgg16 and the resnets at batch 32
    // (64->64 @224² 1.59 -> 1.53 ms, @56² -8%, the first layers -11 to -15%), from two waves on.
    // The other two win on short reductions (session 30: 1x1 32->192 @28² b32 26.2 -> 18.0 us on
    // 64x64k16, 1x1 112->672 @14² 36.4 -> 32.0 on 64x128w4k16), with the per-wave term in the
    // model.
    {"128x64w4k16", 2, 2, 4, 2, 1, 2, 428, 1, 0, 2, 6767, true, 64},
    {"64x64k16", 2, 2, 2, 2, 1, 3, 545, 1, 0, 0, 4389},
    {"64x128w4k16", 2, 2, 2, 4, 1, 2, 622, 1, 0, 0, 5246},
    // 256 x 128 on 4 x 2 warps of 4 x 4 fragments (64 x 64 each), 16-deep stages: with the main
    // loop's per-chunk instructions trimmed (session 29) it fits 220 registers, one workgroup a
    // multiprocessor, and beats every other tile on the large 3x3 layers at 56² and up, batch 32
    // (H200: 3x3 256->256 @56² 0.736 -> 0.679 ms against 128x128, 128->128 @112² 0.812 -> 0.750,
    // 128->256 @56² 0.402 -> 0.370) and loses elsewhere (short reductions, few waves): in the
    // model from four waves of its workgroups on, where the fit places it on those layers only
    // (session 30). 128x128 on 2 x 2 warps of 4 x 4, 256 x 64 on 4 x 2 of 4 x 2 and 128x128 with
    // 16-deep stages were measured beside it and lost on every shape (bench/NOTES.md,
    // 2026-11-28, session 29, run 4).
    {"256x128w8k16", 4, 2, 4, 4, 1, 1, 857, 1, 0, 4, 11873, false},
    // Float16 accumulators only (issue 40): 256 x 256 on 2 x 4 warps of 8 x 4 fragments, 16-deep
    // stages, NVIDIA's design for float16 accumulation, which the GEMM ceiling ran at 214 TFLOP/s
    // on the H200 against at best 182 with float32 accumulators (whose 256 x 256 tile spills: 59).
    // Its model times are estimates until fitted (fit_cost_model.py --selection with
    // --accumulate fp16): a stage twice 256x128w8k16's work at 214/182 of its rate, the per-wave
    // time 256x128w8k16's scaled likewise; from two waves on, and not with a residual (reading
    // every fragment's residual ahead would take 256 registers). 128x256w8k16 (2 x 4 warps of 4 x
    // 4, 256x128w8k16's warps side by side) is forced or tuned only.
    {"256x256w8k16", 2, 4, 8, 4, 1, 1, 1458, 1, 0, 2, 20195, false, 0, true},
    {"128x256w8k16", 2, 4, 4, 4, 1, 1, 0, 1, 0, 0, 0, true, 0, true},
};

// fully_connected_matrix.comp's tiles: destination channels a workgroup of 4 warps (16, 32 or 64:
// a warp a 16-column fragment, the rest of the warps splitting each stage's steps) and inputs a
// stage (specialization constants 1 and 2; constant 0 is the row fragments, 1 or 2, from the
// batch).
struct FullyConnectedMatrixTile {
  const char* name;  // what VKCNN_FULLY_CONNECTED=matrixN/NAME and the profile call it
  uint32_t columns, chunk;

  constexpr uint32_t stepGroups() const { return 4 / (columns / 16); }
  constexpr std::array<int32_t, 3> specialization(uint32_t fragmentsM) const {
    return {int32_t(fragmentsM), int32_t(columns), int32_t(chunk)};
  }
  // Two stages of source rows (16 bytes of padding a row) and of weight rows (one input each,
  // padded likewise), in float16.
  constexpr uint32_t sharedBytes(uint32_t fragmentsM) const {
    return 2 * (16 * fragmentsM * (chunk * 2 + 16) + chunk * (columns * 2 + 16));
  }
};

// Measured (H100, vgg16's fc6 at batch 32, bench/NOTES.md session 24 run 4): 64x64 0.170 ms,
// 32x128 0.190, 16x128 0.317; fc7, fc8 and resnet50's fc in the same order. Longer runs of a
// slice's weights a stage did not help, so only 64x64 is kept.
inline constexpr FullyConnectedMatrixTile kFullyConnectedMatrixTiles[] = {
    {"64x64", 64, 64},
};

constexpr bool fullyConnectedTilesFit() {
  for (const FullyConnectedMatrixTile& t : kFullyConnectedMatrixTiles)
    if ((t.columns != 16 && t.columns != 32 && t.columns != 64) ||
        t.chunk % (16 * t.stepGroups()) || (16 * t.chunk / 4) % 128 ||
        (t.columns / 4 * t.chunk / 2) % 128 || t.sharedBytes(2) > VKCNN_MATRIX_SHARED_MEMORY)
      return false;
  return true;
}
static_assert(fullyConnectedTilesFit(),
              "every fully connected tile splits its loads evenly over 128 invocations and fits "
              "48 KiB");

// winograd_matrix_gemm.comp's tiles (its specialization constants 0-6): WARPS_M x WARPS_N warps of
// FRAG_M x FRAG_N fragments, K_STEPS 16-deep steps a stage, the products staged through shared
// memory (1) or stored from the fragments (0). Every tile has the Winograd buffers' row block
// (128 rows: a piece's rows start at one and no row is checked); the first tile whose columns
// divide the layer's padded output channels runs it: 128 columns on 2 x 2 warps of 4 x 4
// fragments (the best of five tiles on the eight weightiest shapes, 4-9% ahead of 2 x 4 warps of
// 4 x 2: bench/NOTES.md, session 23, run 4), else 64 on 4 x 2 warps of 2 x 2.
#define VKCNN_WINOGRAD_MATRIX_ROWS 128
#define VKCNN_WINOGRAD_MATRIX_COLUMN_ALIGN 64
struct WinogradMatrixTile {
  uint32_t warpsM, warpsN, fragmentsM, fragmentsN, kSteps, stagedStore;

  constexpr uint32_t rows() const { return warpsM * fragmentsM * 16; }
  constexpr uint32_t columns() const { return warpsN * fragmentsN * 16; }
  constexpr uint32_t threads() const { return 32 * warpsM * warpsN; }
  constexpr uint32_t depth() const { return 16 * kSteps; }
  constexpr std::array<int32_t, 7> specialization() const {
    return {int32_t(warpsM), int32_t(warpsN),    int32_t(fragmentsM), int32_t(fragmentsN),
            int32_t(kSteps), int32_t(threads()), int32_t(stagedStore)};
  }
  // The shader's uvec4 (8 float16) rows: A's of a stage, B's of the tile, each padded by one.
  constexpr uint32_t aRow() const { return depth() / 8 + 1; }
  constexpr uint32_t bRow() const { return columns() / 8 + 1; }
  // The staged store: each warp's 16 rows of FRAG_N fragments (padded by a uvec4), in A's stages.
  constexpr uint32_t storeVecs() const {
    return stagedStore ? threads() / 32 * 16 * (fragmentsN * 4 + 1) : 0;
  }
  // Two stages of A (rows x depth, at least the staged store) and B (depth x columns), as the
  // shader declares them (the build reflects cooperative-matrix shaders through a trivial body,
  // so reflection cannot say).
  constexpr uint32_t sharedBytes() const {
    const uint32_t a = 2 * rows() * aRow();
    return ((a > storeVecs() ? a : storeVecs()) + 2 * depth() * bRow()) * 16;
  }
};

inline constexpr WinogradMatrixTile kWinogradMatrixTiles[] = {
    {2, 2, 4, 4, 2, 1},  // 128 columns
    {4, 2, 2, 2, 2, 1},  // 64 columns
};

constexpr bool winogradTilesFit() {
  for (const WinogradMatrixTile& t : kWinogradMatrixTiles)
    if (t.rows() != VKCNN_WINOGRAD_MATRIX_ROWS ||
        t.columns() % VKCNN_WINOGRAD_MATRIX_COLUMN_ALIGN ||
        t.sharedBytes() > VKCNN_MATRIX_SHARED_MEMORY || (t.rows() * t.depth() / 8) % t.threads() ||
        (t.depth() * t.columns() / 8) % t.threads())
      return false;
  return kWinogradMatrixTiles[sizeof kWinogradMatrixTiles / sizeof kWinogradMatrixTiles[0] - 1]
             .columns() == VKCNN_WINOGRAD_MATRIX_COLUMN_ALIGN;
}
static_assert(winogradTilesFit(),
              "every Winograd GEMM tile has the 128-row block, splits its loads evenly, fits "
              "48 KiB, and the last one takes any padded layer");

static_assert(VKCNN_MATRIX_COLUMN_ALIGN % 128 == 0 && VKCNN_MATRIX_ROW_ALIGN % 64 == 0);
constexpr bool tilesFit() {
  for (const MatrixTile& t : kMatrixTiles)
    if ((t.float16Accumulators
             ? t.columns() % VKCNN_MATRIX_COLUMN_ALIGN && VKCNN_MATRIX_COLUMN_ALIGN % t.columns()
             : VKCNN_MATRIX_COLUMN_ALIGN % t.columns()) ||
        VKCNN_MATRIX_ROW_ALIGN % (16 * t.kSteps) || t.sharedBytes() > VKCNN_MATRIX_SHARED_MEMORY ||
        (t.rows() * t.kSteps * 4) % t.threads() || t.columns() % VKCNN_MATRIX_GROUP_COLUMN_ALIGN ||
        // The epilogue that reads ahead writes fragments in pairs, the second one through A's
        // stages.
        (t.fragmentsM * t.fragmentsN) % 2 || t.epilogueFragmentBytes() > t.aStagesBytes())
      return false;
  return true;
}
static_assert(tilesFit(),
              "every tile divides the padding (or, with float16 accumulators only, is a multiple "
              "of it), fits 48 KiB, splits its source loads evenly and has room for its "
              "epilogue's fragment pairs");

}  // namespace vkcnn::detail
#endif

#endif
