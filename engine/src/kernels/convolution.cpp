#include "vkcnn/convolution.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "convolution_interface.h"
#include "convolution_tiles.h"
#include "kernels/convolution_tuning.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/convolution_tuning.h"
#include "vkcnn/tensor_ops.h"
#include "kernels/kernel_encoding.h"
#include "kernels/neuron_params.h"
#include "kernels/tensor_encoding.h"
#include "kernels/weights.h"
#include "kernels/winograd.h"
#include "memory/half.h"
#include "memory/image_storage.h"
#include "vulkan/pipelines.h"
#include "vulkan/context_impl.h"

namespace vkcnn {

// ---- ConvolutionDescriptor ----------------------------------------------------------------------

ConvolutionDescriptor ConvolutionDescriptor::make(uint32_t kernelWidth, uint32_t kernelHeight,
                                                  uint32_t inputFeatureChannels,
                                                  uint32_t outputFeatureChannels,
                                                  const NeuronDescriptor& neuron) {
  ConvolutionDescriptor d;
  d.kernelWidth = kernelWidth;
  d.kernelHeight = kernelHeight;
  d.inputFeatureChannels = inputFeatureChannels;
  d.outputFeatureChannels = outputFeatureChannels;
  d.neuron = neuron;
  return d;
}

ConvolutionDescriptor ConvolutionDescriptor::depthwise(uint32_t kernelWidth, uint32_t kernelHeight,
                                                       uint32_t inputFeatureChannels,
                                                       uint32_t channelMultiplier,
                                                       const NeuronDescriptor& neuron) {
  ConvolutionDescriptor d = make(kernelWidth, kernelHeight, inputFeatureChannels,
                                 inputFeatureChannels * channelMultiplier, neuron);
  d.groups = inputFeatureChannels;
  return d;
}

void ConvolutionDescriptor::setBatchNormalizationParametersForInference(
    std::span<const float> mean, std::span<const float> variance, std::span<const float> gamma,
    std::span<const float> beta, float epsilon) {
  BatchNormalizationParameters p;
  p.mean.assign(mean.begin(), mean.end());
  p.variance.assign(variance.begin(), variance.end());
  p.gamma.assign(gamma.begin(), gamma.end());
  p.beta.assign(beta.begin(), beta.end());
  p.epsilon = epsilon;
  batchNormalization = std::move(p);
}

void ConvolutionDescriptor::setNeuronType(NeuronType type, float a, float b, float c) {
  if (type == NeuronType::prelu)
    throw Error(ErrorCode::invalidArgument,
                "ConvolutionDescriptor::setNeuronType: PReLU takes one slope per output channel; "
                "use setNeuronToPReLUWithParametersA");
  neuron = NeuronDescriptor::of(type, a, b, c);
}

void ConvolutionDescriptor::setNeuronToPReLUWithParametersA(std::span<const float> a) {
  neuron = NeuronDescriptor{NeuronType::prelu};
  neuron.preluSlopes.assign(a.begin(), a.end());
}

uint64_t ConvolutionDescriptor::weightCount() const {
  return groups ? uint64_t(outputFeatureChannels) * kernelHeight * kernelWidth *
                      (inputFeatureChannels / groups)
                : 0;
}

namespace detail {

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

namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw Error(ErrorCode::invalidArgument, message);
}

std::string str(uint64_t v) {
  return std::to_string(v);
}

// Everything about a descriptor that can be checked without weights.
void checkDescriptor(const ConvolutionDescriptor& d, const std::string& what) {
  require(d.kernelWidth > 0 && d.kernelHeight > 0,
          what + ": kernel size " + str(d.kernelWidth) + "x" + str(d.kernelHeight) +
              " (kernelWidth x kernelHeight) must be at least 1x1");
  require(d.inputFeatureChannels > 0, what + ": inputFeatureChannels is 0 (must be at least 1)");
  require(d.outputFeatureChannels > 0, what + ": outputFeatureChannels is 0 (must be at least 1)");
  require(d.strideInPixelsX > 0 && d.strideInPixelsY > 0,
          what + ": stride " + str(d.strideInPixelsX) + "x" + str(d.strideInPixelsY) +
              " (strideInPixelsX x strideInPixelsY) must be at least 1x1");
  require(d.dilationRateX > 0 && d.dilationRateY > 0,
          what + ": dilation rate " + str(d.dilationRateX) + "x" + str(d.dilationRateY) +
              " (dilationRateX x dilationRateY) must be at least 1x1");
  require(d.groups > 0, what + ": groups is 0 (must be at least 1)");
  require(d.inputFeatureChannels % d.groups == 0,
          what + ": inputFeatureChannels " + str(d.inputFeatureChannels) +
              " is not divisible by groups " + str(d.groups));
  require(d.outputFeatureChannels % d.groups == 0,
          what + ": outputFeatureChannels " + str(d.outputFeatureChannels) +
              " is not divisible by groups " + str(d.groups));
  // The shaders index with 32-bit ints.
  const uint64_t dilatedW = uint64_t(d.kernelWidth - 1) * d.dilationRateX + 1;
  const uint64_t dilatedH = uint64_t(d.kernelHeight - 1) * d.dilationRateY + 1;
  const uint64_t packed = (uint64_t(d.outputFeatureChannels) + 3) / 4 * 16 * d.kernelHeight *
                          d.kernelWidth * ((d.inputFeatureChannels / d.groups + 3) / 4);
  const uint64_t limit = uint64_t(std::numeric_limits<int32_t>::max());
  if (dilatedW > limit || dilatedH > limit || d.strideInPixelsX > limit ||
      d.strideInPixelsY > limit || packed > limit)
    throw Error(ErrorCode::limitExceeded,
                what + ": " + str(packed) + " packed weights, dilated kernel " + str(dilatedW) +
                    "x" + str(dilatedH) + ", stride " + str(d.strideInPixelsX) + "x" +
                    str(d.strideInPixelsY) + ": each must stay below " + str(limit));
  checkNeuron(d.neuron, what);
  if (d.neuron.type == NeuronType::prelu)
    require(
        d.neuron.preluSlopes.size() == 1 || d.neuron.preluSlopes.size() == d.outputFeatureChannels,
        what + ": " + str(d.neuron.preluSlopes.size()) + " PReLU slopes for " +
            str(d.outputFeatureChannels) + " output feature channels (need 1 or one per channel)");
  if (d.batchNormalization) {
    const BatchNormalizationParameters& bn = *d.batchNormalization;
    auto checkCount = [&](const std::vector<float>& v, const char* name, bool optional) {
      require((optional && v.empty()) || v.size() == d.outputFeatureChannels,
              what + ": batch normalization " + name + " has " + str(v.size()) + " values for " +
                  str(d.outputFeatureChannels) + " output feature channels" +
                  (optional ? " (give one per channel, or none)" : ""));
    };
    checkCount(bn.mean, "mean", false);
    checkCount(bn.variance, "variance", false);
    checkCount(bn.gamma, "gamma", true);
    checkCount(bn.beta, "beta", true);
    for (size_t o = 0; o < bn.variance.size(); ++o)
      require(double(bn.variance[o]) + bn.epsilon > 0,
              what + ": batch normalization variance[" + str(o) + "] + epsilon is " +
                  std::to_string(double(bn.variance[o]) + bn.epsilon) + " (must be > 0)");
  }
  if (d.sourceActivation) {
    const SourceActivation& a = *d.sourceActivation;
    require(a.scale.size() == d.inputFeatureChannels && a.shift.size() == d.inputFeatureChannels,
            what + ": source activation has " + str(a.scale.size()) + " scales and " +
                str(a.shift.size()) + " shifts for " + str(d.inputFeatureChannels) +
                " input feature channels (need one of each per channel)");
    require(a.neuron == NeuronType::none || a.neuron == NeuronType::relu,
            what + ": source activation neuron " + toString(a.neuron) + " (must be none or relu)");
    for (size_t c = 0; c < a.scale.size(); ++c)
      require(std::isfinite(a.scale[c]) && std::isfinite(a.shift[c]),
              what + ": source activation scale or shift of channel " + str(c) + " is not finite");
  }
}

// The source activation's specialization constant (convolution_bindings.glsl, SOURCE_ACTIVATION:
// 0 none, 1 the affine, 2 the affine and a ReLU), constant 10 of every convolution shader, added
// to `specialization` (the constants before it zero where the shader has none). Without one the
// pipelines stay those made without it.
void addSourceActivation(std::vector<int32_t>& specialization, const ConvolutionDescriptor& d) {
  if (!d.sourceActivation) return;
  specialization.resize(10, 0);
  specialization.push_back(d.sourceActivation->neuron == NeuronType::relu ? 2 : 1);
}

void checkWeightCounts(const ConvolutionDescriptor& d, size_t weights, size_t bias,
                       const std::string& what) {
  require(weights == d.weightCount(),
          what + ": " + str(weights) + " weights given, the descriptor needs " +
              str(d.weightCount()) + " (outputFeatureChannels " + str(d.outputFeatureChannels) +
              " x kernelHeight " + str(d.kernelHeight) + " x kernelWidth " + str(d.kernelWidth) +
              " x inputFeatureChannels/groups " + str(d.inputFeatureChannels / d.groups) + ")");
  require(bias == 0 || bias == d.outputFeatureChannels,
          what + ": " + str(bias) + " bias values given for " + str(d.outputFeatureChannels) +
              " output feature channels (give one per channel, or none)");
}

// Dense convolutions, and grouped ones whose groups start at layers on both sides (channels per
// group a multiple of 4), run on the matrix units where there are some (convolution_tiled.glsl
// takes the grouped ones, a GEMM per group); other grouped ones on the direct shader.
// Groups of 4 channels stay on the direct shader: the 16-column tiles ran them 2-3x slower
// (3/4 of each fragment is padding; NOTES.md, run 6).
bool groupedOnMatrixUnits(const ConvolutionDescriptor& d) {
  const uint32_t in = d.inputFeatureChannels / d.groups, out = d.outputFeatureChannels / d.groups;
  return d.groups == 1 || (in % 4 == 0 && out % 4 == 0 && in >= 8 && out >= 8);
}

// Fully connected layers from this many weights up are read by fully_connected_batched_half at
// every batch in float16 (batchedApplies): measured at batch 1 against the matrix units' split-k
// shader, 0.130 -> 0.108 ms at 102.8 M weights, 0.028 -> 0.018 at 4.1 M, but 0.017 -> 0.019 at 2 M
// (H100). Since one image has a loop of its own there, resnet50's classifier (2.05 M) takes
// 0.0126 ms against 0.0171 on 64x64p2s8 (H200, bench/NOTES.md, 2026-11-27, session 20).
constexpr uint64_t kLargeFullyConnected = 2000000;

// The channels F(4x4,3x3) needs to win on the portable path (winogradChosen): with fewer input
// channels its GEMMs are too short for the transforms' traffic (float32, batch 32: 3x3 32->96
// @28², 0.081 -> 0.103 ms).
bool winogradChannels(const ConvolutionDescriptor& d) {
  return winogradApplies(d) && d.inputFeatureChannels >= 48 && d.outputFeatureChannels >= 32;
}

// The channels F(2x2,3x3) needs on the matrix units (winogradChosen): with fewer its GEMMs'
// reduction is too short for the transforms' traffic (float16, batch 32: 64->64 @56², 0.104 ->
// 0.182 ms; 128->128 @28², 0.093 -> 0.100).
bool winogradMatrixChannels(const ConvolutionDescriptor& d) {
  return winogradApplies(d) && d.inputFeatureChannels >= 128 && d.outputFeatureChannels >= 128;
}

// Whether the portable path runs 3x3 stride-1 layers as F(4x4,3x3) (winograd.h), for `pixels`
// destination pixels (the images encoded together, pieces side by side included) in `blocks`
// blocks of 4x4. Fitted to every float32 3x3 stride-1 shape of six networks at batch 1 and 32
// (H200, bench/NOTES.md, 2026-11-27, session 22, runs 3-4): it wins from 1 GFLOP of direct work
// and 32 blocks at least three quarters full (batch 32: 512->512 @28² 3.70 -> 1.61 ms, 128->32
// @28² 0.176 -> 0.117; batch 1: 256->256 @56² 0.226 -> 0.121). Below, its three dispatches, its
// pipelines' first use in each inference and 4x the weights' traffic cost more than the
// multiply-adds it saves (batch 1: 64->64 @56², 0.23 GFLOP, 0.032 -> 0.046 ms; 512->512 @14², 16
// blocks, 0.096 -> 0.190; googlenet's 64->192 @56², 0.69 GFLOP, gained 10 us alone and lost 85
// in the network), and 13x13 maps fill 66% of their blocks (batch 32: 64->256 @13², 1.6 GFLOP,
// 0.086 -> 0.084 alone; squeezenet1_1 lost 4%).
//
// On the matrix units, F(2x2,3x3) (float16): fitted to every float16 3x3 stride-1 shape of six
// networks at batch 1 and 32 (H200, bench/NOTES.md, 2026-11-27, session 23, runs 1 and 4), it
// wins with at least 256 channels a side from 1.5 GFLOP of direct work (batch 32: 512->512 @28²
// 0.948 -> 0.633 ms, 256->256 @14² 0.085 -> 0.072, 512->512 @7² 0.114 -> 0.072; batch 1:
// 256->256 @56² 0.062 -> 0.042). Below, its three dispatches and the products' traffic cost more
// than the multiply-adds it saves (batch 1: 512->512 @14², 0.92 GFLOP, 0.029 -> 0.034; batch 32:
// 128->256 @56², 0.545 -> 0.635; 128->128 @112², 1.104 -> 1.414 with the clocks warm: session 23's
// 2.09 ms for the direct tile, which had added a branch for it, was a cold measurement, session
// 24 run 1). Since the direct tiles' main loop lost its per-chunk divisions (session 29), F(2x2)
// needs 512 input channels, or fewer than 8192 destination pixels, to win (batch 32, the pieces
// side by side: 256->256 @56² 0.846 -> 0.676 ms direct on 256x128w8k16, 256->512 @28² 0.384 ->
// 0.341; 512->512 @28² still 0.576 against 0.651, @7² 0.055 against 0.082; 256->256 @14², 6272
// pixels, even; batch 1: 256->256 @56² 0.038 against 0.047, 256->512 @28² 0.026 against 0.035;
// bench/NOTES.md, 2026-11-28, session 30, runs 1 and 4).
bool winogradChosen(const ConvolutionDescriptor& d, uint64_t pixels, uint64_t blocks,
                    WinogradScheme scheme) {
  const double flops = 18.0 * double(pixels) * d.inputFeatureChannels * d.outputFeatureChannels;
  if (scheme == WinogradScheme::matrixUnits)
    return winogradMatrixChannels(d) && d.inputFeatureChannels >= 256 &&
           d.outputFeatureChannels >= 256 && flops >= 1.5e9 &&
           (d.inputFeatureChannels >= 512 || pixels < 8192);
  return winogradChannels(d) && flops >= 1e9 && blocks >= 32 && 4 * pixels >= 3 * 16 * blocks;
}

// Whether an encode, or a batch's pieces as one, runs Winograd's `scheme`: VKCNN_CONVOLUTION_TILE
// or a tuning entry names it, or nothing is forced and, where the rule applies (not a piece
// encoded alone), winogradChosen takes the layer. The caller has checked that its weights exist
// and it fits.
bool winogradTaken(const std::string& forced, bool ruleApplies, const ConvolutionDescriptor& d,
                   uint64_t pixels, uint64_t blocks, WinogradScheme scheme) {
  return forced == "winograd" ||
         (forced.empty() && ruleApplies && winogradChosen(d, pixels, blocks, scheme));
}

uint64_t pixelsOf(const KernelEncoding& e) {
  return uint64_t(e.clipWidth) * e.clipHeight * e.imageCount;
}

// The 4x4 blocks of F(4x4,3x3) (the portable scheme's rule counts them).
uint64_t blocksOf(const KernelEncoding& e) {
  return uint64_t((e.clipWidth + 3) / 4) * ((e.clipHeight + 3) / 4) * e.imageCount;
}

// Whether a kernel keeps a scheme's weights: F(4x4,3x3)'s (4x the 3x3 ones in float32) where the
// selector or the tuner may take it (float32, or any format on devices without matrix units),
// F(2x2,3x3)'s (16/9 of them in float16) where float16 may run on the matrix units, with the
// channels each needs, unless ContextOptions::winograd is off; or where
// VKCNN_CONVOLUTION_TILE=winograd forces it when the kernel is made.
bool winogradWanted(const ConvolutionDescriptor& d, const ContextImpl& context,
                    WinogradScheme scheme) {
  if (!winogradApplies(d)) return false;
  const bool matrixUnits = context.capabilities().matrixUnits;
  if (scheme == WinogradScheme::matrixUnits && !matrixUnits) return false;
  if (context.overrides().choice.tile == "winograd") return true;
  if (scheme == WinogradScheme::matrixUnits)
    return context.winograd && d.destinationFormat != ChannelFormat::float32 &&
           winogradMatrixChannels(d);
  return context.winograd && (d.destinationFormat == ChannelFormat::float32 || !matrixUnits) &&
         winogradChannels(d);
}

std::shared_ptr<const ConvolutionState> makeState(const Context& context,
                                                  const ConvolutionDescriptor& d,
                                                  std::span<const float> weights,
                                                  std::span<const float> bias,
                                                  const std::string& what, const std::string& label,
                                                  bool halfCopy = false) {
  checkDescriptor(d, what);
  checkWeightCounts(d, weights.size(), bias.size(), what);
  const uint32_t out = d.outputFeatureChannels;
  const uint32_t perGroup = d.inputFeatureChannels / d.groups;
  const uint32_t taps = d.kernelWidth * d.kernelHeight;

  // Batch normalisation folded per output channel: W = w * scale, B = b * scale + shift.
  std::vector<double> scale(out, 1.0), shift(out, 0.0);
  if (d.batchNormalization) {
    const BatchNormalizationParameters& bn = *d.batchNormalization;
    for (uint32_t o = 0; o < out; ++o) {
      const double gamma = bn.gamma.empty() ? 1.0 : bn.gamma[o];
      const double beta = bn.beta.empty() ? 0.0 : bn.beta[o];
      scale[o] = gamma / std::sqrt(double(bn.variance[o]) + double(bn.epsilon));
      shift[o] = beta - scale[o] * bn.mean[o];
    }
  }
  std::vector<float> foldedBias(out);
  for (uint32_t o = 0; o < out; ++o)
    foldedBias[o] = float((bias.empty() ? 0.0 : double(bias[o])) * scale[o] + shift[o]);
  // The source activation's scales, then its shifts, after the bias (convolution_bindings.glsl),
  // each padded with zeros to whole slices: a channel past the input reads zero.
  if (d.sourceActivation) {
    const uint32_t padded = VKCNN_SOURCE_ACTIVATION_STRIDE(d.inputFeatureChannels);
    foldedBias.resize(size_t(out) + 2 * padded, 0.f);
    std::copy(d.sourceActivation->scale.begin(), d.sourceActivation->scale.end(),
              foldedBias.begin() + out);
    std::copy(d.sourceActivation->shift.begin(), d.sourceActivation->shift.end(),
              foldedBias.begin() + out + padded);
  }

  auto state = std::make_shared<ConvolutionState>();
  state->descriptor = d;
  // The packed buffers are left uninitialised and filled (padding zeroed) by ranges of output
  // channels on threads: vgg16's first classifier is 102.8 M weights, seconds on one thread.
  constexpr size_t kPerThread = size_t(1) << 20;  // weights; fewer are not worth a thread
  size_t packedCount = 0;
  std::unique_ptr<float[]> packed;
  if (perGroup == 1) {
    // Depthwise: [tap][output channel].
    state->shader = ShaderId::depthwise_convolution;
    packedCount = size_t(taps) * out;
    packed.reset(new float[packedCount]);
    for (uint32_t o = 0; o < out; ++o)
      for (uint32_t tap = 0; tap < taps; ++tap)
        packed[size_t(tap) * out + o] = float(weights[size_t(o) * taps + tap] * scale[o]);
  } else {
    // mat4 blocks [output slice][tap][input slice of the group] (convolution_gemm.glsl), column c
    // of a block holding input channel 4s + c for the slice's 4 output channels; zero-padded.
    const size_t slices = (perGroup + 3) / 4, k = size_t(taps) * slices;
    const size_t outSlices = (out + 3) / 4;
    packedCount = outSlices * k * 16;
    packed.reset(new float[packedCount]);
    float* p = packed.get();
    detail::parallelRanges(outSlices, 1, kPerThread / (k * 16) + 1, [&](size_t s0, size_t s1) {
      std::fill(p + s0 * k * 16, p + s1 * k * 16, 0.f);
      for (uint32_t o = uint32_t(s0 * 4); o < std::min<size_t>(out, s1 * 4); ++o)
        for (uint32_t tap = 0; tap < taps; ++tap)
          for (uint32_t i = 0; i < perGroup; ++i)
            p[((o / 4 * k + tap * slices + i / 4) * 4 + i % 4) * 4 + o % 4] =
                float(weights[(size_t(o) * taps + tap) * perGroup + i] * scale[o]);
    });
  }
  ContextImpl& impl = *context.impl();
  const bool float16Copies = d.destinationFormat != ChannelFormat::float32;
  // A large fully connected layer's matrix-unit copy would serve only destinations starting inside
  // an array layer, which the float32 weights serve too (vgg16's fc6: 205 MB saved).
  const bool batchedAlways = halfCopy && d.groups == 1 && d.weightCount() >= kLargeFullyConnected;
  if (float16Copies && perGroup > 1 && impl.capabilities().matrixUnits && groupedOnMatrixUnits(d) &&
      !batchedAlways) {
    // Row k = (tap * S + s) * 4 + c holds input channel 4s + c of the tap; zero rows pad k to
    // whole chunks and zero columns the output channels to whole tiles (convolution_tiles.h).
    // Grouped: one such matrix per group, one after the other.
    const uint32_t outPerGroup = out / d.groups;
    const size_t slices = (perGroup + 3) / 4, k = size_t(taps) * slices * 4;
    const size_t rows =
        (k + VKCNN_MATRIX_ROW_ALIGN - 1) / VKCNN_MATRIX_ROW_ALIGN * VKCNN_MATRIX_ROW_ALIGN;
    const size_t align =
        d.groups == 1 ? VKCNN_MATRIX_COLUMN_ALIGN : VKCNN_MATRIX_GROUP_COLUMN_ALIGN;
    const size_t columns = (size_t(outPerGroup) + align - 1) / align * align;
    const size_t matrixCount = rows * columns * d.groups;
    std::unique_ptr<uint16_t[]> matrix(new uint16_t[matrixCount]);
    uint16_t* m = matrix.get();
    detail::parallelRanges(matrixCount, 4096, kPerThread,
                           [&](size_t b, size_t e) { std::fill(m + b, m + e, uint16_t(0)); });
    // A transpose: in blocks of 64 output channels, so that the writes (a row per input channel)
    // stay in cache instead of each landing a row apart (seconds for vgg16's first classifier).
    constexpr uint32_t kBlock = 64;
    detail::parallelRanges(out, kBlock, kPerThread / k + 1, [&](size_t b, size_t e) {
      for (uint32_t o0 = uint32_t(b); o0 < e; o0 += kBlock)
        for (uint32_t tap = 0; tap < taps; ++tap)
          for (uint32_t i = 0; i < perGroup; ++i) {
            const size_t row = ((size_t(tap) * slices + i / 4) * 4 + i % 4) * columns;
            for (uint32_t o = o0; o < std::min<size_t>(e, o0 + kBlock); ++o)
              m[size_t(o / outPerGroup) * rows * columns + row + o % outPerGroup] =
                  floatToHalf(float(weights[(size_t(o) * taps + tap) * perGroup + i] * scale[o]));
          }
    });
    state->matrixWeights =
        DeviceBuffer::create(impl, matrixCount * sizeof(uint16_t), m, label + " float16 weights");
  }
  if (float16Copies && halfCopy && perGroup > 1) {
    std::unique_ptr<uint16_t[]> half(new uint16_t[packedCount]);
    uint16_t* h = half.get();
    const float* p = packed.get();
    detail::parallelRanges(packedCount, 4096, kPerThread, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) h[i] = floatToHalf(p[i]);
    });
    state->halfWeights =
        DeviceBuffer::create(impl, packedCount * sizeof(uint16_t), h, label + " float16 weights");
  }
  state->weights =
      DeviceBuffer::create(impl, packedCount * sizeof(float), packed.get(), label + " weights");
  state->bias = DeviceBuffer::create(impl, foldedBias.size() * sizeof(float), foldedBias.data(),
                                     label + " bias");
  state->slopes = neuronSlopes(impl, d.neuron, label);
  if (winogradWanted(d, impl, WinogradScheme::portable)) {
    const size_t count = winogradWeightCount(d);
    std::unique_ptr<float[]> u(new float[count]);
    winogradWeights(d, weights, scale, u.get());
    state->winogradWeights =
        DeviceBuffer::create(impl, count * sizeof(float), u.get(), label + " winograd weights");
  }
  if (winogradWanted(d, impl, WinogradScheme::matrixUnits)) {
    const size_t count = winogradMatrixWeightCount(d);
    std::unique_ptr<uint16_t[]> u(new uint16_t[count]);
    winogradMatrixWeights(d, weights, scale, u.get());
    state->winogradMatrixWeights = DeviceBuffer::create(impl, count * sizeof(uint16_t), u.get(),
                                                        label + " winograd float16 weights");
  }
  return state;
}

