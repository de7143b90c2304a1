// The checks of the Tensor kernels' parameters that their constructors make, shared with the
// Graph's builders (graph/build_tensor.cpp), which check the same parameters when a node is built,
// before its kernel exists (lower() makes it), and with the .vkcnn reader (graph/serialize_*.cpp).
// `what` starts the message: the kernel's class, or the Graph's node.
#pragma once

#include <cstddef>
#include <string>

#include "vkcnn/tensor_ops.h"

namespace vkcnn::detail {

void checkTensorReduction(TensorReductionOperation operation, const std::string& what);
void checkTensorLayerNormalization(float epsilon, const std::string& what);
void checkTensorResize(const TensorResizeDescriptor& descriptor, const std::string& what);
void checkTensorPad(TensorPaddingMode mode, size_t pads, size_t axes, const std::string& what);

}  // namespace vkcnn::detail
