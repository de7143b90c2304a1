#include "vkcnn/arithmetic.h"

#include <string>

#include "elementwise_interface.h"
#include "kernels/kernel_encoding.h"
#include "vkcnn/error.h"
#include "kernels/neuron_params.h"
#include "vulkan/context_impl.h"

namespace vkcnn {

const char* toString(ArithmeticOperation operation) {
  switch (operation) {
    case ArithmeticOperation::add:
      return "add";
    case ArithmeticOperation::subtract:
      return "subtract";
    case ArithmeticOperation::multiply:
      return "multiply";
    case ArithmeticOperation::divide:
      return "divide";
  }
  return "unknown";
}

double applyArithmetic(ArithmeticOperation operation, double a, double b) {
  switch (operation) {
    case ArithmeticOperation::add:
      return a + b;
    case ArithmeticOperation::subtract:
      return a - b;
    case ArithmeticOperation::multiply:
      return a * b;
    case ArithmeticOperation::divide:
      return a / b;
  }
  return a;
}

namespace {

// What the shader reads as the secondary operand.
struct Secondary {
  const Image& image;
  uint32_t firstImage;
  int32_t offsetX, offsetY;
  uint32_t channelOffset, channels;
  uint32_t broadcast;  // VKCNN_BROADCAST_* bits
};

struct Arguments {
  ArithmeticOperation operation;
  float primaryScale, secondaryScale, bias;
  const NeuronDescriptor& neuron;
  const std::shared_ptr<void>& slopes;
};

std::string shape(const Image& image, uint32_t channels) {
  return "'" + image.label() + "' (" + std::to_string(image.width()) + "x" +
         std::to_string(image.height()) + "x" + std::to_string(channels) + ", " +
         std::to_string(image.numberOfImages()) + " images)";
}

void checkOperation(ArithmeticOperation operation, const std::string& what) {
  detail::requireEnumerator(operation, ArithmeticOperation::divide, what, "arithmetic operation");
}

void checkSlopes(const NeuronDescriptor& neuron, uint32_t channels, const std::string& what) {
  if (neuron.type == NeuronType::prelu && neuron.preluSlopes.size() != 1 &&
      neuron.preluSlopes.size() < channels)
    throw Error(ErrorCode::invalidArgument,
                what + ": " + std::to_string(neuron.preluSlopes.size()) + " PReLU slopes for " +
                    std::to_string(channels) + " channels");
}

void encodeArithmetic(detail::KernelEncoding& e, const Secondary& s, const Arguments& args) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::arithmetic,
                             detail::variantFor(e.destination), e.what());
  detail::shader::ArithmeticPush push{};
  push.primary = d.bindSource(0, e.source, e.sourceFirstImage, e.imageCount, e.sourceChannelOffset,
                              e.sourceChannels);
  const uint32_t secondaryImages = (s.broadcast & VKCNN_BROADCAST_IMAGES) ? 1 : e.imageCount;
  push.secondary =
      d.bindSource(1, s.image, s.firstImage, secondaryImages, s.channelOffset, s.channels);
  push.destination = d.bindDestination(2, e.destination, e.destinationFirstImage, e.imageCount,
                                       e.destinationChannelOffset, e.destinationChannels);
  d.bindBuffer(3, std::static_pointer_cast<detail::DeviceBuffer>(args.slopes));
  const uint32_t slices =
      detail::touchedSlices(uint32_t(push.destination.channelShift), e.destinationChannels);
  push.geometry = e.geometry(slices);
  push.secondaryOffsetX = s.offsetX;
  push.secondaryOffsetY = s.offsetY;
  push.operation = int32_t(args.operation);
  push.broadcast = int32_t(s.broadcast);
  push.primaryScale = args.primaryScale;
  push.secondaryScale = args.secondaryScale;
  push.bias = args.bias;
  const detail::shader::NeuronParams n = detail::neuronParams(args.neuron);
  push.neuronType = n.type;
  push.slopeCount = n.slopeCount;
  push.neuronA = n.a;
  push.neuronB = n.b;
  push.neuronC = n.c;
  d.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

}  // namespace

// ---- Arithmetic ---------------------------------------------------------------------------------

