#include "vkcnn/padding.h"

#include <string>

#include "elementwise_interface.h"
#include "kernels/kernel_encoding.h"
#include "vkcnn/error.h"

namespace vkcnn {

const char* toString(PadMode mode) {
  switch (mode) {
    case PadMode::constant:
      return "constant";
    case PadMode::edge:
      return "edge";
    case PadMode::reflect:
      return "reflect";
    case PadMode::wrap:
      return "wrap";
  }
  return "unknown";
}

namespace {

int64_t paddedSize(uint32_t size, int32_t before, int32_t after) {
  return int64_t(size) + before + after;
}

}  // namespace

Pad::Pad(const Context& context, const PadDescriptor& descriptor)
    : UnaryKernel(context, std::string("pad ") + toString(descriptor.mode)),
      descriptor_(descriptor) {
  detail::requireEnumerator(descriptor_.mode, PadMode::wrap, "Pad '" + label + "'", "pad mode");
}

uint32_t Pad::destinationWidth(uint32_t sourceWidth) const {
  const int64_t size = paddedSize(sourceWidth, descriptor_.left, descriptor_.right);
  return size > 0 ? uint32_t(size) : 0;
}

uint32_t Pad::destinationHeight(uint32_t sourceHeight) const {
  const int64_t size = paddedSize(sourceHeight, descriptor_.top, descriptor_.bottom);
  return size > 0 ? uint32_t(size) : 0;
}

namespace {

void checkOutput(const std::string& what, const PadDescriptor& p, const Image& source) {
  const int64_t w = paddedSize(source.width(), p.left, p.right);
  const int64_t h = paddedSize(source.height(), p.top, p.bottom);
  if (w <= 0 || h <= 0)
    throw Error(ErrorCode::invalidArgument,
                what + ": padding top " + std::to_string(p.top) + ", left " +
                    std::to_string(p.left) + ", bottom " + std::to_string(p.bottom) + ", right " +
                    std::to_string(p.right) + " of source '" + source.label() + "' (" +
                    std::to_string(source.width()) + "x" + std::to_string(source.height()) +
                    ") gives an empty output " + std::to_string(w) + "x" + std::to_string(h));
}

}  // namespace

ImageDescriptor Pad::destinationImageDescriptor(const Image& source) const {
  if (source.valid()) checkOutput("kernel '" + label + "'", descriptor_, source);
  return UnaryKernel::destinationImageDescriptor(source);
}

void Pad::validate(const detail::KernelEncoding& e) const {
  const PadDescriptor& p = descriptor_;
  checkOutput(e.what(), p, e.source);
  if (p.mode != PadMode::reflect) return;
  // One reflection about the edge pixel reaches size - 1 pixels out (ONNX and numpy agree).
  const auto check = [&](const char* side, int32_t amount, uint32_t size, const char* extent) {
    if (amount > 0 && uint32_t(amount) >= size)
      throw Error(ErrorCode::invalidArgument,
                  e.what() + ": reflect padding " + side + " " + std::to_string(amount) +
                      " needs a source " + extent + " above " + std::to_string(amount) +
                      "; source '" + e.source.label() + "' is " + std::to_string(e.source.width()) +
                      "x" + std::to_string(e.source.height()));
  };
  check("top", p.top, e.source.height(), "height");
  check("bottom", p.bottom, e.source.height(), "height");
  check("left", p.left, e.source.width(), "width");
  check("right", p.right, e.source.width(), "width");
}

void Pad::encodeKernel(detail::KernelEncoding& e) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::pad,
                             detail::variantFor(e.destination), e.what());
  detail::shader::PadPush push{};
  const uint32_t slices = d.bindWindows(push, e);
  push.left = descriptor_.left;
  push.top = descriptor_.top;
  push.sourceWidth = int32_t(e.source.width());
  push.sourceHeight = int32_t(e.source.height());
  push.mode = int32_t(descriptor_.mode);
  push.value = descriptor_.value;
  d.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

}  // namespace vkcnn