std::string defaultLabel(const char* kind, const ConvolutionDescriptor& d) {
  return std::string(kind) + " " + str(d.kernelWidth) + "x" + str(d.kernelHeight) + " " +
         str(d.inputFeatureChannels) + "->" + str(d.outputFeatureChannels);
}

void checkSourceChannels(const KernelEncoding& e, const ConvolutionDescriptor& d) {
  require(e.sourceChannels == d.inputFeatureChannels,
          e.what() + ": the source channel window of '" + e.source.label() + "' holds " +
              str(e.sourceChannels) + " feature channels (sourceFeatureChannelOffset " +
              str(e.sourceChannelOffset) + ") but inputFeatureChannels is " +
              str(d.inputFeatureChannels));
}

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

constexpr uint32_t kMaxSplits = 16;

// `name` is `tile`'s name (0: convolution_tiled), or it followed by "s" and a split count from 1
// to kMaxSplits (convolution_tiled_split); -1 for any other name.
int32_t splitsNamed(const std::string& name, const MatrixTile& tile) {
  const size_t n = std::strlen(tile.name);
  if (name.compare(0, n, tile.name) != 0) return -1;
  if (name.size() == n) return 0;
  if (name[n] != 's' || name.size() < n + 2 || name.size() > n + 3) return -1;
  int32_t splits = 0;
  for (size_t i = n + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    splits = splits * 10 + int32_t(name[i] - '0');
  }
  return splits >= 1 && splits <= int32_t(kMaxSplits) ? splits : -1;
}

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

