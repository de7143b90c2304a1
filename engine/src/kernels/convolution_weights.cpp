// A convolution-family kernel's state (kernels/convolution_state.h) made from its weights: the
// batch normalisation folded in, the weights packed for the portable shaders, the float16 matrix
// of the matrix units, the float16 copy of fully connected layers and Winograd's transformed
// weights, each made only where a configuration the choice may take reads it.
#include <algorithm>
#include <cmath>
#include <memory>

#include "convolution_interface.h"
#include "convolution_tiles.h"
#include "kernels/convolution_choice.h"
#include "kernels/convolution_state.h"
#include "kernels/neuron_params.h"
#include "kernels/weights.h"
#include "kernels/winograd.h"
#include "memory/half.h"
#include "vulkan/context_impl.h"

namespace vkcnn::detail {

namespace {

// The packed buffers are left uninitialised and filled (padding zeroed) by ranges of output
// channels on threads: vgg16's first classifier is 102.8 M weights, seconds on one thread.
constexpr size_t kPerThread = size_t(1) << 20;  // weights; fewer are not worth a thread

// Batch normalisation folded per output channel: W = w * scale, B = b * scale + shift.
struct Folding {
  std::vector<double> scale, shift;
};
Folding foldBatchNormalization(const ConvolutionDescriptor& d) {
  const uint32_t out = d.outputFeatureChannels;
  Folding f{std::vector<double>(out, 1.0), std::vector<double>(out, 0.0)};
  if (d.batchNormalization) {
    const BatchNormalizationParameters& bn = *d.batchNormalization;
    for (uint32_t o = 0; o < out; ++o) {
      const double gamma = bn.gamma.empty() ? 1.0 : bn.gamma[o];
      const double beta = bn.beta.empty() ? 0.0 : bn.beta[o];
      f.scale[o] = gamma / std::sqrt(double(bn.variance[o]) + double(bn.epsilon));
      f.shift[o] = beta - f.scale[o] * bn.mean[o];
    }
  }
  return f;
}

// The bias buffer: the folded bias, then the source activation's scales and its shifts
// (convolution_bindings.glsl), each padded with zeros to whole slices: a channel past the input
// reads zero.
std::vector<float> biasBuffer(const ConvolutionDescriptor& d, std::span<const float> bias,
                              const Folding& f) {
  const uint32_t out = d.outputFeatureChannels;
  std::vector<float> foldedBias(out);
  for (uint32_t o = 0; o < out; ++o)
    foldedBias[o] = float((bias.empty() ? 0.0 : double(bias[o])) * f.scale[o] + f.shift[o]);
  if (d.sourceActivation) {
    const uint32_t padded = VKCNN_SOURCE_ACTIVATION_STRIDE(d.inputFeatureChannels);
    foldedBias.resize(size_t(out) + 2 * padded, 0.f);
    std::copy(d.sourceActivation->scale.begin(), d.sourceActivation->scale.end(),
              foldedBias.begin() + out);
    std::copy(d.sourceActivation->shift.begin(), d.sourceActivation->shift.end(),
              foldedBias.begin() + out + padded);
  }
  return foldedBias;
}

struct Packed {
  size_t count = 0;
  std::unique_ptr<float[]> values;
};

// The float32 weights of the portable shaders. Depthwise (one input channel per group):
// [tap][output channel]. Otherwise mat4 blocks [output slice][tap][input slice of the group]
// (convolution_gemm.glsl), column c of a block holding input channel 4s + c for the slice's 4
// output channels; zero-padded.
Packed packWeights(const ConvolutionDescriptor& d, std::span<const float> weights,
                   const std::vector<double>& scale) {
  const uint32_t out = d.outputFeatureChannels;
  const uint32_t perGroup = d.inputFeatureChannels / d.groups;
  const uint32_t taps = d.kernelWidth * d.kernelHeight;
  Packed packed;
  if (perGroup == 1) {
    packed.count = size_t(taps) * out;
    packed.values.reset(new float[packed.count]);
    for (uint32_t o = 0; o < out; ++o)
      for (uint32_t tap = 0; tap < taps; ++tap)
        packed.values[size_t(tap) * out + o] = float(weights[size_t(o) * taps + tap] * scale[o]);
    return packed;
  }
  const size_t slices = (perGroup + 3) / 4, k = size_t(taps) * slices;
  const size_t outSlices = (out + 3) / 4;
  packed.count = outSlices * k * 16;
  packed.values.reset(new float[packed.count]);
  float* p = packed.values.get();
  detail::parallelRanges(outSlices, 1, kPerThread / (k * 16) + 1, [&](size_t s0, size_t s1) {
    std::fill(p + s0 * k * 16, p + s1 * k * 16, 0.f);
    for (uint32_t o = uint32_t(s0 * 4); o < std::min<size_t>(out, s1 * 4); ++o)
      for (uint32_t tap = 0; tap < taps; ++tap)
        for (uint32_t i = 0; i < perGroup; ++i)
          p[((o / 4 * k + tap * slices + i / 4) * 4 + i % 4) * 4 + o % 4] =
              float(weights[(size_t(o) * taps + tap) * perGroup + i] * scale[o]);
  });
  return packed;
}

// The float16 matrix of the matrix-unit shaders: row k = (tap * S + s) * 4 + c holds input
// channel 4s + c of the tap; zero rows pad k to whole chunks and zero columns the output channels
// to whole tiles (convolution_tiles.h). Grouped: one such matrix per group, one after the other.
std::shared_ptr<DeviceBuffer> matrixWeights(ContextImpl& impl, const ConvolutionDescriptor& d,
                                            std::span<const float> weights,
                                            const std::vector<double>& scale,
                                            const std::string& label) {
  const uint32_t out = d.outputFeatureChannels;
  const uint32_t perGroup = d.inputFeatureChannels / d.groups;
  const uint32_t taps = d.kernelWidth * d.kernelHeight;
  const uint32_t outPerGroup = out / d.groups;
  const size_t slices = (perGroup + 3) / 4, k = size_t(taps) * slices * 4;
  const size_t rows =
      (k + VKCNN_MATRIX_ROW_ALIGN - 1) / VKCNN_MATRIX_ROW_ALIGN * VKCNN_MATRIX_ROW_ALIGN;
  const size_t align = d.groups == 1 ? VKCNN_MATRIX_COLUMN_ALIGN : VKCNN_MATRIX_GROUP_COLUMN_ALIGN;
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
  return DeviceBuffer::create(impl, matrixCount * sizeof(uint16_t), m, label + " float16 weights");
}

// `packed` as float16 (fully_connected_batched_half.comp).
std::shared_ptr<DeviceBuffer> halfWeights(ContextImpl& impl, const Packed& packed,
                                          const std::string& label) {
  std::unique_ptr<uint16_t[]> half(new uint16_t[packed.count]);
  uint16_t* h = half.get();
  const float* p = packed.values.get();
  detail::parallelRanges(packed.count, 4096, kPerThread, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) h[i] = floatToHalf(p[i]);
  });
  return DeviceBuffer::create(impl, packed.count * sizeof(uint16_t), h, label + " float16 weights");
}

