// Convolution family: dense, grouped and depthwise convolution (MPSCNNConvolution with an
// MPSCNNConvolutionDescriptor or MPSCNNDepthWiseConvolutionDescriptor) and fully connected layers
// (MPSCNNFullyConnected), with bias, batch normalisation folded into the weights at init and a
// fused neuron.
//
// Weights are float32 in MPS order, weight[outputChannels][kernelHeight][kernelWidth][inputChannels
// / groups] (for depthwise, where inputChannels / groups is 1: weight[outputChannels][kernelHeight]
// [kernelWidth]). They are copied into device memory at init; the caller may free them after.
// `.dat` files (raw little-endian float32, no header, as MPSCNN samples ship them) load the same.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vkcnn/export.h"
#include "vkcnn/image.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"

namespace vkcnn {

namespace detail {
struct ConvolutionState;
}

// Batch normalisation for inference, folded into weights and bias at init, per output channel o:
//   I = gamma[o] / sqrt(variance[o] + epsilon), J = beta[o] - I * mean[o]
//   W = w * I, B = b * I + J
// so it applies before the neuron. gamma empty means 1, beta empty means 0.
struct BatchNormalizationParameters {
  std::vector<float> mean, variance, gamma, beta;  // one per output channel each
  float epsilon = 0;                               // added to the variance
};

// Not in MPS: a per-channel affine, and optionally a ReLU, applied to a convolution's source as it
// is read. Input channel c reads as neuron(scale[c] * x + shift[c]), neuron none or relu; taps
// outside the source still read zero, as when the activation runs as a layer of its own before the
// convolution. Pre-activation networks (DenseNet's batch normalisation and ReLU before each 1x1
// convolution) then spend no dispatch and no image on it; a Graph fuses such pairs.
struct SourceActivation {
  std::vector<float> scale, shift;       // inputFeatureChannels values each
  NeuronType neuron = NeuronType::none;  // none or relu
};

// What a convolution's multiply-adds accumulate in (MPSNNConvolutionAccumulatorPrecisionOption):
// float32 (the default) or float16, which doubles the matrix units' rate and lets their tiles be
// twice as large for the same registers, at about 100x the rounding error of a long reduction
// (docs/performance.md). Only the matrix-unit tiles of a float16 destination have a float16
// accumulator; every other path (float32 storage, the portable shaders, Winograd, fully
// connected layers, the split reductions) accumulates in float32 whatever is asked.
enum class AccumulatorPrecision : uint8_t { float32, float16 };
// "float32" or "float16".
VKCNN_API const char* toString(AccumulatorPrecision precision);

// Every field of MPSCNNConvolutionDescriptor.
struct VKCNN_API ConvolutionDescriptor {
  // Any positive size, even ones too: the window's left edge is at offset.x - (dilated width >> 1)
  // with mpsDefault padding.
  uint32_t kernelWidth = 3, kernelHeight = 3;
  uint32_t inputFeatureChannels = 1, outputFeatureChannels = 1;
  uint32_t strideInPixelsX = 1, strideInPixelsY = 1;
  // The kernel spans (k - 1) * rate + 1 pixels, centred like an undilated one of that size.
  uint32_t dilationRateX = 1, dilationRateY = 1;
  // Both channel counts must be divisible by groups; group i of the input feeds only group i of
  // the output. Unlike MPS, channels per group need not be a multiple of 4. groups ==
  // inputFeatureChannels is depthwise.
  uint32_t groups = 1;
  // Applied after bias and batch normalisation.
  NeuronDescriptor neuron;
  std::optional<BatchNormalizationParameters> batchNormalization;
  // Not in MPS: the format of the images the kernel will write, where it is known (a Graph knows
  // its own). float32 makes no float16 copies of the weights, which only float16 destinations
  // read (the matrix-unit tiles, the half-precision fully connected shader): a float32 network
  // on a device with matrix units keeps half the weight memory. A float16 destination still works
  // with it, on the float32 weights' slower paths. Unset or float16: both kinds of copies.
  std::optional<ChannelFormat> destinationFormat;
  // Not in MPS (SourceActivation above): dense, grouped or depthwise, not FullyConnected. A 3x3
  // layer with it does not run as Winograd.
  std::optional<SourceActivation> sourceActivation;
  // MPSCNNConvolutionDescriptor's accumulatorPrecisionOption (AccumulatorPrecision above): a
  // request, honoured by the matrix-unit tiles only; a float32 destination, or any path without a
  // float16 accumulator, ignores it.
  AccumulatorPrecision accumulatorPrecision = AccumulatorPrecision::float32;