const GemmKernel* gemmKernelOf(ShaderId shader) {
  for (const GemmKernel& k : kGemmKernels)
    if (k.shader == shader) return &k;
  return nullptr;
}

// The shader `forced` names among those of the matrix units or the portable ones, if any.
std::optional<ShaderId> gemmKernelNamed(const std::string& forced, bool matrixUnits) {
  for (const GemmKernel& k : kGemmKernels)
    if (k.matrixUnits == matrixUnits && forced == k.name) return k.shader;
  return std::nullopt;
}

// The portable GEMM tile `shader`, or where the device's shared memory cannot hold it (Vulkan's
// least is 16 KiB; these tiles take 16-32 KiB, as reflected from their SPIR-V) the first smaller
// one that fits, else the direct shader (ShaderId::convolution, no shared memory).
ShaderId portableTileWithin(const DeviceCapabilities& caps, ShaderId shader,
                            ShaderVariant variant) {
  auto fits = [&](ShaderId s) {
    return shaderModule(s, variant).sharedMemorySize <= caps.maxComputeSharedMemorySize;
  };
  if (fits(shader)) return shader;
  for (ShaderId s : {ShaderId::convolution_gemm_128x16w8, ShaderId::convolution_gemm_large,
                     ShaderId::convolution_gemm_small})
    if (fits(s)) return s;
  return ShaderId::convolution;
}

std::string nameOf(const GemmChoice& c) {
  if (c.tile)
    return c.shader == ShaderId::convolution_tiled_split
               ? c.tile->name + ("s" + std::to_string(c.splits))
               : c.tile->name;
  const GemmKernel* k = gemmKernelOf(c.shader);
  return k ? k->name : "";
}

// The test and benchmark hook VKCNN_CONVOLUTION_TILE forces a configuration where it applies: a
// tile name of convolution_tiles.h, matrix_large / matrix_medium / matrix_small (the split-k
// shaders of convolution_matrix.glsl), gemm_large / gemm_small / gemm_128x32w16 / gemm_128x32w8 /
// gemm_128x16w8 (the portable GEMM shaders), or legacy (the choice before the large tiles
// existed). Unset or unknown: the selector decides.
const std::string& forcedTile(const ContextImpl& context) {
  return context.overrides().choice.tile;
}

// The test hook VKCNN_CONVOLUTION_EPILOGUE forces convolution_tiled's epilogue: "ahead" (reads
// the bias, the residual and the output pixels before its loop) or "inline" (as it goes), with
// the neuron and the residual fixed in the pipeline ("ahead", "inline-fixed") or read from the
// push constants ("inline"). Unset or anything else: by the layer's workgroups
// (tiledConstants).
const std::string& forcedEpilogue(const ContextImpl& context) {
  return context.overrides().choice.epilogue;
}
std::optional<bool> forcedEpilogueAhead(const ContextImpl& context) {
  const std::string& forced = forcedEpilogue(context);
  if (forced.empty()) return std::nullopt;
  return forced == "ahead";
}

// convolution_tiled's EPILOGUE for a layer of `workgroups` (its pieces side by side included):
// the epilogue that reads ahead where they make several waves; below that (batch 1) its larger
// code costs more than it saves.
int32_t tiledEpilogue(const KernelEncoding& e, uint64_t workgroups, uint64_t multiprocessors) {
  const bool ahead =
      forcedEpilogueAhead(*e.commandBuffer.context).value_or(workgroups >= 4 * multiprocessors);
  return ahead ? (e.residual ? 2 : 1) : 0;
}

// convolution_tiled's specialization constants for `e` on tile `t` over `workgroups`: the epilogue
// above and its operations (the neuron's type, + 256 with a residual) fixed in the pipeline. Known,
// they take 5-20% off layers with short reductions, whose time is mostly the epilogue
// (bench/NOTES.md, 2026-11-28, session 28). Session 28 left them in the push constants below two
// waves of workgroups (batch 1), so that a network kept one pipeline per tile there; since then
// fixed ones win there too, more pipelines and all: resnet50 at batch 1 -4%, densenet121 and
// mobilenet_v2 -2% (bench/NOTES.md, 2026-11-29, session 34). VKCNN_CONVOLUTION_EPILOGUE=inline
// leaves them in the push constants.
std::array<int32_t, 10> tiledConstants(const MatrixTile& t, const KernelEncoding& e,
                                       const ConvolutionDescriptor& d, uint64_t workgroups,
                                       uint64_t multiprocessors) {
  const int32_t ops = int32_t(d.neuron.type) | (e.residual ? VKCNN_EPILOGUE_OPS_RESIDUAL : 0);
  const bool fixed = forcedEpilogue(*e.commandBuffer.context) != "inline";
  return t.specialization(tiledEpilogue(e, workgroups, multiprocessors), fixed ? ops : -1);
}

// What the first dispatch of a pipeline in a submission costs a layer over a later one: its code
// fetched into every multiprocessor (H200; bench/NOTES.md, 2026-11-27, sessions 20 and 25). The
// cost models below add it to a candidate whose pipeline has no dispatch yet in the command
// buffer, so that a batch-1 network keeps to the pipelines it already runs where another one
// would win by less.
constexpr double kFirstDispatchNanoseconds = 8000.0;

// Encodes of the same layer running side by side with this one, itself included
// (Convolution::imagesSideBySide): their workgroups share the device with this encode's.
uint64_t piecesSideBySide(const KernelEncoding& e) {
  return e.imageCount && e.imagesSideBySide > e.imageCount
             ? (uint64_t(e.imagesSideBySide) + e.imageCount - 1) / e.imageCount
             : 1;
}

// What splitting a reduction costs in the latency model below: the partial tiles written and
// summed, fitted with the tiles' nanosecondsPerChunkAlone (fit_cost_model.py --alone).
constexpr double kSplitNanoseconds = 3346.0, kSplitShareNanoseconds = 821.0;

// The latency model's choice (convolution_tiles.h, nanosecondsPerChunkAlone) for a layer alone
// with `chunks` 32-deep chunks, `tilesOf(rows, columns)` giving its tile count: the tile and split
// with the least waves x chunks per split x a chunk's time, plus what a split costs. Always on the
// split module, a reduction whole included: the first dispatch of each pipeline in an inference
// takes 8-10 us longer (bench/NOTES.md, 2026-11-27, session 20), so these layers share one
// pipeline per tile.
template <class TilesOf, class FirstDispatch>
GemmChoice latencyChoice(const TilesOf& tilesOf, uint64_t chunks, uint64_t sms,
                         const FirstDispatch& firstDispatch) {
  const MatrixTile* best = nullptr;
  uint32_t bestSplits = 1;
  double bestCost = 0;
  for (const MatrixTile& t : kMatrixTiles) {
    if (!t.nanosecondsPerChunkAlone) continue;
    const uint64_t tiles = tilesOf(t.rows(), t.columns());
    // One pipeline for every split count (the split is the dispatch's z).
    const double first = firstDispatch(ShaderId::convolution_tiled_split, t, tiles);
    for (uint32_t splits : {1u, 2u, 4u, 8u}) {
      if (splits > 1 && chunks / splits < 2) break;
      const uint64_t waves = (tiles * splits + sms - 1) / sms;
      const double cost =
          double(waves * ((chunks + splits - 1) / splits)) * t.nanosecondsPerChunkAlone +
          (splits > 1 ? kSplitNanoseconds + kSplitShareNanoseconds * splits : 0.0) + first;
      if (!best || cost < bestCost) best = &t, bestSplits = splits, bestCost = cost;
    }
  }
  return {ShaderId::convolution_tiled_split, best, bestSplits};
}

