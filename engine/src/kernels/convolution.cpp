// Convolution (vkcnn/convolution.h): its state made from the weights (convolution_weights.cpp),
// the output sizes and window edges of its padding, and its encodes, which
// convolution_encode.cpp records.
#include "vkcnn/convolution.h"

#include "kernels/convolution_state.h"
#include "kernels/kernel_encoding.h"

namespace vkcnn {

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
  return detail::fromDatFiles<Convolution>(context, descriptor, weightsPath, biasPath, what);
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

}  // namespace vkcnn