Arithmetic::Arithmetic(const Context& context, ArithmeticOperation operation,
                       const NeuronDescriptor& neuron)
    : BinaryKernel(context, toString(operation)), operation_(operation), neuron_(neuron) {
  checkOperation(operation_, "Arithmetic '" + label + "'");
  detail::checkNeuron(neuron_, "Arithmetic '" + label + "'");
  slopes_ = detail::neuronSlopes(*context_.impl(), neuron_, label);
}

void Arithmetic::validate(const detail::BinaryKernelEncoding& e) const {
  const Image& a = e.source;
  const Image& b = e.secondary;
  const auto fits = [](uint32_t secondary, uint32_t primary) {
    return secondary == primary || secondary == 1;
  };
  if (!fits(b.width(), a.width()) || !fits(b.height(), a.height()) ||
      !fits(e.secondaryChannels, e.sourceChannels))
    throw Error(ErrorCode::invalidArgument,
                e.what() + ": primary " + shape(a, e.sourceChannels) + " and secondary " +
                    shape(b, e.secondaryChannels) +
                    " do not broadcast (each secondary width, height and channel window must "
                    "equal the primary's or be 1)");
  checkSlopes(neuron_, e.sourceChannels, e.what());
}

void Arithmetic::encodeKernel(detail::BinaryKernelEncoding& e) {
  const Image& a = e.source;
  const Image& b = e.secondary;
  uint32_t broadcast = 0;
  if (b.width() == 1 && a.width() > 1) broadcast |= VKCNN_BROADCAST_X;
  if (b.height() == 1 && a.height() > 1) broadcast |= VKCNN_BROADCAST_Y;
  if (e.secondaryChannels == 1 && e.sourceChannels > 1) broadcast |= VKCNN_BROADCAST_CHANNELS;
  // The base class lets a one-image secondary through for this (with secondaryOffset.z 0).
  if (b.numberOfImages() == 1) broadcast |= VKCNN_BROADCAST_IMAGES;
  encodeArithmetic(e,
                   {b, e.secondaryFirstImage, e.secondaryOffsetX, e.secondaryOffsetY,
                    e.secondaryChannelOffset, e.secondaryChannels, broadcast},
                   {operation_, primaryScale, secondaryScale, bias, neuron_, slopes_});
}

// ---- ArithmeticWithConstant ---------------------------------------------------------------------

ArithmeticWithConstant::ArithmeticWithConstant(const Context& context,
                                               ArithmeticOperation operation,
                                               std::vector<float> constants,
                                               const NeuronDescriptor& neuron)
    : UnaryKernel(context, std::string(toString(operation)) + " constant"),
      operation_(operation),
      constants_(std::move(constants)),
      neuron_(neuron) {
  const std::string what = "ArithmeticWithConstant '" + label + "'";
  checkOperation(operation_, what);
  detail::checkNeuron(neuron_, what);
  if (constants_.empty())
    throw Error(ErrorCode::invalidArgument,
                what + ": needs one constant, or one per channel; none were given");
  ImageDescriptor d;
  d.featureChannels = uint32_t(constants_.size());
  d.channelFormat = ChannelFormat::float32;  // the constants exactly as given
  d.label = label + " constants";
  constantImage_ = Image(context, d);
  constantImage_.writeFloats(constants_, DataLayout::HeightxWidthxFeatureChannels);
  slopes_ = detail::neuronSlopes(*context_.impl(), neuron_, label);
}

void ArithmeticWithConstant::validate(const detail::KernelEncoding& e) const {
  if (constants_.size() != 1 && constants_.size() != e.sourceChannels)
    throw Error(ErrorCode::invalidArgument,
                e.what() + ": " + std::to_string(constants_.size()) +
                    " constants for a window of " + std::to_string(e.sourceChannels) +
                    " channels of source " + shape(e.source, e.sourceChannels) +
                    " (give one, or one per channel)");
  checkSlopes(neuron_, e.sourceChannels, e.what());
}

void ArithmeticWithConstant::encodeKernel(detail::KernelEncoding& e) {
  const uint32_t channels = uint32_t(constants_.size());
  uint32_t broadcast = VKCNN_BROADCAST_X | VKCNN_BROADCAST_Y | VKCNN_BROADCAST_IMAGES;
  if (channels == 1) broadcast |= VKCNN_BROADCAST_CHANNELS;
  encodeArithmetic(e, {constantImage_, 0, 0, 0, 0, channels, broadcast},
                   {operation_, primaryScale, secondaryScale, bias, neuron_, slopes_});
}

}  // namespace vkcnn