// The large tiles of convolution_tiled where the layer has enough of them to fill the device,
// the one a cost model says is fastest: waves of resident workgroups, each costing the tile's
// time per stage times the stages plus its time per wave (convolution_tiles.h, fitted to the
// H200). Layers with too few outputs for that (late layers at batch 1) go to the split-k shaders
// of convolution_matrix.glsl, which divide the reduction inside the workgroup, by a latency model
// of their own.
GemmChoice gemmShader(const KernelEncoding& e, const ConvolutionDescriptor& d, bool matrixUnits,
                      bool tiledAllowed, uint32_t multiprocessors, const std::string& forced) {
  const uint64_t rows = uint64_t(e.clipWidth) * e.clipHeight * e.imageCount;
  const uint64_t pieces = piecesSideBySide(e);
  const uint64_t slices = (e.destinationChannels + 3) / 4;
  if (matrixUnits) {
    for (const MatrixTile& t : kMatrixTiles)
      if (const int32_t splits = splitsNamed(forced, t); tiledAllowed && splits >= 0)
        return {splits ? ShaderId::convolution_tiled_split : ShaderId::convolution_tiled, &t,
                uint32_t(std::max(splits, 1))};
    if (const std::optional<ShaderId> named = gemmKernelNamed(forced, true)) return {*named};
    const uint64_t sms = multiprocessors ? multiprocessors : DeviceFacts::kAssumedMultiprocessors;
    const uint64_t k =
        uint64_t(d.kernelWidth) * d.kernelHeight * ((d.inputFeatureChannels + 3) / 4) * 4;
    // Every piece side by side brings as many tiles (bench/NOTES.md, 2026-11-27).
    auto tilesOf = [&](uint64_t tileRows, uint64_t tileColumns) {
      return (rows + tileRows - 1) / tileRows * ((slices * 4 + tileColumns - 1) / tileColumns) *
             pieces;
    };
    // Long reductions over few tiles: 32 x 64 tiles with the reduction split over workgroups
    // (convolution_tiled_split), about two workgroups per multiprocessor and at least 8 chunks
    // per split, where the split-k shaders below keep a few warps per multiprocessor busy on
    // every chunk in turn (batch 1: 3x3 512->512 @14² 0.069 -> 0.032 ms). Measured on every
    // batch-1 shape (bench/NOTES.md, 2026-11-28, session 18): it wins from 16 tiles and 1024
    // tile-chunks on, loses below (fewer output tiles than that: 1x1 576->96 @14², 0.011 ->
    // 0.015 ms; the fully connected layers). Only for a layer alone: beside the other pieces of a
    // split batch, densenet121's 3x3 128->32 @7² at batch 32 took it and the network lost 9%.
    // kFirstDispatchNanoseconds where `tile` on `shader` with the epilogue `workgroups` take has
    // no dispatch yet in this command buffer (a standalone encode: every candidate alike). A
    // pipeline counts as run when its tile and epilogue have, whatever its epilogue's operations
    // (constants 8 and 9): the charge was fitted at that granularity, and counted per operations
    // it moved shufflenet_v2's batch-32 1x1 layers from 64x64 to 128x128, 3% slower
    // (bench/NOTES.md, 2026-11-28, session 28).
    auto firstDispatch = [&](ShaderId shader, const MatrixTile& tile, uint64_t workgroups) {
      const auto constants = tiledConstants(tile, e, d, workgroups, multiprocessors);
      return e.commandBuffer.dispatched(uint32_t(shader), uint32_t(ShaderVariant::f16), constants,
                                        8)
                 ? 0.0
                 : kFirstDispatchNanoseconds;
    };
    const uint64_t fewTiles = tilesOf(32, 64), chunks = (k + 31) / 32;
    const uint64_t splits32x64 =
        fewTiles ? std::min<uint64_t>({8, 2 * sms / fewTiles, chunks / 8}) : 0;
    const bool splitRule =
        pieces == 1 && fewTiles >= 16 && fewTiles * chunks >= 1024 && splits32x64 >= 2;
    // Measured: below about 0.6 of a 32 x 64 tile per multiprocessor the split-k shaders win.
    const bool tiledRegime = 5 * tilesOf(32, 64) >= 3 * sms;
    // Where those two would take a tile but the layer has fewer than two waves of 64 x 64 tiles
    // and a long reduction, every workgroup runs its chunks one after another, each waiting on
    // weights from DRAM inside a network: the latency model of convolution_tiles.h
    // (nanosecondsPerChunkAlone), over its tiles with the reduction split 1, 2, 4 or 8 ways.
    // Replayed on every batch-1 shape of five networks with the caches flushed, it takes the
    // shapes' sum from 4.25 to 3.80 ms (3x3 512->512 @28²: 64x64 0.126 -> 128x128s4 0.058 ms;
    // bench/NOTES.md, 2026-11-27, session 20).
    if (tiledAllowed && forced != "legacy" && pieces == 1 && chunks >= 8 &&
        tilesOf(64, 64) < 2 * sms && (tiledRegime || splitRule))
      return latencyChoice(tilesOf, chunks, sms, firstDispatch);
    auto costModelChoice = [&]() -> GemmChoice {
      const MatrixTile* best = nullptr;
      double bestCost = 0;
      for (const MatrixTile& t : kMatrixTiles) {
        if (!t.nanosecondsPerStage || (e.residual && !t.withResidual) ||
            (t.maxColumns && slices * 4 > t.maxColumns))
          continue;
        const uint64_t perWave = sms * t.residentPerMultiprocessor;
        const uint64_t tiles = tilesOf(t.rows(), t.columns());
        if (tiles < uint64_t(t.denseWaves) * perWave) continue;
        const double cost = double((tiles + perWave - 1) / perWave) *
                                (double((k + t.depth() - 1) / t.depth()) * t.nanosecondsPerStage +
                                 t.nanosecondsPerWave) +
                            firstDispatch(ShaderId::convolution_tiled, t, tiles);
        if (!best || cost < bestCost) best = &t, bestCost = cost;
      }
      return {ShaderId::convolution_tiled, best};
    };
    if (tiledAllowed && forced != "legacy" && tiledRegime) return costModelChoice();
    if (tiledAllowed && forced != "legacy" && splitRule)
      for (const MatrixTile& t : kMatrixTiles)
        if (std::strcmp(t.name, "32x64") == 0)
          return {ShaderId::convolution_tiled_split, &t, uint32_t(splits32x64)};
    // Tiles (pixels x slices, ways the reduction is split, workgroups a multiprocessor holds) and
    // a latency model: batch-1 layers are bound by how many rounds of 32-deep chunks each
    // workgroup runs one after another, waves of workgroups times chunks per split. Smaller tiles
    // must win clearly, as they reuse each load less.
    struct Option {
      ShaderId shader;
      uint64_t pixels, slices, split, perMultiprocessor;
    };
    const Option options[] = {{ShaderId::convolution_matrix_large, 64, 16, 1, 3},
                              {ShaderId::convolution_matrix_medium, 32, 8, 4, 3},
                              {ShaderId::convolution_matrix_small, 16, 8, 8, 2}};
    ShaderId best = options[0].shader;
    double bestCost = 0;
    for (const Option& o : options) {
      const uint64_t tiles =
          (rows + o.pixels - 1) / o.pixels * ((slices + o.slices - 1) / o.slices) * pieces;
      const uint64_t waves = (tiles + sms * o.perMultiprocessor - 1) / (sms * o.perMultiprocessor);
      const double cost = double(waves * ((chunks + o.split - 1) / o.split));
      if (o.shader == best || cost < 0.75 * bestCost) best = o.shader, bestCost = cost;
    }
    // Where the reduction is too short for the 8-way split of matrix_small to win, the split-k
    // shaders lose to the tiles: forced on every such shape of nine networks, 64x16 beat
    // matrix_large and matrix_medium on all but one (by 0.03 us), 0.662 -> 0.504 ms summed over
    // the batch-1 uses, 0.737 -> 0.575 at batch 32 (1x1 96->576 @14² b1 10.4 -> 8.2 us), and the
    // cost model, offered them, takes 64x16 on every one. Inside networks at batch 1:
    // efficientnet_b0, mobilenet_v2, regnet_y_800mf and resnet18 5-8% faster (bench/NOTES.md,
    // 2026-11-28, session 31). matrix_small's layers stay: replaced the same way where the
    // per-shape times said so, networks did not gain.
    if (best != ShaderId::convolution_matrix_small && tiledAllowed && forced != "legacy")
      if (const GemmChoice tiled = costModelChoice(); tiled.tile) return tiled;
    return {best};
  }
  if (const std::optional<ShaderId> named = gemmKernelNamed(forced, false)) return {*named};
  // Fitted on the H100's float32 batch-32 shapes (bench/NOTES.md, 2026-11-25): the two-stage
  // 128 x 32 tile (convolution_gemm_staged.glsl) from half a tile per multiprocessor where its
  // columns are whole (narrower outputs waste half of it), then 64 x 16 from 1.5 such tiles per
  // multiprocessor, else 16 x 8 with the reduction split. Session 21 (bench/NOTES.md, 2026-11-27)
  // put the two-stage 128 x 16 tile between the first two, from half a tile per multiprocessor:
  // measured on every float32 batch-32 shape of six networks it beat 64 x 16 and 16 x 8 on most
  // shapes they took, and the rule's sum over them went 58.1 -> 53.9 ms (cuDNN 56.5, the best
  // tile per shape 52.6). The tiles of every piece of a split batch count, as they run side by
  // side. The 128 x 32 tile runs as 16 warps of 8 x 1 outputs (gemm_128x32w16: the driver must
  // fit 128 registers, 117), 3-14% faster than 8 warps of 8 x 2 (gemm_128x32w8, 189 registers)
  // on every shape measured (bench/NOTES.md, session 21, run 8). "legacy": the choice before the
  // 128 x 32 tile (64 x 16 from 512 tiles on).
  const uint64_t sms = multiprocessors ? multiprocessors : DeviceFacts::kAssumedMultiprocessors;
  const uint64_t largeTiles = (rows + 63) / 64 * ((slices + 15) / 16);
  if (forced == "legacy")
    return {largeTiles >= 512 ? ShaderId::convolution_gemm_large
                              : ShaderId::convolution_gemm_small};
  if (slices >= 32 && 2 * ((rows + 127) / 128 * ((slices + 31) / 32)) * pieces >= sms)
    return {ShaderId::convolution_gemm_128x32w16};
  if (2 * ((rows + 127) / 128 * ((slices + 15) / 16)) * pieces >= sms)
    return {ShaderId::convolution_gemm_128x16w8};
  return {2 * largeTiles * pieces >= 3 * sms ? ShaderId::convolution_gemm_large
                                             : ShaderId::convolution_gemm_small};
}

// Grouped convolutions on the matrix units (groupedOnMatrixUnits): a tile of convolution_tiled
// whose width divides a group's padded width, the one the cost model of gemmShader says is
// fastest over all groups' tiles; VKCNN_CONVOLUTION_TILE forces a tile that fits, and "legacy"
// the direct shader (nullptr).
const MatrixTile* groupedTile(const KernelEncoding& e, const ConvolutionDescriptor& d,
                              uint32_t multiprocessors, const std::string& forced) {
  const uint64_t rows = uint64_t(e.clipWidth) * e.clipHeight * e.imageCount;
  const uint64_t pieces = piecesSideBySide(e);
  const uint64_t outPerGroup = d.outputFeatureChannels / d.groups;
  const uint64_t columns = (outPerGroup + VKCNN_MATRIX_GROUP_COLUMN_ALIGN - 1) /
                           VKCNN_MATRIX_GROUP_COLUMN_ALIGN * VKCNN_MATRIX_GROUP_COLUMN_ALIGN;
  if (forced == "legacy") return nullptr;
  for (const MatrixTile& t : kMatrixTiles)
    if (forced == t.name && columns % t.columns() == 0) return &t;
  const uint64_t sms = multiprocessors ? multiprocessors : DeviceFacts::kAssumedMultiprocessors;
  const uint64_t k = uint64_t(d.kernelWidth) * d.kernelHeight * (d.inputFeatureChannels / d.groups);
  const MatrixTile* best = nullptr;
  double bestCost = 0;
  for (const MatrixTile& t : kMatrixTiles) {
    if (!t.nanosecondsPerStage || t.denseWaves || columns % t.columns()) continue;
    const uint64_t tiles =
        (rows + t.rows() - 1) / t.rows() * (columns / t.columns()) * d.groups * pieces;
    const uint64_t perWave = sms * t.residentPerMultiprocessor;
    const double cost =
        double((tiles + perWave - 1) / perWave) *
        (double((k + t.depth() - 1) / t.depth()) * t.nanosecondsPerStage + t.nanosecondsPerWave);
    if (!best || cost < bestCost) best = &t, bestCost = cost;
  }
  return best;
}

// The shape as the tuning file keys it: everything the choice depends on.
std::string tuningKey(const KernelEncoding& e, const ConvolutionDescriptor& d,
                      ShaderVariant variant, bool tiledAllowed, bool matrixUnits) {
  char key[256];
  // A source activation is a key of its own: other pipelines, which Winograd cannot run.
  std::snprintf(key, sizeof key, "%ux%u/%ux%u d%ux%u g%u %u->%u to %ux%ux%u %s%s%s%s",
                d.kernelWidth, d.kernelHeight, d.strideInPixelsX, d.strideInPixelsY,
                d.dilationRateX, d.dilationRateY, d.groups, d.inputFeatureChannels,
                d.outputFeatureChannels, e.clipWidth, e.clipHeight, e.imageCount,
                variant == ShaderVariant::f16 ? "f16" : "f32", matrixUnits ? " matrix" : "",
                tiledAllowed ? "" : " unaligned", d.sourceActivation ? " activated" : "");
  return key;
}

// What a trial may run a shape with, the cost model's choice first.
std::vector<std::string> candidatesOf(const KernelEncoding& e, const ConvolutionDescriptor& d,
                                      bool groupedTiled, bool matrixUnits, bool tiledAllowed,
                                      uint32_t multiprocessors, bool winograd) {
  std::vector<std::string> list;
  const WinogradScheme scheme =
      matrixUnits ? WinogradScheme::matrixUnits : WinogradScheme::portable;
  if (winograd && winogradChosen(d, pixelsOf(e), blocksOf(e), scheme)) list.push_back("winograd");
  if (groupedTiled) {
    const MatrixTile* model = groupedTile(e, d, multiprocessors, "");
    list.push_back(model ? model->name : "legacy");
    const uint32_t columns =
        (d.outputFeatureChannels / d.groups + VKCNN_MATRIX_GROUP_COLUMN_ALIGN - 1) /
        VKCNN_MATRIX_GROUP_COLUMN_ALIGN * VKCNN_MATRIX_GROUP_COLUMN_ALIGN;
    for (const MatrixTile& t : kMatrixTiles)
      if (columns % t.columns() == 0) list.push_back(t.name);
    list.push_back("legacy");
  } else if (matrixUnits) {
    list.push_back(nameOf(gemmShader(e, d, true, tiledAllowed, multiprocessors, "")));
    if (tiledAllowed)
      for (const MatrixTile& t : kMatrixTiles) list.push_back(t.name);
    for (const char* n : {"matrix_large", "matrix_medium", "matrix_small"}) list.push_back(n);
    if (winograd) list.push_back("winograd");
  } else {
    list.push_back(nameOf(gemmShader(e, d, false, false, multiprocessors, "")));
    // The 128 x 32 tile only where a column of it is at least half outputs.
    if (e.destinationChannels >= 64) list.push_back("gemm_128x32w16");
    list.push_back("gemm_128x16w8");
    list.push_back("gemm_large");
    list.push_back("gemm_small");
    if (winograd) list.push_back("winograd");
  }
  std::vector<std::string> unique;
  for (const std::string& c : list)
    if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(c);
  return unique;
}

// The tile of a GEMM shader of kGemmKernels.
const GemmKernel& tileOf(ShaderId shader) {
  if (const GemmKernel* k = gemmKernelOf(shader)) return *k;
  throw Error(ErrorCode::vulkan, "internal: shader " + std::to_string(uint32_t(shader)) +
                                     " is not a GEMM convolution");
}

// One dispatch; (leftEdge, topEdge) is where the window starts relative to the offset position.
// `configurationOverride` (a trial of tuneShape) replaces VKCNN_CONVOLUTION_TILE and the tuning.
// convolution_tiled's workgroups for `e` on tile `t`: row tiles, column tiles (grouped: a column
// of tiles per group's outputs), the groups along z. Its destinations start at a layer: the
// window's channels fill (channels + 3) / 4 layers.
struct TileGrid {
  uint32_t rowTiles, columnTiles;
};
TileGrid tileGridOf(const KernelEncoding& e, const ConvolutionDescriptor& d, const MatrixTile& t) {
  const uint64_t rows = uint64_t(e.clipWidth) * e.clipHeight * e.imageCount;
  const uint32_t columns =
      d.groups > 1 ? d.outputFeatureChannels / d.groups : (e.destinationChannels + 3) / 4 * 4;
  return {uint32_t((rows + t.rows() - 1) / t.rows()), (columns + t.columns() - 1) / t.columns()};
}

