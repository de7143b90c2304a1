// The convolution's choice of configuration: which shader, tile and split of the reduction run a
// layer, whether Winograd takes it, and the tuner's key and candidates for it. The rules and
// models live in convolution_choice.cpp with the measurements they were fitted to; the encoders
// (convolution_encode.cpp, fully_connected.cpp) and the weights (convolution_weights.cpp) ask
// them here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convolution_tiles.h"
#include "vkcnn/convolution.h"
#include "vulkan/pipelines.h"

namespace vkcnn {
struct DeviceCapabilities;
}

namespace vkcnn::detail {

struct KernelEncoding;
class ContextImpl;
enum class WinogradScheme;

// Fully connected layers from this many weights up are read by fully_connected_batched_half at
// shader, 0.130 -> 0.108 ms at 102.8 M weights, 0.028 -> 0.018 at 4.1 M, but 0.017 -> 0.019 at 2 M
// (H100). Since one image has a loop of its own there, resnet50's classifier (2.05 M) takes
// 0.0126 ms against 0.0171 on 64x64p2s8 (H200, bench/NOTES.md, 2026-11-27, session 20).
constexpr uint64_t kLargeFullyConnected = 2000000;

// What runs a dense convolution writing whole destination layers (an implicit GEMM): a shader,
// and for convolution_tiled a tile of convolution_tiles.h (its specialization constants).
struct GemmChoice {
  ShaderId shader;
  const MatrixTile* tile = nullptr;
  // Dense layers on convolution_tiled_split (convolution_tiled.glsl): workgroups that share each
  // tile's reduction (the dispatch's z), named "<tile>s<splits>", 1 included (the split module
  // with the reduction whole: the latency model's layers all run that module, so that each
  // inference meets fewer pipelines for the first time).
  uint32_t splits = 1;
};

// The GEMM shaders other than convolution_tiled: the name VKCNN_CONVOLUTION_TILE, the profile and
// the tuning file give each, whether it runs on the matrix units (float16, convolution_matrix.glsl)
// or is portable, and its tile in destination pixels x slices (the shader's TILE_M x TILE_N).
struct GemmKernel {
  ShaderId shader;
  const char* name;
  bool matrixUnits;
  uint32_t pixels, slices;
};
constexpr GemmKernel kGemmKernels[] = {
    {ShaderId::convolution_matrix_large, "matrix_large", true, 64, 16},
    {ShaderId::convolution_matrix_medium, "matrix_medium", true, 32, 8},
    {ShaderId::convolution_matrix_small, "matrix_small", true, 16, 8},
    {ShaderId::convolution_gemm_128x32w16, "gemm_128x32w16", false, 128, 32},
    {ShaderId::convolution_gemm_128x32w8, "gemm_128x32w8", false, 128, 32},
    {ShaderId::convolution_gemm_128x16w8, "gemm_128x16w8", false, 128, 16},
    {ShaderId::convolution_gemm_large, "gemm_large", false, 64, 16},
    {ShaderId::convolution_gemm_small, "gemm_small", false, 16, 8},
};

// Dense convolutions, and grouped ones whose groups start at layers on both sides (channels per
// group a multiple of 4), run on the matrix units where there are some.
bool groupedOnMatrixUnits(const ConvolutionDescriptor& d);
// The channels F(4x4,3x3) needs to win on the portable path, and F(2x2,3x3) on the matrix units.
bool winogradChannels(const ConvolutionDescriptor& d);
bool winogradMatrixChannels(const ConvolutionDescriptor& d);
// Whether `scheme` takes a 3x3 stride-1 layer of `pixels` destination pixels in `blocks` 4x4
// blocks (the images encoded together, pieces side by side included).
bool winogradChosen(const ConvolutionDescriptor& d, uint64_t pixels, uint64_t blocks,
                    WinogradScheme scheme);
// Whether an encode, or a batch's pieces as one, runs Winograd's `scheme`: `forced` (an override
// or a tuning entry) names it, or nothing is forced and, where the rule applies, winogradChosen.
bool winogradTaken(const std::string& forced, bool ruleApplies, const ConvolutionDescriptor& d,
                   uint64_t pixels, uint64_t blocks, WinogradScheme scheme);
// The destination pixels of an encode, and its 4x4 blocks.
uint64_t pixelsOf(const KernelEncoding& e);
uint64_t blocksOf(const KernelEncoding& e);

const GemmKernel* gemmKernelOf(ShaderId shader);
// The portable GEMM tile `shader`, or the first smaller one the device's shared memory holds,
// else the direct shader.
ShaderId portableTileWithin(const DeviceCapabilities& caps, ShaderId shader, ShaderVariant variant);
// The configuration's name (VKCNN_CONVOLUTION_TILE, the profile, the tuning file).
std::string nameOf(const GemmChoice& c);
// VKCNN_CONVOLUTION_TILE (ChoiceOverrides::tile) on `context`.
const std::string& forcedTile(const ContextImpl& context);
// convolution_tiled's specialization constants for `e` on tile `t` over `workgroups`.
std::array<int32_t, 10> tiledConstants(const MatrixTile& t, const KernelEncoding& e,
                                       const ConvolutionDescriptor& d, uint64_t workgroups,
                                       uint64_t multiprocessors);
// Encodes of the same layer running side by side with this one, itself included.
uint64_t piecesSideBySide(const KernelEncoding& e);
// A dense layer's GEMM: on the matrix units (convolution_tiled's tiles or the split-k shaders) or
// the portable shaders; `forced` names one, else the models decide.
GemmChoice gemmShader(const KernelEncoding& e, const ConvolutionDescriptor& d, bool matrixUnits,
                      bool tiledAllowed, uint32_t multiprocessors, const std::string& forced);
// A grouped layer's tile of convolution_tiled, nullptr for the direct shader.
const MatrixTile* groupedTile(const KernelEncoding& e, const ConvolutionDescriptor& d,
                              uint32_t multiprocessors, const std::string& forced);
// The shape as the tuning file keys it, and what a trial may run it with (the model's first).
std::string tuningKey(const KernelEncoding& e, const ConvolutionDescriptor& d,
                      ShaderVariant variant, bool tiledAllowed, bool matrixUnits);
std::vector<std::string> candidatesOf(const KernelEncoding& e, const ConvolutionDescriptor& d,
                                      bool groupedTiled, bool matrixUnits, bool tiledAllowed,
                                      uint32_t multiprocessors, bool winograd);

}  // namespace vkcnn::detail