// Winograd's transformed weights of `scheme` (winograd.h).
std::shared_ptr<DeviceBuffer> winogradBuffer(ContextImpl& impl, const ConvolutionDescriptor& d,
                                             std::span<const float> weights,
                                             const std::vector<double>& scale,
                                             WinogradScheme scheme, const std::string& label) {
  if (scheme == WinogradScheme::portable) {
    const size_t count = winogradWeightCount(d);
    std::unique_ptr<float[]> u(new float[count]);
    winogradWeights(d, weights, scale, u.get());
    return DeviceBuffer::create(impl, count * sizeof(float), u.get(), label + " winograd weights");
  }
  const size_t count = winogradMatrixWeightCount(d);
  std::unique_ptr<uint16_t[]> u(new uint16_t[count]);
  winogradMatrixWeights(d, weights, scale, u.get());
  return DeviceBuffer::create(impl, count * sizeof(uint16_t), u.get(),
                              label + " winograd float16 weights");
}

}  // namespace

std::shared_ptr<const ConvolutionState> makeState(
    const Context& context, const ConvolutionDescriptor& d, std::span<const float> weights,
    std::span<const float> bias, const std::string& what, const std::string& label, bool halfCopy) {
  checkDescriptor(d, what);
  checkWeightCounts(d, weights.size(), bias.size(), what);
  const uint32_t perGroup = d.inputFeatureChannels / d.groups;
  const Folding folding = foldBatchNormalization(d);
  const std::vector<float> foldedBias = biasBuffer(d, bias, folding);

  auto state = std::make_shared<ConvolutionState>();
  state->descriptor = d;
  if (perGroup == 1) state->shader = ShaderId::depthwise_convolution;
  const Packed packed = packWeights(d, weights, folding.scale);
  ContextImpl& impl = *context.impl();
  const WeightCopies copies =
      weightCopiesOf(d, impl.facts(), impl.overrides().choice, impl.winograd, halfCopy);
  if (copies.matrix) state->matrixWeights = matrixWeights(impl, d, weights, folding.scale, label);
  if (copies.half) state->halfWeights = halfWeights(impl, packed, label);
  state->weights = DeviceBuffer::create(impl, packed.count * sizeof(float), packed.values.get(),
                                        label + " weights");
  state->bias = DeviceBuffer::create(impl, foldedBias.size() * sizeof(float), foldedBias.data(),
                                     label + " bias");
  state->slopes = neuronSlopes(impl, d.neuron, label);
  if (copies.winograd)
    state->winogradWeights =
        winogradBuffer(impl, d, weights, folding.scale, WinogradScheme::portable, label);
  if (copies.winogradMatrix)
    state->winogradMatrixWeights =
        winogradBuffer(impl, d, weights, folding.scale, WinogradScheme::matrixUnits, label);
  return state;
}

}  // namespace vkcnn::detail