// What every convolution shader reads alike (convolution_bindings.glsl), in three parts.
// The images: the source, the destination and the residual at element `element` of their bindings
// (convolution_tiled_pieces binds a piece at each); fills push.source, push.destination and the
// residual's fields of push.neuron, and returns the bound destination slices per image.
uint32_t bindConvolutionImages(DispatchRecorder& r, shader::ConvolutionPush& push,
                               const KernelEncoding& e, uint32_t element) {
  push.source = r.bindSource(0, e.source, e.sourceFirstImage, e.imageCount, e.sourceChannelOffset,
                             e.sourceChannels, element);
  push.destination = r.bindDestination(1, e.destination, e.destinationFirstImage, e.imageCount,
                                       e.destinationChannelOffset, e.destinationChannels, element);
  push.neuron.residual = e.residual ? 1 : 0;
  if (e.residual) {
    const shader::ImageView residual = r.bindSource(
        5, *e.residual, e.destinationFirstImage, e.imageCount, 0, e.destinationChannels, element);
    push.neuron.residualLayersPerImage = residual.layersPerImage;
    push.neuron.residualChannelShift = residual.channelShift;
  } else {
    // Unread (push.neuron.residual is 0), but every binding needs a descriptor.
    r.bindSource(5, e.source, e.sourceFirstImage, e.imageCount, e.sourceChannelOffset,
                 e.sourceChannels, element);
  }
  return touchedSlices(uint32_t(push.destination.channelShift), e.destinationChannels);
}

// The weights, bias and slopes, and the rest of the push constants (after the images and
// push.geometry).
void bindConvolutionParameters(DispatchRecorder& r, shader::ConvolutionPush& push,
                               const ConvolutionState& s,
                               const std::shared_ptr<DeviceBuffer>& weights, int32_t originX,
                               int32_t originY) {
  const ConvolutionDescriptor& d = s.descriptor;
  r.bindBuffer(2, weights);
  r.bindBuffer(3, s.bias);
  r.bindBuffer(4, s.slopes);
  push.geometry.offsetX = originX;
  push.geometry.offsetY = originY;
  push.convolution.kernelWidth = int32_t(d.kernelWidth);
  push.convolution.kernelHeight = int32_t(d.kernelHeight);
  push.convolution.strideX = int32_t(d.strideInPixelsX);
  push.convolution.strideY = int32_t(d.strideInPixelsY);
  push.convolution.dilationX = int32_t(d.dilationRateX);
  push.convolution.dilationY = int32_t(d.dilationRateY);
  push.convolution.inputChannelsPerGroup = int32_t(d.inputFeatureChannels / d.groups);
  push.convolution.outputChannelsPerGroup = int32_t(d.outputFeatureChannels / d.groups);
}

// Both for one encode; returns the bound destination slices per image.
uint32_t bindConvolution(DispatchRecorder& r, shader::ConvolutionPush& push, KernelEncoding& e,
                         const ConvolutionState& s, const std::shared_ptr<DeviceBuffer>& weights,
                         int32_t originX, int32_t originY) {
  push.neuron = neuronParams(s.descriptor.neuron);
  const uint32_t slices = bindConvolutionImages(r, push, e, 0);
  push.geometry = e.geometry(slices);
  bindConvolutionParameters(r, push, s, weights, originX, originY);
  return slices;
}

// The scheme a dense convolution's Winograd runs as: F(2x2,3x3) on the matrix units where the
// matrix path runs the layer (float16 destinations), else F(4x4,3x3) on the portable GEMM.
WinogradWeights winogradWeightsOf(const ConvolutionState& s, bool matrixUnits) {
  if (matrixUnits)
    return {WinogradScheme::matrixUnits, s.winogradMatrixWeights, s.bias, s.slopes,
            neuronParams(s.descriptor.neuron)};
  return {WinogradScheme::portable, s.winogradWeights, s.bias, s.slopes,
          neuronParams(s.descriptor.neuron)};
}

void encodeConvolution(KernelEncoding& e, const ConvolutionState& s, ShaderId shader,
                       int64_t leftEdge, int64_t topEdge, std::string* configuration = nullptr,
                       std::string* tuningKeyOut = nullptr,
                       const std::string* configurationOverride = nullptr);

