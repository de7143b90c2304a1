// Push-constant layouts of the element-wise family (arithmetic, resize, padding), shared by GLSL
// and C++ like interface.h: every member 4 bytes wide. Lavapipe allows 128 bytes of push constants;
// ArithmeticPush uses all of them.
#ifndef VKCNN_ELEMENTWISE_INTERFACE_H
#define VKCNN_ELEMENTWISE_INTERFACE_H

#include "interface.h"

#ifdef __cplusplus
namespace vkcnn::detail::shader {
#endif

// Bits of ArithmeticPush::broadcast: the secondary axes read at index 0 for every destination
// position (the secondary's extent there is 1 while the primary's is larger).
#define VKCNN_BROADCAST_X 1
#define VKCNN_BROADCAST_Y 2
#define VKCNN_BROADCAST_CHANNELS 4
#define VKCNN_BROADCAST_IMAGES 8

// y = neuron(op(primaryScale * a, secondaryScale * b) + bias). The neuron is NeuronParams without
// its padding, so that everything fits in 128 bytes.
VKCNN_STRUCT(ArithmeticPush) {
  ImageView primary;
  ImageView secondary;
  ImageView destination;
  Geometry geometry;  // offsetX/Y: the primary's offset
  int_t secondaryOffsetX, secondaryOffsetY;
  int_t operation;  // vkcnn::ArithmeticOperation
  int_t broadcast;  // VKCNN_BROADCAST_* bits
  float_t primaryScale, secondaryScale, bias;
  int_t neuronType, slopeCount;
  float_t neuronA, neuronB, neuronC;
};

// Source coordinate of output coordinate u along one axis is the exact rational (a*u + b) / d
// (d > 0), so nearest rounding of ties (x.5) is decided exactly, not by float rounding.
VKCNN_STRUCT(ResizeAxis) {
  int_t a, b, d, size;  // size: the source's extent, reads clamp to [0, size)
};

VKCNN_STRUCT(ResizePush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;  // offsetX/Y: output coordinate of the clip's first pixel
  ResizeAxis x, y;
  int_t mode;         // vkcnn::ResizeMode
  int_t nearestMode;  // vkcnn::NearestMode
};

VKCNN_STRUCT(PadPush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;  // source pixel = (p - clip) + offset - (left, top)
  int_t left, top;
  int_t sourceWidth, sourceHeight;
  int_t mode;  // vkcnn::PaddingMode
  float_t value;
  int_t pad0, pad1;
};

#ifdef __cplusplus
}  // namespace vkcnn::detail::shader
#endif

#endif
