// Push-constant layouts shared by GLSL and C++ (included by both): keep every member 4 bytes wide
// so std430 and C++ agree without padding rules.
#ifndef VKCNN_INTERFACE_H
#define VKCNN_INTERFACE_H

// The member types every *_interface.h uses, defined here once: C++ aliases inside
// vkcnn::detail::shader (each header reopens that namespace), GLSL macros that stay defined for
// the including shader (no shader names anything int_t, uint_t or float_t).
#ifdef __cplusplus
#include <cstdint>
namespace vkcnn::detail::shader {
using int_t = int32_t;
using uint_t = uint32_t;
using float_t = float;
#else
#define int_t int
#define uint_t uint
#define float_t float
#endif
#define VKCNN_STRUCT(name) struct name

// vkcnn::NeuronType's numbers, for neuron.glsl's switch and the host (kernels/neuron.cpp
// static_asserts each against the enum).
#define VKCNN_NEURON_NONE 0
#define VKCNN_NEURON_RELU 1
#define VKCNN_NEURON_LINEAR 2
#define VKCNN_NEURON_SIGMOID 3
#define VKCNN_NEURON_HARD_SIGMOID 4
#define VKCNN_NEURON_TANH 5
#define VKCNN_NEURON_ABSOLUTE 6
#define VKCNN_NEURON_SOFTPLUS 7
#define VKCNN_NEURON_SOFTSIGN 8
#define VKCNN_NEURON_ELU 9
#define VKCNN_NEURON_LEAKY_RELU 10
#define VKCNN_NEURON_CLAMP 11
#define VKCNN_NEURON_POWER 12
#define VKCNN_NEURON_EXPONENTIAL 13
#define VKCNN_NEURON_LOGARITHM 14
#define VKCNN_NEURON_HARD_SWISH 15
#define VKCNN_NEURON_GELU 16
#define VKCNN_NEURON_SELU 17
#define VKCNN_NEURON_PRELU 18
#define VKCNN_NEURON_SILU 19
#define VKCNN_NEURON_COUNT 20

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

#endif