// ContextOptions::tuneConvolutions: a shape without a tuning entry has its candidates timed here,
// before the caller's encode goes on, in a command buffer of its own on fresh images of the same
// size, images per dispatch and format (the residual left out), each candidate several times
// interleaved with the others so that clocks rising or falling weigh on all alike, after a warm-up;
// the fastest (minimum over its runs) becomes the shape's entry and the file is written. Any
// failure leaves the shape to the cost model with a warning: tuning must never break a run.
void tuneShape(const KernelEncoding& e, const ConvolutionState& s, ShaderId shader,
               int64_t leftEdge, int64_t topEdge, const std::string& key,
               const std::vector<std::string>& candidates) {
  const Context& context = e.handle.context();
  ContextImpl& impl = *e.commandBuffer.context;
  if (candidates.size() < 2) return;
  try {
    const auto started = std::chrono::steady_clock::now();
    Image source(context,
                 {e.source.width(), e.source.height(), e.source.featureChannels(), e.imageCount,
                  e.source.channelFormat(), ImageUsage::all, "tuning source"});
    Image destination(
        context,
        {e.destination.width(), e.destination.height(), e.destination.featureChannels(),
         e.imageCount, e.destination.channelFormat(), ImageUsage::all, "tuning destination"});
    CommandBufferOptions options;
    options.reusable = true;
    options.profile = true;
    CommandBuffer cb(context, "convolution tuning", options);
    constexpr uint32_t kRuns = 3;
    // Dispatches each encode recorded, in order (Winograd records three).
    std::vector<uint32_t> dispatches;
    for (uint32_t run = 0; run < kRuns; ++run)
      for (const std::string& candidate : candidates) {
        const uint32_t before = cb.impl()->statistics.dispatches;
        KernelEncoding t{*cb.impl(), cb, e.kernel, source, destination};
        t.imageCount = e.imageCount;
        t.clipX = e.clipX, t.clipY = e.clipY, t.clipWidth = e.clipWidth;
        t.clipHeight = e.clipHeight;
        t.offsetX = e.offsetX, t.offsetY = e.offsetY;
        t.sourceChannelOffset = e.sourceChannelOffset, t.sourceChannels = e.sourceChannels;
        t.destinationChannelOffset = e.destinationChannelOffset;
        t.destinationChannels = e.destinationChannels;
        std::string trialKey;
        encodeConvolution(t, s, shader, leftEdge, topEdge, nullptr, &trialKey, &candidate);
        // A view's channel offset can make the fresh images another shape: no entry then.
        if (trialKey != key) return;
        dispatches.push_back(cb.impl()->statistics.dispatches - before);
      }
    // Warm-up: two submissions, more up to about 20 ms of GPU work (clocks), then three timed.
    double warmMilliseconds = 0;
    for (uint32_t submission = 0; submission < 2 || (warmMilliseconds < 20.0 && submission < 10);
         ++submission) {
      cb.commit();
      cb.waitUntilCompleted();
      warmMilliseconds += cb.gpuMilliseconds();
    }
    std::vector<double> best(candidates.size(), -1.0);
    for (uint32_t timed = 0; timed < 3; ++timed) {
      cb.commit();
      cb.waitUntilCompleted();
      const std::vector<KernelTiming> timings = cb.kernelTimings();
      size_t next = 0;
      for (size_t i = 0; i < dispatches.size(); ++i) {
        double ms = 0;
        for (uint32_t k = 0; k < dispatches[i]; ++k, ++next) {
          if (next >= timings.size()) return;
          ms += timings[next].milliseconds;
        }
        double& b = best[i % candidates.size()];
        if (b < 0 || ms < b) b = ms;
      }
      if (next != timings.size()) return;
    }
    const size_t winner = size_t(std::min_element(best.begin(), best.end()) - best.begin());
    ConvolutionTuning::set(context, key, candidates[winner]);
    ConvolutionTuning::save(context);
    char line[512];
    std::snprintf(
        line, sizeof line,
        "convolution tuning: %s -> %s (%.4f ms; cost model's %s %.4f ms), %.2f s", key.c_str(),
        candidates[winner].c_str(), best[winner], candidates[0].c_str(), best[0],
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    impl.log(LogSeverity::info, line);
  } catch (const Error& error) {
    impl.log(LogSeverity::warning,
             "convolution tuning of " + key + " skipped, the cost model decides: " + error.what());
  }
}

void encodeConvolution(KernelEncoding& e, const ConvolutionState& s, ShaderId shader,
                       int64_t leftEdge, int64_t topEdge, std::string* configuration,
                       std::string* tuningKeyOut, const std::string* configurationOverride) {
  const ConvolutionDescriptor& d = s.descriptor;
  // Before anything is bound: a window origin out of the shader's range is an error.
  const int32_t originX = shaderCoordinate(e.offsetX - leftEdge, "window origin x", e);
  const int32_t originY = shaderCoordinate(e.offsetY - topEdge, "window origin y", e);
  const bool alignedDestination =
      (e.destination.storageChannelOffset() + e.destinationChannelOffset) % 4 == 0;
  bool gemm = shader != ShaderId::depthwise_convolution && d.groups == 1 && alignedDestination;
  const ShaderVariant variant = variantFor(e.destination);
  const bool matrixUnits = gemm && variant == ShaderVariant::f16 && s.matrixWeights;
  GemmChoice choice{shader};
  std::string what = e.what();
  std::vector<int32_t> specialization;
  const DeviceCapabilities& caps = e.commandBuffer.context->capabilities();
  // convolution_tiled reads a source texel as one fetch (a window starting at a layer) and
  // counts warps of 32 invocations.
  const bool tiledAllowed = (e.source.storageChannelOffset() + e.sourceChannelOffset) % 4 == 0 &&
                            e.commandBuffer.context->facts().warpsOf32();
  const bool groupedTiled = shader == ShaderId::convolution && d.groups > 1 && alignedDestination &&
                            variant == ShaderVariant::f16 && s.matrixWeights && tiledAllowed;
  // VKCNN_CONVOLUTION_TILE first, then the shape's tuning entry (or trial candidate), then the
  // cost model (convolution_tuning.h).
  std::string forced =
      configurationOverride ? *configurationOverride : forcedTile(*e.commandBuffer.context);
  TuningPick pick;
  // Not for a batch's pieces side by side: the tuner times a piece alone, which is not how they
  // run, and picks what wins alone (bench/NOTES.md, 2026-11-27); the cost model counts them.
  const std::string key = (groupedTiled || gemm) && piecesSideBySide(e) == 1
                              ? tuningKey(e, d, variant, tiledAllowed, matrixUnits)
                              : std::string();
  // Winograd (winograd.h): F(4x4,3x3) on the portable path, F(2x2,3x3) on the matrix units.
  const WinogradWeights winograd = winogradWeightsOf(s, matrixUnits);
  const bool winogradPossible = winograd.weights && shader == ShaderId::convolution && gemm &&
                                winogradFits(e, d, winograd.scheme);
  if (forced.empty() && !key.empty()) {
    auto candidates = [&] {
      return candidatesOf(e, d, groupedTiled, matrixUnits, tiledAllowed, caps.multiprocessorCount,
                          winogradPossible);
    };
    if (tuneAtEncode(*e.commandBuffer.context, key))
      tuneShape(e, s, shader, leftEdge, topEdge, key, candidates());
    pick = tunedConfiguration(*e.commandBuffer.context, key, candidates);
    forced = pick.configuration;
  }
  // Not for a batch's pieces encoded one by one side by side: each piece's three steps would
  // need barriers of their own (densenet121 in float32 at batch 32, 4 pieces: 14.9 -> 19.5 ms).
  // Convolution::encodeBatch runs such pieces as one (encodeConvolutionPieces).
  if (winogradPossible && winogradTaken(forced, piecesSideBySide(e) == 1, d, pixelsOf(e),
                                        blocksOf(e), winograd.scheme)) {
    if (tuningKeyOut) *tuningKeyOut = key;
    if (configuration) *configuration = "winograd";
    if (pick.candidate >= 0) noteTrial(*e.commandBuffer.context, what, key, pick.candidate);
    encodeWinograd({&e, 1}, d, leftEdge, topEdge, winograd, what);
    return;
  }
  if (groupedTiled) choice.tile = groupedTile(e, d, caps.multiprocessorCount, forced);
  if (choice.tile) {
    shader = choice.shader = ShaderId::convolution_tiled;
    what += std::string(" (grouped ") + choice.tile->name + ")";
  } else if (gemm) {
    choice = gemmShader(e, d, matrixUnits, tiledAllowed, caps.multiprocessorCount, forced);
    if (!matrixUnits) choice.shader = portableTileWithin(caps, choice.shader, variant);
    // No portable tile fits the device's shared memory: the direct shader.
    gemm = choice.shader != ShaderId::convolution;
    shader = choice.shader;
    // The profile and the benchmark read the configuration off the dispatch's label.
    what += gemm ? " (" + nameOf(choice) + ")" : std::string(" (direct)");
  } else if (shader == ShaderId::convolution) {
    what += d.groups > 1 ? " (grouped direct)" : " (direct)";
  }
  if (tuningKeyOut) *tuningKeyOut = key;
  if (pick.candidate >= 0) noteTrial(*e.commandBuffer.context, what, key, pick.candidate);
  if (configuration) {
    const size_t open = what.rfind(" (");
    *configuration =
        open == std::string::npos ? nameOf(choice) : what.substr(open + 2, what.size() - open - 3);
    if (shader == ShaderId::depthwise_convolution) *configuration = "depthwise";
  }
  uint32_t rowTiles = 0, columnTiles = 0;
  if (const MatrixTile* t = choice.tile) {
    const TileGrid grid = tileGridOf(e, d, *t);
    rowTiles = grid.rowTiles;
    columnTiles = grid.columnTiles;
    const uint64_t workgroups = uint64_t(rowTiles) * columnTiles * d.groups * piecesSideBySide(e);
    const auto constants = tiledConstants(*t, e, d, workgroups, caps.multiprocessorCount);
    specialization.assign(constants.begin(), constants.end());
  }
  addSourceActivation(specialization, d);
  DispatchRecorder r(e.commandBuffer, shader, variant, what, specialization);
  shader::ConvolutionPush push{};
  const uint32_t slices = bindConvolution(
      r, push, e, s, choice.tile || matrixUnits ? s.matrixWeights : s.weights, originX, originY);
  if (choice.tile) {
    if (shader == ShaderId::convolution_tiled_split) {
      // The partial tiles and a counter per tile (zero, and zero again after each run) in the
      // command buffer's workspace (convolution_tiled.glsl).
      // A reduction whole (one share) touches neither: a few bytes are bound.
      const uint64_t tiles = uint64_t(rowTiles) * columnTiles;
      const bool whole = choice.splits == 1;
      const VkDeviceSize bytes = whole ? 16
                                       : tiles * choice.splits * choice.tile->rows() *
                                             choice.tile->columns() * sizeof(float);
      Workspace::Range partials = e.commandBuffer.workspace.take(e.commandBuffer, bytes);
      r.bindStorageBuffer(6, partials.buffer, partials.offset, bytes, true,
                          std::move(partials.owner));
      const VkDeviceSize counterBytes = whole ? 16 : tiles * 4;
      Workspace::Range counters =
          whole ? e.commandBuffer.workspace.take(e.commandBuffer, counterBytes)
                : e.commandBuffer.workspace.takeZeroed(e.commandBuffer, counterBytes);
      r.bindStorageBuffer(7, counters.buffer, counters.offset, counterBytes, true,
                          std::move(counters.owner));
      r.dispatchGroups(&push, sizeof push, rowTiles, columnTiles, choice.splits);
      return;
    }
    r.dispatchGroups(&push, sizeof push, rowTiles, columnTiles, d.groups);
    return;
  }
  if (gemm) {
    const GemmKernel& tile = tileOf(shader);
    const uint64_t rows = uint64_t(e.clipWidth) * e.clipHeight * e.imageCount;
    r.dispatchGroups(&push, sizeof push, uint32_t((rows + tile.pixels - 1) / tile.pixels),
                     (slices + tile.slices - 1) / tile.slices, 1);
    return;
  }
  r.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

// The test and benchmark hook VKCNN_CONVOLUTION_PIECES: "separate" encodes a batch's pieces one by
// one, "one" in one dispatch wherever encodeTiledPieces can; unset or anything else, in one
// dispatch where that saves a wave (encodeTiledPieces).
const std::string& forcedPieces(const ContextImpl& context) {
  return context.overrides().choice.pieces;
}

// Whether `a` and `b` are laid out alike for a shader (the same layers per image, channels and
// first channel in their storage): one set of push constants addresses both.
bool sameLayout(const Image& a, const Image& b) {
  return a.storage()->slicesPerImage() == b.storage()->slicesPerImage() &&
         a.storage()->featureChannels == b.storage()->featureChannels &&
         a.storageChannelOffset() == b.storageChannelOffset() && a.width() == b.width() &&
         a.height() == b.height();
}

// Up to VKCNN_MAX_PIECES pieces of one batch as one dispatch of convolution_tiled_pieces, rows
// running over every piece's images (convolution_tiled_pieces.comp). Only where the device
// indexes image arrays per row, the pieces differ in nothing but their images (geometry, windows,
// layouts; all but the last hold as many images), and what the selector picks for the whole
// batch as one layer is a convolution_tiled tile (no split reduction, no other shader) that needs
// fewer waves of workgroups in one dispatch than over the pieces side by side, each with a partial
// last row tile. Only there: the per-row image index costs the one dispatch 3-8% (bench/NOTES.md,
// 2026-11-28, session 27: 1x1 256->1024 @14² on 4 pieces of 8 images, 4 waves of 128x128 tiles
// side by side and 3 in one dispatch, 74 -> 63 us; 1x1 128->512 @28² on 2 pieces of 16, 784
// tiles either way, 81 -> 84). Returns false, having recorded nothing, otherwise.
bool encodeTiledPieces(std::span<KernelEncoding> pieces, const ConvolutionState& s,
                       int64_t leftEdge, int64_t topEdge, uint32_t imagesSideBySide,
                       std::string& configuration) {
  const ConvolutionDescriptor& d = s.descriptor;
  const KernelEncoding& first = pieces.front();
  const DeviceCapabilities& caps = first.commandBuffer.context->capabilities();
  const std::string& forced = forcedPieces(*first.commandBuffer.context);
  if (forced == "separate" || pieces.size() < 2 || pieces.size() > VKCNN_MAX_PIECES ||
      !caps.imageArrayNonUniformIndexing || !first.commandBuffer.context->facts().warpsOf32() ||
      s.shader != ShaderId::convolution || !s.matrixWeights ||
      variantFor(first.destination) != ShaderVariant::f16)
    return false;
  uint32_t images = 0;
  for (size_t k = 0; k < pieces.size(); ++k) {
    const KernelEncoding& e = pieces[k];
    const bool alike =
        (k + 1 == pieces.size() ? e.imageCount <= first.imageCount
                                : e.imageCount == first.imageCount) &&
        e.clipX == first.clipX && e.clipY == first.clipY && e.clipWidth == first.clipWidth &&
        e.clipHeight == first.clipHeight && e.offsetX == first.offsetX &&
        e.offsetY == first.offsetY && e.sourceChannelOffset == first.sourceChannelOffset &&
        e.sourceChannels == first.sourceChannels &&
        e.destinationChannelOffset == first.destinationChannelOffset &&
        e.destinationChannels == first.destinationChannels && sameLayout(e.source, first.source) &&
        sameLayout(e.destination, first.destination) &&
        (e.residual != nullptr) == (first.residual != nullptr) &&
        (!e.residual || sameLayout(*e.residual, *first.residual));
    if (!alike) return false;
    images += e.imageCount;
  }
  // convolution_tiled's windows: a source texel is one fetch, destinations start at a layer.
  if ((first.source.storageChannelOffset() + first.sourceChannelOffset) % 4 != 0 ||
      (first.destination.storageChannelOffset() + first.destinationChannelOffset) % 4 != 0)
    return false;
  KernelEncoding whole = first;
  whole.imageCount = images;
  whole.imagesSideBySide = std::max(imagesSideBySide, images);
  const uint32_t sms = caps.multiprocessorCount;
  const std::string& tile = forcedTile(*first.commandBuffer.context);
  GemmChoice choice{ShaderId::convolution_tiled};
  if (d.groups > 1)
    choice.tile = groupedTile(whole, d, sms, tile);
  else
    choice = gemmShader(whole, d, true, true, sms, tile);
  if (!choice.tile || choice.shader != ShaderId::convolution_tiled) return false;

  const int32_t originX = shaderCoordinate(first.offsetX - leftEdge, "window origin x", first);
  const int32_t originY = shaderCoordinate(first.offsetY - topEdge, "window origin y", first);
  const MatrixTile& t = *choice.tile;
  const auto [rowTiles, columnTiles] = tileGridOf(whole, d, t);
  const uint64_t besides = piecesSideBySide(whole);  // groups of pieces side by side
  const uint64_t workgroups = uint64_t(rowTiles) * columnTiles * d.groups * besides;
  if (forced != "one") {
    uint64_t pieceRowTiles = 0;
    for (const KernelEncoding& e : pieces) pieceRowTiles += tileGridOf(e, d, t).rowTiles;
    const uint64_t perWave =
        uint64_t(sms ? sms : DeviceFacts::kAssumedMultiprocessors) * t.residentPerMultiprocessor;
    const uint64_t separateWorkgroups = pieceRowTiles * columnTiles * d.groups * besides;
    if ((workgroups + perWave - 1) / perWave >= (separateWorkgroups + perWave - 1) / perWave)
      return false;
  }
  const auto constants = tiledConstants(t, whole, d, workgroups, sms);
  std::vector<int32_t> specialization(constants.begin(), constants.end());
  specialization[8] = int32_t(first.imageCount);  // IMAGES_PER_PIECE
  addSourceActivation(specialization, d);
  configuration = std::string(d.groups > 1 ? "grouped " : "") + t.name + ", " +
                  std::to_string(pieces.size()) + " pieces";
  DispatchRecorder r(first.commandBuffer, ShaderId::convolution_tiled_pieces, ShaderVariant::f16,
                     first.what() + " (" + configuration + ")", specialization);
  shader::ConvolutionPush push{};
  push.neuron = neuronParams(d.neuron);
  // Every element is bound: past the last piece, the last piece again (never read).
  uint32_t slices = 0;
  for (uint32_t p = 0; p < VKCNN_MAX_PIECES; ++p)
    slices = bindConvolutionImages(r, push, pieces[std::min<size_t>(p, pieces.size() - 1)], p);
  push.geometry = whole.geometry(slices);
  bindConvolutionParameters(r, push, s, s.matrixWeights, originX, originY);
  r.dispatchGroups(&push, sizeof push, rowTiles, columnTiles, d.groups);
  return true;
}

// The pieces of one batch (Convolution::encodeBatch), side by side: as one Winograd encode where
// each could take it and VKCNN_CONVOLUTION_TILE forces it or its scheme's rule takes the layer
// (its buffers have no layer limit, so the GEMMs run once over every piece's blocks), else each
// piece on its own, its configuration chosen for all of them sharing the device.
void encodeConvolutionPieces(std::span<KernelEncoding> pieces, const ConvolutionState& s,
                             int64_t leftEdge, int64_t topEdge, std::string& configuration,
                             std::string& tuningKey) {
  // One pair alone is an encode (its tuning entry applies).
  if (pieces.size() == 1)
    return encodeConvolution(pieces.front(), s, s.shader, leftEdge, topEdge, &configuration,
                             &tuningKey);
  const ConvolutionDescriptor& d = s.descriptor;
  const std::string& forced = forcedTile(*pieces.front().commandBuffer.context);
  const bool matrixUnits =
      variantFor(pieces.front().destination) == ShaderVariant::f16 && s.matrixWeights;
  const WinogradWeights winograd = winogradWeightsOf(s, matrixUnits);
  bool fits = winograd.weights && s.shader == ShaderId::convolution;
  uint32_t images = 0;
  uint64_t pixels = 0, blocks = 0;
  for (const KernelEncoding& e : pieces) {
    fits = fits && winogradFits(e, d, winograd.scheme);
    images += e.imageCount;
    pixels += pixelsOf(e);
    blocks += blocksOf(e);
  }
  if (fits && winogradTaken(forced, true, d, pixels, blocks, winograd.scheme)) {
    encodeWinograd(pieces, d, leftEdge, topEdge, winograd, pieces.front().what());
    configuration = "winograd";
    tuningKey.clear();
    return;
  }
  // In groups of at most VKCNN_MAX_PIECES, each one dispatch where it can be.
  for (size_t at = 0; at < pieces.size(); at += VKCNN_MAX_PIECES) {
    const std::span<KernelEncoding> group =
        pieces.subspan(at, std::min<size_t>(VKCNN_MAX_PIECES, pieces.size() - at));
    if (encodeTiledPieces(group, s, leftEdge, topEdge, images, configuration)) {
      tuningKey.clear();
      continue;
    }
    for (KernelEncoding& e : group) {
      e.imagesSideBySide = std::max(e.imagesSideBySide, images);
      encodeConvolution(e, s, s.shader, leftEdge, topEdge, &configuration, &tuningKey);
    }
  }
}

}  // namespace
}  // namespace detail

// ---- Convolution --------------------------------------------------------------------------------

Convolution::Convolution(const Context& context, const ConvolutionDescriptor& descriptor,
                         std::span<const float> weights, std::span<const float> bias)
    : UnaryKernel(context, detail::defaultLabel("convolution", descriptor)) {
  state_ =
      detail::makeState(context, descriptor, weights, bias, "Convolution '" + label + "'", label);
}

