// The Tensor kernels' parameter checks (tensor_checks.h): one message for the kernel and the
// Graph's node.
#include "kernels/tensor_checks.h"

#include <cmath>

#include "kernels/kernel_encoding.h"
#include "vkcnn/error.h"

namespace vkcnn::detail {

void checkTensorReduction(TensorReductionOperation operation, const std::string& what) {
  requireEnumerator(operation, TensorReductionOperation::logSum, what, "operation");
}

void checkTensorLayerNormalization(float epsilon, const std::string& what) {
  if (!(epsilon >= 0))
    throw Error(ErrorCode::invalidArgument,
                what + ": epsilon " + std::to_string(epsilon) + " is negative or NaN");
}

void checkTensorResize(const TensorResizeDescriptor& descriptor, const std::string& what) {
  requireEnumerator(descriptor.interpolation, TensorInterpolation::cubic, what, "interpolation");
  requireEnumerator(descriptor.coordinateTransformation,
                    TensorCoordinateTransformation::tfHalfPixelForNN, what,
                    "coordinate transformation");
  if (descriptor.nearestMode > 3)
    throw Error(
        ErrorCode::invalidArgument,
        what + ": nearest mode " + std::to_string(descriptor.nearestMode) + " does not exist");
  if (descriptor.sizes.empty() && descriptor.scales.empty())
    throw Error(ErrorCode::invalidArgument, what + ": give sizes or scales");
  for (float s : descriptor.scales)
    if (!(s > 0) || !std::isfinite(s))
      throw Error(ErrorCode::invalidArgument,
                  what + ": scale " + std::to_string(s) + " is not a positive finite number");
  for (uint32_t s : descriptor.sizes)
    if (!s) throw Error(ErrorCode::invalidArgument, what + ": an output size is 0");
}

void checkTensorPad(TensorPaddingMode mode, size_t pads, size_t axes, const std::string& what) {
  requireEnumerator(mode, TensorPaddingMode::wrap, what, "padding mode");
  if (pads % 2 || (axes && pads != 2 * axes))
    throw Error(ErrorCode::invalidArgument, what + ": " + std::to_string(pads) +
                                                " pads; there must be two per padded axis (" +
                                                std::to_string(axes) + " axes listed)");
}

}  // namespace vkcnn::detail
