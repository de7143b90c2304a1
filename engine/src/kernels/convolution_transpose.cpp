#include "vkcnn/convolution_transpose.h"

#include <algorithm>
#include <string>

#include "convolution_transpose_interface.h"
#include "kernels/kernel_encoding.h"
#include "kernels/neuron_params.h"
#include "vkcnn/error.h"
#include "vulkan/context_impl.h"

namespace vkcnn {
namespace {

using detail::requirePositive;

void checkDescriptor(const ConvolutionTransposeDescriptor& d, const std::string& what) {
  requirePositive(d.kernelWidth, "kernelWidth", what);
  requirePositive(d.kernelHeight, "kernelHeight", what);
  requirePositive(d.inputFeatureChannels, "inputFeatureChannels", what);
  requirePositive(d.outputFeatureChannels, "outputFeatureChannels", what);
  detail::requireStepsPositive(d, what);
  requirePositive(d.groups, "groups", what);
  if (d.inputFeatureChannels % d.groups || d.outputFeatureChannels % d.groups)
    throw Error(ErrorCode::invalidArgument,
                what + ": inputFeatureChannels " + std::to_string(d.inputFeatureChannels) +
                    " and outputFeatureChannels " + std::to_string(d.outputFeatureChannels) +
                    " must both be divisible by groups " + std::to_string(d.groups));
  if (d.padding.ceilMode)
    throw Error(ErrorCode::invalidArgument,
                what + ": ceilMode has no meaning for a transposed convolution");
  const struct {
    const char* name;
    uint32_t value, stride, dilation;
  } outputPaddings[] = {{"outputPaddingX", d.outputPaddingX, d.strideInPixelsX, d.dilationRateX},
                        {"outputPaddingY", d.outputPaddingY, d.strideInPixelsY, d.dilationRateY}};
  for (auto& p : outputPaddings)
    if (p.value >= std::max(p.stride, p.dilation))
      throw Error(ErrorCode::invalidArgument, what + ": " + p.name + " " + std::to_string(p.value) +
                                                  " must be smaller than the stride " +
                                                  std::to_string(p.stride) + " or the dilation " +
                                                  std::to_string(p.dilation));
  detail::checkNeuron(d.neuron, what);
  if (d.neuron.type == NeuronType::prelu && d.neuron.preluSlopes.size() != 1 &&
      d.neuron.preluSlopes.size() < d.outputFeatureChannels)
    throw Error(ErrorCode::invalidArgument,
                what + ": " + std::to_string(d.neuron.preluSlopes.size()) + " PReLU slopes for " +
                    std::to_string(d.outputFeatureChannels) +
                    " output channels (give 1 or one per channel)");
}

uint32_t transposedSize(uint32_t size, uint32_t kernel, uint32_t stride, uint32_t dilation,
                        uint32_t padBegin, uint32_t padEnd, uint32_t outputPadding,
                        const std::string& what, const char* axis) {
  const int64_t full =
      int64_t(size - 1) * stride + int64_t(kernel - 1) * dilation + 1 + outputPadding;
  const int64_t out = full - padBegin - padEnd;
  if (out <= 0)
    throw Error(ErrorCode::invalidArgument,
                what + ": " + axis + " padding " + std::to_string(padBegin) + " + " +
                    std::to_string(padEnd) + " crops the whole " + std::to_string(full) +
                    "-pixel output of a " + std::to_string(size) + "-pixel source");
  return uint32_t(out);
}

}  // namespace

ConvolutionTranspose::ConvolutionTranspose(const Context& context,
                                           const ConvolutionTransposeDescriptor& descriptor,
                                           std::span<const float> weights,
                                           std::span<const float> bias)
    : UnaryKernel(context, "convolution transpose"), descriptor_(descriptor) {
  const ConvolutionTransposeDescriptor& d = descriptor_;
  const std::string what = "kernel '" + label + "'";
  checkDescriptor(d, what);
  const size_t inputsPerGroup = d.inputFeatureChannels / d.groups;
  const size_t taps = size_t(d.kernelWidth) * d.kernelHeight;
  const size_t expected = size_t(d.outputFeatureChannels) * taps * inputsPerGroup;
  if (weights.size() != expected)
    throw Error(ErrorCode::invalidArgument,
                what + ": " + std::to_string(weights.size()) + " weights given, expected " +
                    std::to_string(expected) + " (outputFeatureChannels " +
                    std::to_string(d.outputFeatureChannels) + " x kernel " +
                    std::to_string(d.kernelHeight) + "x" + std::to_string(d.kernelWidth) +
                    " x inputFeatureChannels/groups " + std::to_string(inputsPerGroup) + ")");
  if (!bias.empty() && bias.size() != d.outputFeatureChannels)
    throw Error(ErrorCode::invalidArgument, what + ": " + std::to_string(bias.size()) +
                                                " bias values given, expected 0 or " +
                                                std::to_string(d.outputFeatureChannels));

  // Each tap's group inputs padded to whole vec4s, so the shader dots 4 channels at a time.
  const size_t chunks = (inputsPerGroup + 3) / 4;
  std::vector<float> packed(size_t(d.outputFeatureChannels) * taps * chunks * 4, 0.f);
  for (size_t row = 0; row < size_t(d.outputFeatureChannels) * taps; ++row)
    std::copy_n(weights.data() + row * inputsPerGroup, inputsPerGroup,
                packed.data() + row * chunks * 4);
  std::vector<float> biasValues(d.outputFeatureChannels, 0.f);
  std::copy(bias.begin(), bias.end(), biasValues.begin());

  detail::ContextImpl& impl = *context_.impl();
  weights_ = detail::DeviceBuffer::create(impl, packed.size() * sizeof(float), packed.data(),
                                          label + " weights");
  bias_ = detail::DeviceBuffer::create(impl, biasValues.size() * sizeof(float), biasValues.data(),
                                       label + " bias");
  slopes_ = detail::neuronSlopes(impl, d.neuron, label);
}

uint32_t ConvolutionTranspose::destinationWidth(uint32_t sourceWidth) const {
  return destinationSize(descriptor_, sourceWidth, true, "kernel '" + label + "'");
}

uint32_t ConvolutionTranspose::destinationHeight(uint32_t sourceHeight) const {
  return destinationSize(descriptor_, sourceHeight, false, "kernel '" + label + "'");
}

uint32_t ConvolutionTranspose::destinationSize(const ConvolutionTransposeDescriptor& d,
                                               uint32_t sourceSize, bool horizontal,
                                               const std::string& what) {
  checkDescriptor(d, what);
  const bool mps = d.padding.mode == Padding::Mode::mpsDefault;
  if (horizontal)
    return transposedSize(sourceSize, d.kernelWidth, d.strideInPixelsX, d.dilationRateX,
                          mps ? 0 : d.padding.left, mps ? 0 : d.padding.right, d.outputPaddingX,
                          what, "horizontal");
  return transposedSize(sourceSize, d.kernelHeight, d.strideInPixelsY, d.dilationRateY,
                        mps ? 0 : d.padding.top, mps ? 0 : d.padding.bottom, d.outputPaddingY, what,
                        "vertical");
}

void ConvolutionTranspose::validate(const detail::KernelEncoding& e) const {
  if (e.sourceChannels != descriptor_.inputFeatureChannels)
    throw Error(ErrorCode::invalidArgument, e.what() + ": the source channel window holds " +
                                                std::to_string(e.sourceChannels) +
                                                " channels but inputFeatureChannels is " +
                                                std::to_string(descriptor_.inputFeatureChannels));
}

void ConvolutionTranspose::encodeKernel(detail::KernelEncoding& e) {
  const ConvolutionTransposeDescriptor& d = descriptor_;
  // Offsets are in source pixels (MPS); the shader works in padded-output positions. Worked out
  // before anything is bound: an origin out of the shader's range is an error.
  const bool mps = d.padding.mode == Padding::Mode::mpsDefault;
  const int32_t originX = detail::shaderCoordinate(
      int64_t(e.offsetX) * d.strideInPixelsX + (mps ? 0 : int64_t(d.padding.left)),
      "output origin x", e);
  const int32_t originY = detail::shaderCoordinate(
      int64_t(e.offsetY) * d.strideInPixelsY + (mps ? 0 : int64_t(d.padding.top)),
      "output origin y", e);
  detail::DispatchRecorder recorder(e.commandBuffer, detail::ShaderId::convolution_transpose,
                                    detail::variantFor(e.destination), e.what());
  detail::shader::ConvolutionTransposePush push{};
  const uint32_t slices = recorder.bindWindows(push, e);
  recorder.bindBuffer(2, std::static_pointer_cast<detail::DeviceBuffer>(weights_));
  recorder.bindBuffer(3, std::static_pointer_cast<detail::DeviceBuffer>(bias_));
  recorder.bindBuffer(4, std::static_pointer_cast<detail::DeviceBuffer>(slopes_));
  push.geometry.offsetX = originX;
  push.geometry.offsetY = originY;
  detail::shader::ConvolutionTransposeParams& p = push.convolution;
  detail::setWindowParams(p, d);
  p.inputsPerGroup = int32_t(d.inputFeatureChannels / d.groups);
  p.outputsPerGroup = int32_t(d.outputFeatureChannels / d.groups);
  push.neuron = detail::neuronParams(d.neuron);
  recorder.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

std::vector<float> convolutionTransposeWeightsFromOnnx(const ConvolutionTransposeDescriptor& d,
                                                       std::span<const float> onnx) {
  checkDescriptor(d, "convolutionTransposeWeightsFromOnnx");
  const size_t inputsPerGroup = d.inputFeatureChannels / d.groups;
  const size_t outputsPerGroup = d.outputFeatureChannels / d.groups;
  const size_t kh = d.kernelHeight, kw = d.kernelWidth;
  const size_t expected = size_t(d.inputFeatureChannels) * outputsPerGroup * kh * kw;
  if (onnx.size() != expected)
    throw Error(ErrorCode::invalidArgument,
                "convolutionTransposeWeightsFromOnnx: " + std::to_string(onnx.size()) +
                    " weights given, expected " + std::to_string(expected) + " ([" +
                    std::to_string(d.inputFeatureChannels) + "][" +
                    std::to_string(outputsPerGroup) + "][" + std::to_string(kh) + "][" +
                    std::to_string(kw) + "])");
  std::vector<float> out(expected);
  for (size_t o = 0; o < d.outputFeatureChannels; ++o) {
    const size_t group = o / outputsPerGroup, local = o % outputsPerGroup;
    for (size_t y = 0; y < kh; ++y)
      for (size_t x = 0; x < kw; ++x)
        for (size_t i = 0; i < inputsPerGroup; ++i) {
          const size_t input = group * inputsPerGroup + i;
          out[((o * kh + y) * kw + x) * inputsPerGroup + i] =
              onnx[((input * outputsPerGroup + local) * kh + y) * kw + x];
        }
  }
  return out;
}

}  // namespace vkcnn