Convolution Convolution::fromDatFiles(const Context& context,
                                      const ConvolutionDescriptor& descriptor,
                                      const std::string& weightsPath, const std::string& biasPath) {
  const std::string what = "Convolution '" + detail::defaultLabel("convolution", descriptor) + "'";
  detail::checkDescriptor(descriptor, what);
  detail::MappedFloatFile weights(weightsPath, descriptor.weightCount(), what + ": weights");
  if (biasPath.empty()) return Convolution(context, descriptor, weights.values());
  detail::MappedFloatFile bias(biasPath, descriptor.outputFeatureChannels, what + ": bias");
  return Convolution(context, descriptor, weights.values(), bias.values());
}

const ConvolutionDescriptor& Convolution::descriptor() const {
  return state_->descriptor;
}

uint32_t Convolution::destinationWidth(uint32_t sourceWidth) const {
  const ConvolutionDescriptor& d = state_->descriptor;
  return detail::windowedOutputSize(sourceWidth, d.strideInPixelsX, d.dilatedKernelWidth(), padding,
                                    true, "kernel '" + label + "'");
}

uint32_t Convolution::destinationHeight(uint32_t sourceHeight) const {
  const ConvolutionDescriptor& d = state_->descriptor;
  return detail::windowedOutputSize(sourceHeight, d.strideInPixelsY, d.dilatedKernelHeight(),
                                    padding, false, "kernel '" + label + "'");
}

uint32_t Convolution::destinationFeatureChannels(uint32_t) const {
  return state_->descriptor.outputFeatureChannels;
}

void Convolution::encodeWithResidual(CommandBuffer& commandBuffer, const Image& source,
                                     const Image& residual, const Image& destination) {
  encodeChecked(commandBuffer, source, &residual, destination);
}

TemporaryImage Convolution::encodeWithResidual(CommandBuffer& commandBuffer, const Image& source,
                                               const Image& residual) {
  if (!source.valid() || !residual.valid())
    throw Error(
        ErrorCode::invalidArgument,
        "kernel '" + label + "': the " + (source.valid() ? "residual" : "source") + " is empty");
  TemporaryImage destination(commandBuffer, destinationImageDescriptor(source));
  encodeChecked(commandBuffer, source, &residual, destination);
  return destination;
}

void Convolution::validate(const detail::KernelEncoding& e) const {
  detail::checkSourceChannels(e, state_->descriptor);
}

std::pair<int64_t, int64_t> Convolution::windowEdges() const {
  const ConvolutionDescriptor& d = state_->descriptor;
  const bool mps = padding.mode == Padding::Mode::mpsDefault;
  return {mps ? int64_t(d.dilatedKernelWidth() >> 1) : int64_t(padding.left),
          mps ? int64_t(d.dilatedKernelHeight() >> 1) : int64_t(padding.top)};
}

void Convolution::encodeKernel(detail::KernelEncoding& e) {
  const auto [left, top] = windowEdges();
  e.imagesSideBySide = imagesSideBySide;
  detail::encodeConvolution(e, *state_, state_->shader, left, top, &configuration_, &tuningKey_);
}

void Convolution::encodeBatch(CommandBuffer& commandBuffer, const std::vector<Image>& sources,
                              const std::vector<Image>& destinations,
                              const std::vector<Image>& residuals) {
  if (sources.size() != destinations.size() || sources.empty() ||
      (!residuals.empty() && residuals.size() != sources.size()))
    throw Error(ErrorCode::invalidArgument,
                "kernel '" + label +
                    "': encodeBatch takes as many destination Images as sources, at least one, "
                    "and as many residuals or none (" +
                    std::to_string(sources.size()) + " sources, " +
                    std::to_string(destinations.size()) + " destinations, " +
                    std::to_string(residuals.size()) + " residuals)");
  auto residualOf = [&](size_t k) { return residuals.empty() ? nullptr : &residuals[k]; };
  // Every pair is checked before anything is recorded.
  std::vector<detail::KernelEncoding> pieces;
  pieces.reserve(sources.size());
  for (size_t k = 0; k < sources.size(); ++k) {
    pieces.push_back(checkedEncoding(commandBuffer, sources[k], residualOf(k), destinations[k]));
    pieces.back().imagesSideBySide = imagesSideBySide;
  }
  const auto [left, top] = windowEdges();
  detail::encodeConvolutionPieces(pieces, *state_, left, top, configuration_, tuningKey_);
  for (size_t k = 0; k < sources.size(); ++k) countReads(sources[k], residualOf(k));
}

const std::string& Convolution::configuration() const {
  return configuration_;
}

const std::string& Convolution::tuningKey() const {
  return tuningKey_;
}

// ---- FullyConnected -----------------------------------------------------------------------------

namespace {
void checkFullyConnected(const ConvolutionDescriptor& d, const std::string& what) {
  detail::require(d.dilationRateX == 1 && d.dilationRateY == 1,
                  what + ": dilation rate " + std::to_string(d.dilationRateX) + "x" +
                      std::to_string(d.dilationRateY) +
                      " must be 1x1 for a fully connected layer (its kernel spans the source)");
  detail::require(!d.sourceActivation,
                  what +
                      ": a fully connected layer takes no source activation (a Convolution "
                      "does)");
}
}  // namespace

FullyConnected::FullyConnected(const Context& context, const ConvolutionDescriptor& descriptor,
                               std::span<const float> weights, std::span<const float> bias)
    : UnaryKernel(context, detail::defaultLabel("fully connected", descriptor)) {
  const std::string what = "FullyConnected '" + label + "'";
  detail::checkDescriptor(descriptor, what);
  checkFullyConnected(descriptor, what);
  state_ = detail::makeState(context, descriptor, weights, bias, what, label, true);
}

FullyConnected FullyConnected::fromDatFiles(const Context& context,
                                            const ConvolutionDescriptor& descriptor,
                                            const std::string& weightsPath,
                                            const std::string& biasPath) {
  const std::string what =
      "FullyConnected '" + detail::defaultLabel("fully connected", descriptor) + "'";
  detail::checkDescriptor(descriptor, what);
  checkFullyConnected(descriptor, what);
  detail::MappedFloatFile weights(weightsPath, descriptor.weightCount(), what + ": weights");
  if (biasPath.empty()) return FullyConnected(context, descriptor, weights.values());
  detail::MappedFloatFile bias(biasPath, descriptor.outputFeatureChannels, what + ": bias");
  return FullyConnected(context, descriptor, weights.values(), bias.values());
}

const ConvolutionDescriptor& FullyConnected::descriptor() const {
  return state_->descriptor;
}

uint32_t FullyConnected::destinationFeatureChannels(uint32_t) const {
  return state_->descriptor.outputFeatureChannels;
}

void FullyConnected::validate(const detail::KernelEncoding& e) const {
  const ConvolutionDescriptor& d = state_->descriptor;
  detail::checkSourceChannels(e, d);
  detail::require(e.source.width() == d.kernelWidth && e.source.height() == d.kernelHeight,
                  e.what() + ": source '" + e.source.label() + "' is " +
                      std::to_string(e.source.width()) + "x" + std::to_string(e.source.height()) +
                      " but the fully connected kernel spans " + std::to_string(d.kernelWidth) +
                      "x" + std::to_string(d.kernelHeight) + " (kernelWidth x kernelHeight)");
}

