// Push constants of the buffer <-> image layout kernels (buffer_to_image.comp,
// image_to_buffer.comp).
#ifndef VKCNN_LAYOUT_INTERFACE_H
#define VKCNN_LAYOUT_INTERFACE_H

#include "interface.h"

#ifdef __cplusplus
namespace vkcnn::detail::shader {
#endif

// Tensor orders in the buffer.
#define VKCNN_LAYOUT_NCHW 0
#define VKCNN_LAYOUT_NHWC 1

// One invocation per pixel and image layer: `slices` layers per image, `imageCount` images of
// `width` x `height`. The tensor has `channels` channels and starts at float `firstElement` of the
// bound buffer range.
VKCNN_STRUCT(LayoutPush) {
  ImageView image;
  int_t width, height, imageCount, slices;
  int_t channels, dataLayout;
  uint_t firstElement;
  int_t pad0;
};

#ifdef __cplusplus
}  // namespace vkcnn::detail::shader
#endif

#endif
