// Winograd F(2x2,3x3) for 3x3 stride-1 dense convolutions (bench/NOTES.md, 2026-11-25): an input
// transform into a temporary image (winograd_input.comp), the 16 per-position GEMMs as one
// 16-group 1x1 convolution on the convolution's own GEMM paths (the caller runs it), and an output
// transform with the convolution's epilogue (winograd_output.comp). The weights of that 1x1
// convolution, U = G g G^T per (output, input) channel pair, are made here at load.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "interface.h"
#include "vkcnn/convolution.h"

namespace vkcnn::detail {

struct KernelEncoding;
class DeviceBuffer;

// 3x3, stride 1, dilation 1, one group: the shapes F(2x2,3x3) computes.
bool winogradApplies(const ConvolutionDescriptor& d);

// The 1x1 convolution of the 16 per-position GEMMs: 16 groups of ceil(in / 4) * 4 ->
// ceil(out / 4) * 4 channels (position p is group p), no bias, no neuron.
ConvolutionDescriptor winogradGemmDescriptor(const ConvolutionDescriptor& d);
// Its weights from the 3x3 ones (MPS order), each output channel o scaled by scale[o] (batch
// normalisation folded); the padding channels are zero.
std::vector<float> winogradGemmWeights(const ConvolutionDescriptor& d,
                                       std::span<const float> weights,
                                       std::span<const double> scale);

// Whether this encode can run F(2x2,3x3): a destination starting at a layer, and 16 positions
// of the input and of the output channels within the device's layers for one image.
bool winogradFits(const KernelEncoding& e, const ConvolutionDescriptor& d);

struct WinogradEpilogue {
  std::shared_ptr<DeviceBuffer> bias, slopes;
  shader::NeuronParams neuron;
};

// Encodes the three steps, in as many rounds of images as the temporaries' layers allow;
// (originX, originY) is the window origin of destination pixel (clipX, clipY) in the source.
// `gemm` encodes the 1x1 convolution for an encoding whose source and destination are the two
// temporaries.
void encodeWinograd(KernelEncoding& e, const ConvolutionDescriptor& d, int32_t originX,
                    int32_t originY, const WinogradEpilogue& epilogue,
                    const std::function<void(KernelEncoding&)>& gemm);

}  // namespace vkcnn::detail