namespace {
// The test and benchmark hook VKCNN_FULLY_CONNECTED: "batched1" / "batched2" / "batched4" /
// "batched8" force fully_connected_batched with that many rows per slice, "legacy" the
// convolution path; unset (or "batched"), the batched shader wherever it applies except for small
// float16 layers of one image on the matrix units, where matrix_small was as fast (H100, vgg16's
// and resnet50's classifiers, bench/NOTES.md 2026-11-25). "pieces": encodeBatch encodes each pair
// (as before it read a batch in pieces at once), the choice per pair unforced.
const std::string& forcedFullyConnected(const detail::ContextImpl& context) {
  return context.overrides().choice.fullyConnected;
}

// fully_connected_batched: dense weights, a one-pixel destination region starting at a layer.
bool batchedApplies(const detail::KernelEncoding& e, const ConvolutionDescriptor& d,
                    const detail::ConvolutionState& s) {
  const std::string& forced = forcedFullyConnected(*e.commandBuffer.context);
  if (forced == "legacy" || s.shader == detail::ShaderId::depthwise_convolution || d.groups != 1 ||
      e.clipWidth != 1 || e.clipHeight != 1 ||
      (e.destination.storageChannelOffset() + e.destinationChannelOffset) % 4 != 0)
    return false;
  // Measured at batch 1: float32 0.44 -> 0.15 ms (vgg16 fc6), 0.042 -> 0.019 (resnet50's fc); in
  // float16, see kLargeFullyConnected.
  return (!forced.empty() && forced != "pieces") || e.imageCount > 1 ||
         detail::variantFor(e.destination) != detail::ShaderVariant::f16 || !s.matrixWeights ||
         d.weightCount() >= detail::kLargeFullyConnected;
}

// Rows of 32 invocations per slice (fully_connected_batched.glsl): the fewest that give every
// multiprocessor a workgroup, then more while an invocation would take more than 16 steps of the
// reduction (`steps`: weight blocks per slice): its loop waits on one weight load after another, so
// shorter loops in more workgroups go faster (H200, vgg16's classifier, bench/NOTES.md session 19:
// fc6 at batch 32 1.34 ms with 1 row, 0.66 with 8; fc7 best at 16 steps). One image (`oneImage`,
// the ONE_IMAGE loop) takes 8 rows: a step is one weight block there, so more warps with shorter
// loops keep more loads in flight (vgg16's fc7 at batch 1: 2 rows 24.6 us, 8 rows 14.3; H200,
// bench/NOTES.md session 33).
int32_t rowsPerSlice(const detail::CommandBufferImpl& cb, uint32_t slices, uint32_t imageGroups,
                     uint32_t steps, bool oneImage) {
  const uint32_t known = cb.context->capabilities().multiprocessorCount;
  const uint32_t sms = known ? known : detail::DeviceFacts::kAssumedMultiprocessors;
  int32_t rows = oneImage ? 8 : 1;
  while (rows < 8 && (slices + 8 / rows - 1) / (8 / rows) * imageGroups < sms) rows *= 2;
  while (rows < 8 && steps > 16u * 32u * uint32_t(rows)) rows *= 2;
  const std::string& forced = forcedFullyConnected(*cb.context);
  for (int32_t n : {1, 2, 4, 8})
    if (forced == "batched" + std::to_string(n)) rows = n;
  return rows;
}

constexpr uint32_t kImagesPerWorkgroup = 8;  // FC_IMAGES

// The reduction's steps per destination slice: one weight block of 4 input channels per tap each.
uint32_t stepsPerSlice(const ConvolutionDescriptor& d) {
  return d.kernelWidth * d.kernelHeight * ((d.inputFeatureChannels / d.groups + 3) / 4);
}

void encodeBatched(detail::KernelEncoding& e, const detail::ConvolutionState& s) {
  using namespace detail;
  const int32_t originX = shaderCoordinate(e.offsetX, "window origin x", e);
  const int32_t originY = shaderCoordinate(e.offsetY, "window origin y", e);
  const uint32_t slices = (e.destinationChannels + 3) / 4;
  const uint32_t imageGroups = (e.imageCount + kImagesPerWorkgroup - 1) / kImagesPerWorkgroup;
  const int32_t rows = rowsPerSlice(e.commandBuffer, slices, imageGroups,
                                    stepsPerSlice(s.descriptor), e.imageCount == 1);
  // One image: a loop of its own (fully_connected_batched.glsl, ONE_IMAGE).
  const std::vector<int32_t> specialization{rows, e.imageCount == 1 ? 1 : 0};
  const ShaderVariant variant = variantFor(e.destination);
  const bool half = variant == ShaderVariant::f16 && s.halfWeights;
  DispatchRecorder r(
      e.commandBuffer,
      half ? ShaderId::fully_connected_batched_half : ShaderId::fully_connected_batched, variant,
      e.what() + " (batched" + (half ? " half" : "") + " r" + std::to_string(rows) +
          (e.imageCount == 1 ? " one)" : ")"),
      specialization);
  shader::ConvolutionPush push{};
  const uint32_t bound =
      bindConvolution(r, push, e, s, half ? s.halfWeights : s.weights, originX, originY);
  r.dispatchGroups(&push, sizeof push, imageGroups, (bound + 8 / rows - 1) / (8 / rows), 1);
}

// `element`, the first element of a Tensor's binding, for shaders that load 4 elements at a time
// (a fresh temporary starts at its bound range's start, so this holds unless something changed).
int32_t sliceAligned(int32_t element, const std::string& what, const char* name) {
  if (element % 4)
    throw Error(ErrorCode::unsupported, what + ": the " + std::string(name) + " start at element " +
                                            std::to_string(element) +
                                            " of their binding, not at a slice of 4");
  return element;
}

// fully_connected_tensor(_half).comp: `source` [N][taps][C] to `destination` [N][outC], Tensors
// of the variant's element type.
void encodeOnTensors(detail::CommandBufferImpl& cb, const detail::ConvolutionState& s,
                     const std::string& what, const Tensor& source, const Tensor& destination) {
  using namespace detail;
  const ConvolutionDescriptor& d = s.descriptor;
  const uint32_t images = source.shape()[0];
  const uint32_t slices = (d.outputFeatureChannels + 3) / 4;
  const uint32_t imageGroups = (images + kImagesPerWorkgroup - 1) / kImagesPerWorkgroup;
  const int32_t rows = rowsPerSlice(cb, slices, imageGroups, stepsPerSlice(d), false);
  const std::vector<int32_t> specialization{rows};
  const ShaderVariant variant = variantFor(source.dataType());
  const bool half = variant == ShaderVariant::f16 && s.halfWeights;
  DispatchRecorder r(
      cb, half ? ShaderId::fully_connected_tensor_half : ShaderId::fully_connected_tensor, variant,
      what + " (batch of " + std::to_string(images) + " on tensors" + (half ? " half" : "") + " r" +
          std::to_string(rows) + ")",
      specialization);
  shader::FullyConnectedTensorPush push{};
  push.sourceFirst = sliceAligned(bindTensor(r, cb, 0, source, false), what, "gathered sources");
  push.destinationFirst = bindTensor(r, cb, 1, destination, true);
  r.bindBuffer(2, half ? s.halfWeights : s.weights);
  r.bindBuffer(3, s.bias);
  r.bindBuffer(4, s.slopes);
  push.sourceChannels = int32_t(d.inputFeatureChannels);
  push.destinationChannels = int32_t(d.outputFeatureChannels);
  push.imageCount = int32_t(images);
  push.slices = int32_t(slices);
  push.taps = int32_t(d.kernelWidth * d.kernelHeight);
  push.neuron = neuronParams(d.neuron);
  r.dispatchGroups(&push, sizeof push, imageGroups, (slices + 8 / rows - 1) / (8 / rows), 1);
  markWritten(destination);
  consumeRead(source);
}

// fully_connected_matrix.comp then fully_connected_reduce.comp (float16, matrix units): a batch
// has a few rows against thousands of columns and inputs, so the weights stream once through
// cooperative matrices, the inputs split over about a workgroup a multiprocessor, and the splits
// are added in order. fully_connected_tensor runs vgg16's fc6 at batch 32 in 0.47 ms (14 TFLOP/s
// of float32 multiply-adds); this in 0.17 + 0.007 (H100, bench/NOTES.md, 2026-11-27, session 24),
// still 1.2 TB/s of weights where the H100 streams 3.35.
// Its tile fits the 48 KiB of shared memory matrixUnits guarantees (convolution_tiles.h).
bool onMatrixUnits(const detail::CommandBufferImpl& cb, const detail::ConvolutionState& s,
                   TensorDataType type) {
  const auto& caps = cb.context->capabilities();
  return cb.context->facts().matrixTiles() && caps.matrixUnits && type == TensorDataType::float16 &&
         s.halfWeights && forcedFullyConnected(*cb.context) != "tensor";
}

void encodeOnMatrixUnits(CommandBuffer& commandBuffer, const detail::ConvolutionState& s,
                         const std::string& label, const std::string& what, const Tensor& source,
                         const Tensor& destination) {
  using namespace detail;
  CommandBufferImpl& cb = *commandBuffer.impl();
  const ConvolutionDescriptor& d = s.descriptor;
  // Benchmarks force the workgroups a multiprocessor and the tile: VKCNN_FULLY_CONNECTED=matrixN
  // or matrixN/TILE.
  const std::string& forced = forcedFullyConnected(*cb.context);
  const FullyConnectedMatrixTile* tile = &kFullyConnectedMatrixTiles[0];
  for (const FullyConnectedMatrixTile& t : kFullyConnectedMatrixTiles) {
    const std::string suffix = std::string("/") + t.name;
    if (forced.size() > suffix.size() &&
        forced.compare(forced.size() - suffix.size(), suffix.size(), suffix) == 0)
      tile = &t;
  }
  const uint32_t kColumns = tile->columns, kChunk = tile->chunk;
  const uint32_t images = source.shape()[0];
  const uint32_t inputs = d.kernelWidth * d.kernelHeight * d.inputFeatureChannels;
  const int32_t fragments = images > 16 ? 2 : 1;
  const uint32_t rowTiles = (images + 16 * fragments - 1) / (16 * fragments);
  const uint32_t columnTiles = (d.outputFeatureChannels + kColumns - 1) / kColumns;
  const uint32_t chunks = (inputs + kChunk - 1) / kChunk;
  const uint32_t known = cb.context->capabilities().multiprocessorCount;
  // Workgroups a multiprocessor, at most one wave: 1 was best of 1-32 on every layer measured
  // (H100, vgg16 at batch 32: fc6 0.170 ms with 1, 0.172 with 2, 0.175 with 4, 0.182 with 8,
  // 0.206 with 32; fc7 0.033 to 0.062; resnet50's fc 0.011 to 0.014; bench/NOTES.md, session
  // 24, runs 3-4). More workgroups hold more loads in flight and take no less time.
  uint32_t perMultiprocessor = 1;
  unsigned workgroups = 0;
  if (std::sscanf(forced.c_str(), "matrix%u", &workgroups) == 1 && workgroups > 0)
    perMultiprocessor = workgroups;
  const uint32_t wanted =
      perMultiprocessor * (known ? known : detail::DeviceFacts::kAssumedMultiprocessors);
  const uint32_t tiles = rowTiles * columnTiles;
  const uint32_t splitsWanted = std::clamp(wanted / tiles, 1u, chunks);
  const uint32_t chunksPerSplit = (chunks + splitsWanted - 1) / splitsWanted;
  const uint32_t splits = (chunks + chunksPerSplit - 1) / chunksPerSplit;
  const uint32_t rows = rowTiles * 16 * uint32_t(fragments), columns = columnTiles * kColumns;
  // Each step group of a workgroup sums a split of its own.
  const uint32_t partialSplits = splits * tile->stepGroups();
  TemporaryTensor partials(
      commandBuffer,
      {{partialSplits, rows, columns}, TensorDataType::float32, label + " (partial sums)"});
  partials.setReadCount(1);
  shader::FullyConnectedMatrixPush push{};
  push.inputs = int32_t(inputs);
  push.destinationChannels = int32_t(d.outputFeatureChannels);
  push.imageCount = int32_t(images);
  push.splits = int32_t(partialSplits);
  push.chunksPerSplit = int32_t(chunksPerSplit);
  push.partialRows = int32_t(rows);
  push.partialColumns = int32_t(columns);
  push.neuron = neuronParams(d.neuron);
  const auto tileConstants = tile->specialization(uint32_t(fragments));
  const std::vector<int32_t> specialization(tileConstants.begin(), tileConstants.end());
  {
    DispatchRecorder r(cb, ShaderId::fully_connected_matrix, ShaderVariant::f16,
                       what + " (batch of " + std::to_string(images) + " on the matrix units " +
                           tile->name + ", " + std::to_string(splits) + " splits)",
                       specialization);
    push.sourceFirst = sliceAligned(bindTensor(r, cb, 0, source, false), what, "gathered sources");
    r.bindBuffer(1, s.halfWeights);
    push.partialsFirst = sliceAligned(bindTensor(r, cb, 2, partials, true), what, "partial sums");
    r.dispatchGroups(&push, sizeof push, columnTiles, splits, rowTiles);
    markWritten(partials);
    consumeRead(source);
  }
  DispatchRecorder r(cb, ShaderId::fully_connected_reduce, ShaderVariant::f16,
                     what + " (the splits added)");
  push.partialsFirst = sliceAligned(bindTensor(r, cb, 0, partials, false), what, "partial sums");
  push.destinationFirst = bindTensor(r, cb, 1, destination, true);
  r.bindBuffer(3, s.bias);
  r.bindBuffer(4, s.slopes);
  r.dispatchGroups(&push, sizeof push, ((d.outputFeatureChannels + 3) / 4 + 255) / 256, images, 1);
  markWritten(destination);
  consumeRead(partials);
}
}  // namespace

bool FullyConnected::batchOnTensors(const std::vector<Image>& sources,
                                    const std::vector<Image>& destinations) const {
  const ConvolutionDescriptor& d = state_->descriptor;
  const ClipRect whole{};
  const std::string& forced = forcedFullyConnected(*context().impl());
  // The tensor shader loads whole slices of 4 input channels.
  if (sources.size() < 2 || d.groups != 1 || d.inputFeatureChannels % 4 != 0 ||
      state_->shader == detail::ShaderId::depthwise_convolution || forced == "legacy" ||
      forced == "pieces" || !destinations[0].valid() || offset.x != 0 || offset.y != 0 ||
      offset.z != 0 || clipRect.x != 0 || clipRect.y != 0 || clipRect.z != 0 ||
      clipRect.width != whole.width || clipRect.height != whole.height ||
      clipRect.depth != whole.depth || sourceFeatureChannelMaxCount < d.inputFeatureChannels)
    return false;
  const ChannelFormat format = destinations[0].channelFormat();
  if (format != ChannelFormat::float16 && format != ChannelFormat::float32) return false;
  // Anything else (a misfit the per-pair encode reports) takes encode().
  for (size_t k = 0; k < sources.size(); ++k) {
    const Image& source = sources[k];
    const Image& destination = destinations[k];
    if (!source.valid() || !destination.valid() || destination.channelFormat() != format ||
        source.width() != d.kernelWidth || source.height() != d.kernelHeight ||
        uint64_t(sourceFeatureChannelOffset) + d.inputFeatureChannels > source.featureChannels() ||
        destination.width() != 1 || destination.height() != 1 ||
        uint64_t(destinationFeatureChannelOffset) + d.outputFeatureChannels >
            destination.featureChannels() ||
        source.numberOfImages() != destination.numberOfImages())
      return false;
  }
  return true;
}

void FullyConnected::encodeBatch(CommandBuffer& commandBuffer, const std::vector<Image>& sources,
                                 const std::vector<Image>& destinations) {
  const std::string what = "FullyConnected '" + label + "'";
  if (sources.size() != destinations.size() || sources.empty())
    throw Error(ErrorCode::invalidArgument,
                what + ": encodeBatch takes as many destination Images as sources, at least one (" +
                    std::to_string(sources.size()) + " sources, " +
                    std::to_string(destinations.size()) + " destinations)");
  if (!batchOnTensors(sources, destinations)) {
    for (size_t k = 0; k < sources.size(); ++k) encode(commandBuffer, sources[k], destinations[k]);
    return;
  }
  const ConvolutionDescriptor& d = state_->descriptor;
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  uint32_t total = 0;
  for (const Image& source : sources) total += source.numberOfImages();
  const TensorDataType type = destinations[0].channelFormat() == ChannelFormat::float16
                                  ? TensorDataType::float16
                                  : TensorDataType::float32;
  // The sources' windows as [N][H][W][C]: the order of the weights' taps and channels.
  TemporaryTensor gathered(
      commandBuffer,
      {{total, d.kernelHeight, d.kernelWidth, d.inputFeatureChannels}, type, label + " (sources)"});
  gathered.setReadCount(1);
  ImageToTensor gather(context(), TensorLayout::NHWC);
  gather.label = label + " (gather)";
  gather.sourceFeatureChannelOffset = sourceFeatureChannelOffset;
  gather.featureChannels = d.inputFeatureChannels;
  uint32_t first = 0;
  for (const Image& source : sources) {
    const uint32_t n = source.numberOfImages();
    gather.encode(commandBuffer, source, gathered.slice(0, first, first + n));
    first += n;
  }
  TemporaryTensor results(commandBuffer,
                          {{total, 1, 1, d.outputFeatureChannels}, type, label + " (results)"});
  results.setReadCount(uint32_t(destinations.size()));
  if (onMatrixUnits(cb, *state_, type))
    encodeOnMatrixUnits(commandBuffer, *state_, label, "kernel '" + label + "'", gathered, results);
  else
    encodeOnTensors(cb, *state_, "kernel '" + label + "'", gathered, results);
  TensorToImage scatter(context(), TensorLayout::NHWC);
  scatter.label = label + " (scatter)";
  scatter.destinationFeatureChannelOffset = destinationFeatureChannelOffset;
  first = 0;
  for (const Image& destination : destinations) {
    const uint32_t n = destination.numberOfImages();
    scatter.encode(commandBuffer, results.slice(0, first, first + n), destination);
    first += n;
  }
}

void FullyConnected::encodeKernel(detail::KernelEncoding& e) {
  if (batchedApplies(e, state_->descriptor, *state_)) return encodeBatched(e, *state_);
  // Depthwise-shaped weights (one input channel per group) are packed for that shader.
  const detail::ShaderId shader = state_->shader == detail::ShaderId::depthwise_convolution
                                      ? detail::ShaderId::depthwise_convolution
                                      : detail::ShaderId::fully_connected;
  detail::encodeConvolution(e, *state_, shader, 0, 0);
}

}  // namespace vkcnn
