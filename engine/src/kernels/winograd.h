// Winograd's fast 3x3 stride-1 dense convolutions, two schemes of three dispatches each: an input
// transform into a buffer of positions, the per-position GEMMs over the input channels into
// another, and an output transform with the convolution's epilogue. Both buffers are temporaries
// of the command buffer's pool, made in rounds of images of at most kWinogradRoundBytes each.
//  - F(4x4,3x3) on the portable GEMM (bench/NOTES.md, 2026-11-27, session 22): 36 positions in
//    float32 (winograd_input.comp, winograd_gemm.comp, winograd_output.comp), 4x fewer
//    multiply-adds than the direct convolution.
//  - F(2x2,3x3) on the matrix units (session 23): 16 positions, the transformed input and the
//    weights in float16, the products in float32 (winograd_matrix_input.comp,
//    winograd_matrix_gemm.comp, winograd_matrix_output.comp), 2.25x fewer multiply-adds. F(4x4)'s
//    coefficients would cost float16 4x the direct convolution's error; F(2x2)'s, 1.6x.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "interface.h"
#include "vkcnn/convolution.h"

namespace vkcnn::detail {

struct KernelEncoding;
struct DeviceFacts;
class DeviceBuffer;

// 3x3, stride 1, dilation 1, one group: the shapes F(4x4,3x3) computes.
bool winogradApplies(const ConvolutionDescriptor& d);

// U = G g G^T per (output, input) channel pair, as winograd_gemm.comp reads it: mat4 blocks
// [position][output slice][input slice], column c of a block holding input channel 4k + c for
// the slice's 4 output channels, each output channel o scaled by scale[o] (batch normalisation
// folded); the padding channels are zero. winogradWeightCount(d) floats into `u`: 4x the 3x3
// weights.
size_t winogradWeightCount(const ConvolutionDescriptor& d);
void winogradWeights(const ConvolutionDescriptor& d, std::span<const float> weights,
                     std::span<const double> scale, float* u);

// U of F(2x2,3x3) for the matrix units: float16 [16 positions][K][N] row-major, K the input
// channels and N the output channels padded to winogradMatrixK / winogradMatrixN with zeros,
// each output channel o scaled by scale[o]. winogradMatrixWeightCount(d) float16 into `u`.
uint32_t winogradMatrixK(const ConvolutionDescriptor& d);
uint32_t winogradMatrixN(const ConvolutionDescriptor& d);
size_t winogradMatrixWeightCount(const ConvolutionDescriptor& d);
void winogradMatrixWeights(const ConvolutionDescriptor& d, std::span<const float> weights,
                           std::span<const double> scale, uint16_t* u);

// The most bytes each of the two buffers takes in one round: Vulkan's least
// maxStorageBufferRange, and little enough to leave to an application.
constexpr uint64_t kWinogradRoundBytes = uint64_t(128) << 20;

enum class WinogradScheme { portable, matrixUnits };

// Whether an encode of `width` x `height` destination pixels can run the scheme: a destination
// starting at a layer, one image's buffers within a round's bytes, and the GEMM's shared memory.
bool winogradFits(const ConvolutionDescriptor& d, uint32_t width, uint32_t height,
                  bool destinationAtLayer, const DeviceFacts& facts, WinogradScheme scheme);

struct WinogradWeights {
  WinogradScheme scheme;
  std::shared_ptr<DeviceBuffer> weights, bias, slopes;
  shader::NeuronParams neuron;
};

// Encodes `pieces` (one encode, or the pieces of a batch that a Graph holds in several images,
// each fitting winogradFits) with w's scheme as one: an input transform per piece, the GEMMs once
// over all their blocks, an output transform per piece, so that the pieces add no barriers. In
// rounds of images whose buffers take at most kWinogradRoundBytes each (less where
// VKCNN_WINOGRAD_ROUND_BYTES, a test hook, says so). (leftEdge, topEdge): where the window starts
// relative to the offset position. `what` labels the dispatches.
void encodeWinograd(std::span<KernelEncoding> pieces, const ConvolutionDescriptor& d,
                    int64_t leftEdge, int64_t topEdge, const WinogradWeights& w,
                    const std::string& what);

}  // namespace vkcnn::detail
