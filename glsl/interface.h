// Push-constant layouts shared by GLSL and C++ (included by both): keep every member 4 bytes wide
// so std430 and C++ agree without padding rules.
#ifndef VKCNN_INTERFACE_H
#define VKCNN_INTERFACE_H

#ifdef __cplusplus
#include <cstdint>
namespace vkcnn::detail::shader {
using int_t = int32_t;
using float_t = float;
#define VKCNN_STRUCT(name) struct name
#else
#define int_t int
#define float_t float
#define VKCNN_STRUCT(name) struct name
#endif

// How a kernel sees one bound image view. The view starts at the layer holding the window's first
// channel, in the window's first image.
VKCNN_STRUCT(ImageView) {
  int_t layersPerImage;   // storage layers between consecutive images
  int_t featureChannels;  // channels in the window
  int_t channelShift;     // position of the window's first channel inside the first layer (0..3)
  int_t paddingFrom;      // view-relative channel from which the storage holds padding (zeros)
};

// Where a dispatch writes: destination pixels [clipX, +clipWidth) x [clipY, +clipHeight) of
// `imageCount` images, `slices` layers per image. Source pixel = (p - clip) * stride + offset.
VKCNN_STRUCT(Geometry) {
  int_t clipX, clipY, clipWidth, clipHeight;
  int_t offsetX, offsetY, imageCount, slices;
};

// The neuron a kernel applies to its result. The last three words are unused by neurons: the
// convolution family carries its residual there (convolution_bindings.glsl), which keeps its push
// constants within 128 bytes; every other kernel leaves them zero.
VKCNN_STRUCT(NeuronParams) {
  int_t type;
  int_t slopeCount;  // PReLU slopes in the bound buffer
  float_t a, b, c;
  int_t residual;                // 1: add the residual image before the neuron
  int_t residualLayersPerImage;  // the residual's ImageView, whose featureChannels are the
  int_t residualChannelShift;    // destination's and which needs no paddingFrom
};

VKCNN_STRUCT(NeuronPush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  NeuronParams neuron;
};

#ifdef __cplusplus
}  // namespace vkcnn::detail::shader
#endif
#undef int_t
#undef float_t

#endif
