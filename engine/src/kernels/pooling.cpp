#include "vkcnn/pooling.h"

#include <limits>
#include <string>

#include "kernels/kernel_encoding.h"
#include "pooling_interface.h"
#include "vkcnn/error.h"

namespace vkcnn {
namespace {

using detail::requirePositive;

// Past any window position a source could have: "every position counts".
constexpr int32_t kUnbounded = 1 << 30;

uint64_t dilatedSize(uint32_t kernel, uint32_t dilation) {
  return uint64_t(kernel - 1) * dilation + 1;
}

void checkDescriptor(const PoolingDescriptor& d, const std::string& what) {
  requirePositive(d.kernelWidth, "kernelWidth", what);
  requirePositive(d.kernelHeight, "kernelHeight", what);
  detail::requireStepsPositive(d, what);
  // The shader steps through windows with 32-bit ints.
  const uint64_t windowX = dilatedSize(d.kernelWidth, d.dilationRateX);
  const uint64_t windowY = dilatedSize(d.kernelHeight, d.dilationRateY);
  const uint64_t limit = uint64_t(std::numeric_limits<int32_t>::max());
  if (windowX > limit || windowY > limit || d.strideInPixelsX > limit || d.strideInPixelsY > limit)
    throw Error(ErrorCode::limitExceeded, what + ": dilated window " + std::to_string(windowX) +
                                              "x" + std::to_string(windowY) + ", stride " +
                                              std::to_string(d.strideInPixelsX) + "x" +
                                              std::to_string(d.strideInPixelsY) +
                                              ": each must stay below " + std::to_string(limit));
  const Padding& p = d.padding;
  if (p.mode == Padding::Mode::mpsDefault) {
    if (p.ceilMode)
      throw Error(ErrorCode::invalidArgument,
                  what +
                      ": ceilMode needs Padding::Mode::explicitPadding (mpsDefault sizes the "
                      "output as ceil(size / stride) already)");
    return;
  }
  const struct {
    const char* name;
    uint32_t pad;
    uint64_t window;
  } pads[] = {{"left", p.left, windowX},
              {"right", p.right, windowX},
              {"top", p.top, windowY},
              {"bottom", p.bottom, windowY}};
  for (auto& pad : pads)
    if (pad.pad >= pad.window)
      throw Error(ErrorCode::invalidArgument, what + ": padding " + pad.name + " " +
                                                  std::to_string(pad.pad) +
                                                  " must be smaller than the (dilated) window of " +
                                                  std::to_string(pad.window) + " pixels");
}

uint32_t pooledSize(uint32_t size, uint32_t kernel, uint32_t stride, uint32_t dilation,
                    uint32_t padBegin, uint32_t padEnd, const Padding& padding,
                    const std::string& what, const char* axis) {
  if (padding.mode == Padding::Mode::mpsDefault) return (size + stride - 1) / stride;
  const uint64_t window = uint64_t(kernel - 1) * dilation + 1;
  const uint64_t padded = uint64_t(size) + padBegin + padEnd;
  if (padded < window)
    throw Error(ErrorCode::invalidArgument,
                what + ": the " + axis + " window of " + std::to_string(window) +
                    " pixels is larger than the padded source (" + std::to_string(size) + " + " +
                    std::to_string(padBegin) + " + " + std::to_string(padEnd) + ")");
  if (!padding.ceilMode) return uint32_t((padded - window) / stride + 1);
  uint64_t out = (padded - window + stride - 1) / stride + 1;
  // The last window must start inside the image or its leading padding (PyTorch, ONNX).
  if ((out - 1) * stride >= uint64_t(size) + padBegin) --out;
  return uint32_t(out);
}

}  // namespace

// ---- Windowed pooling ---------------------------------------------------------------------------

Pooling::Pooling(const Context& context, const PoolingDescriptor& descriptor, bool average,
                 std::string defaultLabel)
    : UnaryKernel(context, std::move(defaultLabel)), descriptor_(descriptor), average_(average) {
  checkDescriptor(descriptor_, "kernel '" + label + "'");
}

PoolingMax::PoolingMax(const Context& context, const PoolingDescriptor& descriptor)
    : Pooling(context, descriptor, false, "pooling max") {}

PoolingAverage::PoolingAverage(const Context& context, const PoolingDescriptor& descriptor)
    : Pooling(context, descriptor, true, "pooling average") {}

uint32_t Pooling::destinationWidth(uint32_t sourceWidth) const {
  const auto& d = descriptor_;
  return pooledSize(sourceWidth, d.kernelWidth, d.strideInPixelsX, d.dilationRateX, d.padding.left,
                    d.padding.right, d.padding, "kernel '" + label + "'", "horizontal");
}

uint32_t Pooling::destinationHeight(uint32_t sourceHeight) const {
  const auto& d = descriptor_;
  return pooledSize(sourceHeight, d.kernelHeight, d.strideInPixelsY, d.dilationRateY, d.padding.top,
                    d.padding.bottom, d.padding, "kernel '" + label + "'", "vertical");
}

void Pooling::encodeKernel(detail::KernelEncoding& e) {
  const PoolingDescriptor& d = descriptor_;
  // Coordinates first: a geometry out of the shader's range is an error before anything is bound.
  const bool mps = d.padding.mode == Padding::Mode::mpsDefault;
  const int64_t left =
      mps ? int64_t(dilatedSize(d.kernelWidth, d.dilationRateX) >> 1) : int64_t(d.padding.left);
  const int64_t top =
      mps ? int64_t(dilatedSize(d.kernelHeight, d.dilationRateY) >> 1) : int64_t(d.padding.top);
  const int32_t originX = detail::shaderCoordinate(e.offsetX - left, "window origin x", e);
  const int32_t originY = detail::shaderCoordinate(e.offsetY - top, "window origin y", e);
  detail::shader::PoolingParams p{};
  detail::setWindowParams(p, d);
  p.average = average_ ? 1 : 0;
  const int32_t width = int32_t(e.source.width()), height = int32_t(e.source.height());
  p.countLoX = p.countLoY = 0;
  p.countHiX = width;
  p.countHiY = height;
  if (average_ && d.countIncludePad) {
    if (mps) {
      p.countLoX = p.countLoY = -kUnbounded;
      p.countHiX = p.countHiY = kUnbounded;
    } else {
      p.countLoX = detail::shaderCoordinate(-int64_t(d.padding.left), "counted area left", e);
      p.countLoY = detail::shaderCoordinate(-int64_t(d.padding.top), "counted area top", e);
      p.countHiX =
          detail::shaderCoordinate(int64_t(width) + d.padding.right, "counted area right", e);
      p.countHiY =
          detail::shaderCoordinate(int64_t(height) + d.padding.bottom, "counted area bottom", e);
    }
  }

  detail::DispatchRecorder recorder(e.commandBuffer, detail::ShaderId::pooling,
                                    detail::variantFor(e.destination), e.what());
  detail::shader::PoolingPush push{};
  const uint32_t slices = recorder.bindWindows(push, e);
  push.geometry.offsetX = originX;
  push.geometry.offsetY = originY;
  push.pooling = p;
  recorder.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

// ---- Global pooling -----------------------------------------------------------------------------

GlobalPooling::GlobalPooling(const Context& context, bool average, std::string defaultLabel)
    : UnaryKernel(context, std::move(defaultLabel)), average_(average) {}

GlobalPoolingMax::GlobalPoolingMax(const Context& context)
    : GlobalPooling(context, false, "global pooling max") {}

GlobalPoolingAverage::GlobalPoolingAverage(const Context& context)
    : GlobalPooling(context, true, "global pooling average") {}

void GlobalPooling::validate(const detail::KernelEncoding& e) const {
  if (e.offsetX != 0 || e.offsetY != 0)
    throw Error(ErrorCode::invalidArgument,
                e.what() + ": offset (" + std::to_string(e.offsetX) + ", " +
                    std::to_string(e.offsetY) +
                    ") must be (0, 0): global pooling always reduces the whole source image");
}

void GlobalPooling::encodeKernel(detail::KernelEncoding& e) {
  // Lanes per workgroup: ~8 pixels each, a power of two from 64 to 1024 (the shader's
  // specialization constant). A workgroup reduces a whole slice, so a large map with few slices
  // (112x112x32: 8 workgroups at batch 1) would otherwise leave the GPU nearly idle.
  const uint64_t pixels = uint64_t(e.source.width()) * e.source.height();
  int32_t lanes = 64;
  while (lanes < 1024 && uint64_t(lanes) * 8 < pixels) lanes *= 2;
  const int32_t specialization[] = {lanes};
  detail::DispatchRecorder recorder(e.commandBuffer, detail::ShaderId::global_pooling,
                                    detail::variantFor(e.destination), e.what(), specialization);
  detail::shader::GlobalPoolingPush push{};
  const uint32_t slices = recorder.bindWindows(push, e);
  push.average = average_ ? 1 : 0;
  // One workgroup per (image, slice); the shader's lanes share the pixels.
  recorder.dispatchGroups(&push, sizeof(push), 1, 1, e.imageCount * slices);
}

}  // namespace vkcnn