  // cnnConvolutionDescriptorWithKernelWidth:kernelHeight:inputFeatureChannels:outputFeatureChannels:
  static ConvolutionDescriptor make(uint32_t kernelWidth, uint32_t kernelHeight,
                                    uint32_t inputFeatureChannels, uint32_t outputFeatureChannels,
                                    const NeuronDescriptor& neuron = {});
  // MPSCNNDepthWiseConvolutionDescriptor: output channel o reads input channel o / multiplier;
  // outputFeatureChannels = inputFeatureChannels * channelMultiplier.
  static ConvolutionDescriptor depthwise(uint32_t kernelWidth, uint32_t kernelHeight,
                                         uint32_t inputFeatureChannels,
                                         uint32_t channelMultiplier = 1,
                                         const NeuronDescriptor& neuron = {});

  // setBatchNormalizationParametersForInferenceWithMean:variance:gamma:beta:epsilon: (copies;
  // gamma and beta may be empty).
  void setBatchNormalizationParametersForInference(std::span<const float> mean,
                                                   std::span<const float> variance,
                                                   std::span<const float> gamma,
                                                   std::span<const float> beta, float epsilon);
  // setNeuronType:parameterA:parameterB: (and C, for the types that take one). PReLU needs its
  // per-channel slopes: use setNeuronToPReLUWithParametersA (this throws invalidArgument for it).
  void setNeuronType(NeuronType type, float a = 0, float b = 0, float c = 0);
  // One slope per output channel (or one for all).
  void setNeuronToPReLUWithParametersA(std::span<const float> a);

  // The kernel's extent over the source: (kernel - 1) * dilation + 1.
  uint32_t dilatedKernelWidth() const { return (kernelWidth - 1) * dilationRateX + 1; }
  uint32_t dilatedKernelHeight() const { return (kernelHeight - 1) * dilationRateY + 1; }
  // Weights the descriptor needs: outputFeatureChannels * kernelHeight * kernelWidth *
  // inputFeatureChannels / groups.
  uint64_t weightCount() const;
};

// MPSCNNConvolution. The source window (sourceFeatureChannelOffset / MaxCount) must hold exactly
// inputFeatureChannels channels; the result goes to outputFeatureChannels destination channels from
// destinationFeatureChannelOffset (any offset, aligned or not).
class VKCNN_API Convolution : public UnaryKernel {
 public:
  // `bias` empty: no bias (zero), else outputFeatureChannels values.
  Convolution(const Context& context, const ConvolutionDescriptor& descriptor,
              std::span<const float> weights, std::span<const float> bias = {});
  // Weights and bias memory-mapped from raw little-endian float32 files; an empty biasPath means
  // no bias. A missing, unreadable, short or long file is Error(io) naming the file and sizes.
  static Convolution fromDatFiles(const Context& context, const ConvolutionDescriptor& descriptor,
                                  const std::string& weightsPath, const std::string& biasPath = {});

  // Where the window sits (MPSCNNKernel.padding); mpsDefault centres it on the offset position.
  Padding padding;
  // Images of one batch whose encodes run side by side with each encode of this kernel: a batch
  // the 2048-layer limit splits into pieces, each piece encoded with no barrier between them (as
  // a Graph does). The configuration is then chosen for all of them sharing the device rather
  // than for one piece alone (a 7x7 layer's piece of 4 images leaves most multiprocessors idle
  // by itself), by the cost model: tuning entries (vkcnn/convolution_tuning.h), timed for one
  // encode alone, do not apply to such encodes. 0, or no more than an encode's own images: that
  // encode alone.
  uint32_t imagesSideBySide = 0;

  // As given at construction (batch normalisation folded, the neuron set).
  const ConvolutionDescriptor& descriptor() const;

  // encode() that adds `residual` before the neuron: destination = neuron(convolution(source) +
  // bias + residual), a residual block's shortcut in the same dispatch instead of an Arithmetic
  // add after it. Destination pixel (x, y) of image i, window channel c adds the residual's pixel
  // (x, y) of image i, channel c: the residual has the destination's width, height and
  // numberOfImages, and outputFeatureChannels channels. It may be a temporary (one read) or a
  // view, but must not share layers with the destination.
  void encodeWithResidual(CommandBuffer& commandBuffer, const Image& source, const Image& residual,
                          const Image& destination);
  TemporaryImage encodeWithResidual(CommandBuffer& commandBuffer, const Image& source,
                                    const Image& residual);

