// Push constants of the squeeze-and-excitation kernel, shared by GLSL and C++ like interface.h:
// every member 4 bytes wide, 128 bytes at most (lavapipe's limit).
#ifndef VKCNN_SQUEEZE_EXCITATION_INTERFACE_H
#define VKCNN_SQUEEZE_EXCITATION_INTERFACE_H

#include "interface.h"

#ifdef __cplusplus
namespace vkcnn::detail::shader {
#endif

// Largest channel count and reduced width the shader's shared arrays hold.
#define VKCNN_SE_MAX_CHANNELS 4096
#define VKCNN_SE_MAX_REDUCED 1024
#define VKCNN_SE_LANES 256
// ... those of squeeze_excitation_small.comp, which fits 16 KiB (12 KiB).
#define VKCNN_SE_SMALL_CHANNELS 2048
#define VKCNN_SE_SMALL_REDUCED 512

// The weights buffer holds fc1 [reduced][channels], its bias [reduced], fc2 transposed
// [reduced][channels] and its bias [channels], in that order.
VKCNN_STRUCT(SqueezeExcitationPush) {
  ImageView source;       // x
  ImageView mean;         // the pooled means, 1x1 per image
  ImageView destination;  // x scaled per channel
  Geometry geometry;
  int_t channels, reduced;
  int_t innerType, gateType;  // vkcnn::NeuronType
  float_t innerA, innerB, gateA, gateB;
  // Workgroups per image: layerGroups x pixelChunks; a group covers layersPerGroup destination
  // layers, a chunk pixelsPerChunk of the clip's pixels.
  int_t layersPerGroup, pixelChunks, pixelsPerChunk;
};

#ifdef __cplusplus
static_assert(sizeof(SqueezeExcitationPush) <= 128);
}  // namespace vkcnn::detail::shader
#endif

#endif
