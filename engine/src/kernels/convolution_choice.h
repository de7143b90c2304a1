// The convolution's choice of configuration, a host function of the layer, the device's facts,
// the explicit overrides and the shape's tuning entry: which shader, tile and split of the
// reduction run a layer, whether Winograd takes it, its specialization constants, and the tuner's
// key and candidates for it. No Vulkan call and no Context: tests/test_convolution_choice.cpp
// pins the choice for synthetic devices without a GPU. The rules and models live in
// convolution_choice.cpp with the measurements they were fitted to; the encoders
// (convolution_encode.cpp, fully_connected.cpp) and the weights (convolution_weights.cpp) ask
// them here.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "convolution_tiles.h"
#include "vkcnn/convolution.h"
#include "vkcnn/export.h"
#include "vulkan/device_facts.h"
#include "vulkan/overrides.h"
#include "vulkan/shader_module_info.h"
#include "vkcnn_shader_ids.h"

namespace vkcnn::detail {

enum class WinogradScheme;

// Fully connected layers from this many weights up are read by fully_connected_batched_half at
// every batch in float16 (batchedApplies): measured at batch 1 against the matrix units' split-k
// shader, 0.130 -> 0.108 ms at 102.8 M weights, 0.028 -> 0.018 at 4.1 M, but 0.017 -> 0.019 at 2 M
// (H100). Since one image has a loop of its own there, resnet50's classifier (2.05 M) takes
// 0.0126 ms against 0.0171 on 64x64p2s8 (H200, bench/NOTES.md, 2026-11-27, session 20).
constexpr uint64_t kLargeFullyConnected = 2000000;

// The device copies of the weights a kernel keeps besides the float32 packing (makeState), each
// made only where a configuration the choice may take reads it.
struct WeightCopies {
  bool matrix = false;          // the float16 matrix of the matrix units
  bool half = false;            // a fully connected layer's float16 packing
  bool winograd = false;        // F(4x4,3x3)'s transformed weights (float32)
  bool winogradMatrix = false;  // F(2x2,3x3)'s (float16, matrix units)
};
// `winograd`: ContextOptions::winograd; `fullyConnected`: a FullyConnected's weights.
VKCNN_API WeightCopies weightCopiesOf(const ConvolutionDescriptor& d, const DeviceFacts& facts,
                                      const ChoiceOverrides& overrides, bool winograd,
                                      bool fullyConnected);

// What the choice reads of one encode, or of a batch's pieces as one: the layer, the region it
// writes and where its windows sit, and the copies of its weights the kernel keeps.
struct ConvolutionShape {
  const ConvolutionDescriptor* descriptor = nullptr;
  // The kernel's shader: convolution, depthwise_convolution or fully_connected (FullyConnected's
  // convolution path).
  ShaderId shader = ShaderId::convolution;
  ShaderVariant variant = ShaderVariant::f16;  // the destination's
  uint32_t width = 0, height = 0, images = 0;  // the clip region, the images encoded together
  // Images of the same layer encoded side by side, these included (Convolution::imagesSideBySide,
  // a batch's pieces): their workgroups share the device.
  uint32_t imagesSideBySide = 0;
  uint32_t destinationChannels = 0;  // the destination window's
  bool residual = false;
  // Whether the source and destination windows start at an array layer (4 channels).
  bool sourceAtLayer = true, destinationAtLayer = true;
  WeightCopies weights;
};

// The GEMM shaders other than convolution_tiled (the tiles of convolution_tiles.h's
// VKCNN_GEMM_* table): the name VKCNN_CONVOLUTION_TILE, the profile and the tuning file give
// each, whether it runs on the matrix units (float16, convolution_matrix.glsl) or is portable,
// and its tile in destination pixels x slices (the shader's TILE_M x TILE_N).
struct GemmKernel {
  ShaderId shader;
  const char* name;
  bool matrixUnits;
  uint32_t pixels, slices;
  // The split-k shaders' latency model: the ways each workgroup splits its reduction, and the
  // workgroups a multiprocessor holds.
  uint32_t split = 1, perMultiprocessor = 0;
};
// Whether `shader` has a dispatch with these specialization constants (the first 8) in the
// command buffer being recorded; empty: nothing has run (a standalone encode).
using PipelineRun = std::function<bool(ShaderId shader, const std::array<int32_t, 10>& constants)>;

// What runs the layer.
struct ConvolutionConfiguration {
  ShaderId shader = ShaderId::convolution;
  // convolution_tiled (grouped too) and convolution_tiled_split: the tile, the reduction's splits
  // and the workgroup grid (row tiles x column tiles).
  const MatrixTile* tile = nullptr;
  uint32_t splits = 1;
  uint32_t rowTiles = 0, columnTiles = 0;
  // A GEMM shader of its own tile (gemmKernelOf).
  const GemmKernel* kernel = nullptr;
  // Winograd's scheme (winograd.h) runs it, matrixUnits saying which.
  bool winograd = false;
  // The float16 matrix is read (a tile, a split-k shader, F(2x2,3x3)).
  bool matrixUnits = false;
  // What Convolution::configuration() and the profile call it: a tile's or shader's name,
  // "grouped <tile>", "direct", "grouped direct", "depthwise" or "winograd" ("" for
  // fully_connected's own shader).
  std::string name;
  // What the dispatch's label adds: " (<name>)" where a convolution shader chose.
  std::string label;
  // The shape's tuning key ("" where no entry applies: not a GEMM, pieces side by side).
  std::string tuningKey;
  std::vector<int32_t> specialization;
};

// The tuning key of a shape ("" where none applies): everything the choice depends on.
VKCNN_API std::string tuningKeyOf(const ConvolutionShape& shape, const DeviceFacts& facts);
// What a trial may run a shape with, the models' choice first.
VKCNN_API std::vector<std::string> candidatesOf(const ConvolutionShape& shape,
                                                const DeviceFacts& facts,
                                                const ChoiceOverrides& overrides,
                                                const PipelineRun& run = {});
// The configuration: `overrides.tile` where it names one that applies, else `tuned` (the shape's
// tuning entry or trial candidate, "" for none), else the models. `run` charges the first
// dispatch of a pipeline (kFirstDispatchNanoseconds) to candidates that have none yet.
VKCNN_API ConvolutionConfiguration chooseConvolution(const ConvolutionShape& shape,
                                                     const DeviceFacts& facts,
                                                     const ChoiceOverrides& overrides,
                                                     const std::string& tuned = "",
                                                     const PipelineRun& run = {});

// Whether a batch's pieces run as one Winograd encode: `pixels` and `blocks` summed over them
// (each fits, its weights kept). `overrides.tile` forces it; else its scheme's rule.
bool winogradForPieces(const ConvolutionDescriptor& d, const ChoiceOverrides& overrides,
                       uint64_t pixels, uint64_t blocks, WinogradScheme scheme);

// The destination pixels of a shape, and its 4x4 blocks.
uint64_t pixelsOf(const ConvolutionShape& shape);
uint64_t blocksOf(const ConvolutionShape& shape);
// Encodes of the same layer running side by side with this one, itself included.
uint64_t piecesSideBySide(const ConvolutionShape& shape);

// The GEMM kernel `shader` runs; throws where it is none.
VKCNN_API const GemmKernel& gemmKernelOf(ShaderId shader);

}  // namespace vkcnn::detail
