// What the convolution-family kernels (Convolution, FullyConnected) share inside the engine: the
// state a kernel keeps after init, the descriptor checks (convolution_descriptor.cpp), the state
// made from the weights (convolution_weights.cpp), and the encoders (convolution_encode.cpp; the
// tuner's trials in convolution_tuning.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkcnn/convolution.h"
#include "kernels/weights.h"
#include "vkcnn/error.h"
#include "vulkan/pipelines.h"

namespace vkcnn {
class Context;
}

namespace vkcnn::detail {

struct KernelEncoding;
class DeviceBuffer;
class DispatchRecorder;
namespace shader {
struct ConvolutionPush;
}

// What a convolution-family kernel keeps after init: the descriptor and device copies of the
// packed, batch-norm-folded weights, the bias and the PReLU slopes.
struct ConvolutionState {
  ConvolutionDescriptor descriptor;
  ShaderId shader = ShaderId::convolution;
  std::shared_ptr<DeviceBuffer> weights, bias, slopes;
  // Dense convolutions on devices with matrix units: the weights as the float16 matrix of
  // convolution_matrix.glsl.
  std::shared_ptr<DeviceBuffer> matrixWeights;
  // Fully connected layers: `weights` as float16 (fully_connected_batched_half.comp).
  std::shared_ptr<DeviceBuffer> halfWeights;
  // 3x3 stride-1 convolutions as Winograd's (winograd.h): F(4x4,3x3)'s transformed weights for the
  // portable GEMM, made where float32 may run them, and F(2x2,3x3)'s in float16 for the matrix
  // units, where float16 runs there (winogradWanted).
  std::shared_ptr<DeviceBuffer> winogradWeights, winogradMatrixWeights;
};

inline void require(bool condition, const std::string& message) {
  if (!condition) throw Error(ErrorCode::invalidArgument, message);
}

inline std::string str(uint64_t v) {
  return std::to_string(v);
}

// Everything about a descriptor that can be checked without weights.
void checkDescriptor(const ConvolutionDescriptor& d, const std::string& what);
void checkWeightCounts(const ConvolutionDescriptor& d, size_t weights, size_t bias,
                       const std::string& what);
// The label a kernel gets without one: "<kind> WxH in->out".
std::string defaultLabel(const char* kind, const ConvolutionDescriptor& d);
// The encode's source channel window holds the descriptor's input channels.
void checkSourceChannels(const KernelEncoding& e, const ConvolutionDescriptor& d);

// A Convolution or FullyConnected (`Kernel`) made from .dat files of `d`'s weights and bias (none
// where `biasPath` is empty), mapped rather than read; the caller has checked `d`. `what` names
// the kernel in the files' errors.
template <typename Kernel>
Kernel fromDatFiles(const Context& context, const ConvolutionDescriptor& d,
                    const std::string& weightsPath, const std::string& biasPath,
                    const std::string& what) {
  MappedFloatFile weights(weightsPath, d.weightCount(), what + ": weights");
  if (biasPath.empty()) return Kernel(context, d, weights.values());
  MappedFloatFile bias(biasPath, d.outputFeatureChannels, what + ": bias");
  return Kernel(context, d, weights.values(), bias.values());
}

// Checks `d` and the counts, folds the batch normalisation and makes the device copies of the
// weights the configurations `context` may run read; `halfCopy`: a fully connected layer's float16
// copy too.
std::shared_ptr<const ConvolutionState> makeState(const Context& context,
                                                  const ConvolutionDescriptor& d,
                                                  std::span<const float> weights,
                                                  std::span<const float> bias,
                                                  const std::string& what, const std::string& label,
                                                  bool halfCopy = false);

// The weights, bias, slopes, images and push constants of one encode; returns the bound
// destination slices per image (fully_connected_batched reads them alike).
uint32_t bindConvolution(DispatchRecorder& r, shader::ConvolutionPush& push, KernelEncoding& e,
                         const ConvolutionState& s, const std::shared_ptr<DeviceBuffer>& weights,
                         int32_t originX, int32_t originY);

// One encode; (leftEdge, topEdge) is where the window starts relative to the offset position.
// `configuration` and `tuningKeyOut` receive what ran and the shape's tuning key;
// `configurationOverride` (a trial of tuneShape) replaces VKCNN_CONVOLUTION_TILE and the tuning.
void encodeConvolution(KernelEncoding& e, const ConvolutionState& s, ShaderId shader,
                       int64_t leftEdge, int64_t topEdge, std::string* configuration = nullptr,
                       std::string* tuningKeyOut = nullptr,
                       const std::string* configurationOverride = nullptr);

// The pieces of one batch (Convolution::encodeBatch), side by side.
void encodeConvolutionPieces(std::span<KernelEncoding> pieces, const ConvolutionState& s,
                             int64_t leftEdge, int64_t topEdge, std::string& configuration,
                             std::string& tuningKey);

// ContextOptions::tuneConvolutions: a shape without a tuning entry has its candidates timed here,
// before the caller's encode goes on, in a command buffer of its own on fresh images of the same
// size, images per dispatch and format (the residual left out), each candidate several times
// interleaved with the others so that clocks rising or falling weigh on all alike, after a warm-up;
// the fastest (minimum over its runs) becomes the shape's entry and the file is written. Any
// failure leaves the shape to the cost model with a warning: tuning must never break a run.
void tuneShape(const KernelEncoding& e, const ConvolutionState& s, ShaderId shader,
               int64_t leftEdge, int64_t topEdge, const std::string& key,
               const std::vector<std::string>& candidates);

}  // namespace vkcnn::detail
