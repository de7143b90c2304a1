// Push-constant layouts of the pooling kernels, shared by GLSL and C++ (4-byte members only).
#ifndef VKCNN_POOLING_INTERFACE_H
#define VKCNN_POOLING_INTERFACE_H

#include "interface.h"

#ifdef __cplusplus
namespace vkcnn::detail::shader {
#endif

// Windowed pooling. The window of destination pixel p starts at source
// (p - clip) * stride + geometry.offset: the host folds the window start (-padding, or
// -(dilated kernel >> 1) for mpsDefault) into geometry.offset. An average divides by the window
// positions inside [countLoX, countHiX) x [countLoY, countHiY) (the image, or the padded image
// when padded positions count).
VKCNN_STRUCT(PoolingParams) {
  int_t kernelX, kernelY, strideX, strideY;
  int_t dilationX, dilationY, countLoX, countLoY;
  int_t countHiX, countHiY, average, pad0;
};

VKCNN_STRUCT(PoolingPush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  PoolingParams pooling;
};

// Global pooling: one workgroup per (image, destination slice) reduces the whole source image and
// writes the result to every destination pixel of the clip.
VKCNN_STRUCT(GlobalPoolingPush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  int_t average, pad0, pad1, pad2;
};

#ifdef __cplusplus
}  // namespace vkcnn::detail::shader
#endif

#endif