  // The output of the padded, strided, dilated source (Padding's formula) and
  // outputFeatureChannels.
  uint32_t destinationWidth(uint32_t sourceWidth) const override;
  uint32_t destinationHeight(uint32_t sourceHeight) const override;
  uint32_t destinationFeatureChannels(uint32_t sourceChannels) const override;

  // One batch held in several Images (MPS's encodeBatch over an MPSImageBatch), as a Graph holds a
  // wide value's batch in pieces that fit 2048 array layers: sources[k] to destinations[k] (and
  // residuals[k] added before the neuron, as encodeWithResidual; none, or one per pair), each
  // pair as encode() takes it, all checked before anything is recorded. The pairs run side by
  // side, their configuration chosen for all of them sharing the device (imagesSideBySide), and
  // Winograd (configuration "winograd") runs its GEMMs once over every pair's images.
  void encodeBatch(CommandBuffer& commandBuffer, const std::vector<Image>& sources,
                   const std::vector<Image>& destinations,
                   const std::vector<Image>& residuals = {});

  // What the last encode ran (empty before one): a matrix-unit tile of convolution_tiles.h
  // ("64x64", "grouped 64x16"), a split-k shader ("matrix_medium"), a portable GEMM tile
  // ("gemm_large"), "direct", "grouped direct", "depthwise" or "winograd" (3x3 stride-1 layers as
  // an input transform, per-position GEMMs and an output transform through buffers of the pool:
  // F(4x4,3x3) on the portable path, 36 GEMMs in float32, dispatches labelled "(winograd input)",
  // "(winograd gemm 16|32)" and "(winograd output)"; F(2x2,3x3) in float16 on the matrix units,
  // 16 GEMMs, the GEMM labelled "(winograd matrix gemm 64|128)"). The dispatch's label (profiles)
  // ends with the same in parentheses.
  const std::string& configuration() const;
  // The shape key of the last encode in the tuning file (vkcnn/convolution_tuning.h); empty where
  // nothing is chosen (the direct and depthwise shaders).
  const std::string& tuningKey() const;

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  // Where the window starts relative to the offset position (left, top).
  std::pair<int64_t, int64_t> windowEdges() const;

  std::shared_ptr<const detail::ConvolutionState> state_;
  std::string configuration_, tuningKey_;
};

// MPSCNNFullyConnected: a convolution whose kernel spans the whole source (kernelWidth x
// kernelHeight must equal the source's size), giving a 1x1 x outputFeatureChannels image per
// source image. Weights weight[outputChannels][kernelHeight][kernelWidth][inputChannels / groups]
// (a 2D [out][in] matrix of a flattened CHW tensor must be transposed to HWC order first).
// Dilation must be 1; strides matter only for destinations wider than one pixel.
class VKCNN_API FullyConnected : public UnaryKernel {
 public:
  // Weights and bias as Convolution takes them, copied at init.
  FullyConnected(const Context& context, const ConvolutionDescriptor& descriptor,
                 std::span<const float> weights, std::span<const float> bias = {});
  // From raw little-endian float32 files, as Convolution::fromDatFiles.
  static FullyConnected fromDatFiles(const Context& context,
                                     const ConvolutionDescriptor& descriptor,
                                     const std::string& weightsPath,
                                     const std::string& biasPath = {});

  // As given at construction.
  const ConvolutionDescriptor& descriptor() const;

  // One pixel of outputFeatureChannels per image.
  uint32_t destinationWidth(uint32_t) const override { return 1; }
  uint32_t destinationHeight(uint32_t) const override { return 1; }
  uint32_t destinationFeatureChannels(uint32_t sourceChannels) const override;

  // One batch held in several Images (MPS's encodeBatch over an MPSImageBatch): the images of
  // sources[k] to those of destinations[k], each pair as encode() takes it. Where the layer allows
  // (dense weights, input channels a multiple of 4; offset, clipRect and a 1x1 destination as by
  // default; float16 or float32 images), the sources are gathered into one Tensor and the weights
  // are read once for the whole batch instead of once per pair: a Graph holds a wide value's batch
  // in pieces that fit 2048 array layers (vgg16's 4096-channel classifier at batch 32: 16 pieces of
  // 2 images). Otherwise, or for one pair, encode() per pair.
  void encodeBatch(CommandBuffer& commandBuffer, const std::vector<Image>& sources,
                   const std::vector<Image>& destinations);

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  bool batchOnTensors(const std::vector<Image>& sources,
                      const std::vector<Image>& destinations) const;

  std::shared_ptr<const detail::ConvolutionState> state_;
};

}  // namespace vkcnn
