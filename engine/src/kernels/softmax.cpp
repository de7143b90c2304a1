#include "vkcnn/softmax.h"

#include "kernels/kernel_encoding.h"
#include "reductions_interface.h"

namespace vkcnn {
namespace {

void encodeSoftmax(detail::KernelEncoding& e, bool logarithm) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::softmax,
                             detail::variantFor(e.destination), e.what());
  detail::shader::SoftmaxPush push{};
  push.source = d.bindSource(0, e.source, e.sourceFirstImage, e.imageCount, e.sourceChannelOffset,
                             e.sourceChannels);
  push.destination = d.bindDestination(1, e.destination, e.destinationFirstImage, e.imageCount,
                                       e.destinationChannelOffset, e.destinationChannels);
  // Each invocation writes every destination layer of its pixel: the grid is pixels x images.
  push.geometry = e.geometry(
      detail::touchedSlices(uint32_t(push.destination.channelShift), e.destinationChannels));
  push.logarithm = logarithm ? 1 : 0;
  d.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount);
}

}  // namespace

Softmax::Softmax(const Context& context) : UnaryKernel(context, "softmax") {}

void Softmax::encodeKernel(detail::KernelEncoding& e) {
  encodeSoftmax(e, false);
}

LogSoftmax::LogSoftmax(const Context& context) : UnaryKernel(context, "log softmax") {}

void LogSoftmax::encodeKernel(detail::KernelEncoding& e) {
  encodeSoftmax(e, true);
}

}  // namespace vkcnn
