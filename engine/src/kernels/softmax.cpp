#include "vkcnn/softmax.h"

#include "kernels/kernel_encoding.h"
#include "reductions_interface.h"

namespace vkcnn {
namespace {

void encodeSoftmax(detail::KernelEncoding& e, bool logarithm) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::softmax,
                             detail::variantFor(e.destination), e.what());
  detail::shader::SoftmaxPush push{};
  // Each invocation writes every destination layer of its pixel: the grid is pixels x images.
  d.bindWindows(push, e);
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
