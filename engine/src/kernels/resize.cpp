#include "vkcnn/resize.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

#include "elementwise_interface.h"
#include "kernels/kernel_encoding.h"
#include "vkcnn/error.h"

namespace vkcnn {

const char* toString(ResizeMode mode) {
  switch (mode) {
    case ResizeMode::nearest:
      return "nearest";
    case ResizeMode::bilinear:
      return "bilinear";
  }
  return "unknown";
}

const char* toString(CoordinateTransformationMode mode) {
  switch (mode) {
    case CoordinateTransformationMode::halfPixel:
      return "half_pixel";
    case CoordinateTransformationMode::pytorchHalfPixel:
      return "pytorch_half_pixel";
    case CoordinateTransformationMode::alignCorners:
      return "align_corners";
    case CoordinateTransformationMode::asymmetric:
      return "asymmetric";
    case CoordinateTransformationMode::tfHalfPixelForNN:
      return "tf_half_pixel_for_nn";
  }
  return "unknown";
}

const char* toString(NearestMode mode) {
  switch (mode) {
    case NearestMode::roundPreferFloor:
      return "round_prefer_floor";
    case NearestMode::roundPreferCeil:
      return "round_prefer_ceil";
    case NearestMode::floor:
      return "floor";
    case NearestMode::ceil:
      return "ceil";
  }
  return "unknown";
}

namespace {

// Input coordinate of output coordinate u as (a*u + b) / d (see resize.h for the formulas).
struct Fraction {
  int64_t a, b, d;
};

Fraction axisFraction(CoordinateTransformationMode mode, int64_t in, int64_t out) {
  switch (mode) {
    case CoordinateTransformationMode::halfPixel:
      return {2 * in, in - out, 2 * out};
    case CoordinateTransformationMode::pytorchHalfPixel:
      return out > 1 ? Fraction{2 * in, in - out, 2 * out} : Fraction{0, 0, 1};
    case CoordinateTransformationMode::alignCorners:
      return out > 1 ? Fraction{in - 1, 0, out - 1} : Fraction{0, 0, 1};
    case CoordinateTransformationMode::asymmetric:
      return {in, 0, out};
    case CoordinateTransformationMode::tfHalfPixelForNN:
      return {2 * in, in, 2 * out};
  }
  return {0, 0, 1};
}

}  // namespace

Resize::Resize(const Context& context, const ResizeDescriptor& descriptor)
    : UnaryKernel(context, std::string("resize ") + toString(descriptor.mode)),
      descriptor_(descriptor) {
  const std::string what = "Resize '" + label + "'";
  if (!descriptor_.width || !descriptor_.height)
    throw Error(ErrorCode::invalidArgument, what + ": output size " +
                                                std::to_string(descriptor_.width) + "x" +
                                                std::to_string(descriptor_.height) + " is empty");
  detail::requireEnumerator(descriptor_.mode, ResizeMode::bilinear, what, "resize mode");
  detail::requireEnumerator(descriptor_.coordinateTransformationMode,
                            CoordinateTransformationMode::tfHalfPixelForNN, what,
                            "coordinate transformation mode");
  detail::requireEnumerator(descriptor_.nearestMode, NearestMode::ceil, what, "nearest mode");
}

void Resize::validate(const detail::KernelEncoding& e) const {
  // The shader evaluates 2 * (a*u + b) + d in 32-bit integers.
  const auto check = [&](const char* axis, uint32_t in, uint32_t out, int64_t offset,
                         uint32_t clip) {
    const Fraction f = axisFraction(descriptor_.coordinateTransformationMode, in, out);
    const int64_t u = std::max(std::abs(offset), std::abs(offset + int64_t(clip)));
    if (2 * (f.a * u + std::abs(f.b)) + f.d > std::numeric_limits<int32_t>::max())
      throw Error(ErrorCode::invalidArgument,
                  e.what() + ": resizing " + axis + " from " + std::to_string(in) + " to " +
                      std::to_string(out) + " at output coordinate " + std::to_string(u) +
                      " exceeds the shader's 32-bit coordinate arithmetic");
  };
  check("width", e.source.width(), descriptor_.width, e.offsetX, e.clipWidth);
  check("height", e.source.height(), descriptor_.height, e.offsetY, e.clipHeight);
}

void Resize::encodeKernel(detail::KernelEncoding& e) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::resize,
                             detail::variantFor(e.destination), e.what());
  detail::shader::ResizePush push{};
  const uint32_t slices = d.bindWindows(push, e);
  const auto axis = [&](uint32_t in, uint32_t out) {
    const Fraction f = axisFraction(descriptor_.coordinateTransformationMode, in, out);
    return detail::shader::ResizeAxis{int32_t(f.a), int32_t(f.b), int32_t(f.d), int32_t(in)};
  };
  push.x = axis(e.source.width(), descriptor_.width);
  push.y = axis(e.source.height(), descriptor_.height);
  push.mode = int32_t(descriptor_.mode);
  push.nearestMode = int32_t(descriptor_.nearestMode);
  d.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

}  // namespace vkcnn
