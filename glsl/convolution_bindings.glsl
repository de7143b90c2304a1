// The bindings and push constants of the convolution shaders (convolution.glsl,
// convolution_gemm.glsl, convolution_matrix.glsl, depthwise_convolution.comp), which one host class
// binds alike, and their common epilogue. VKCNN_WEIGHT_TYPE is the element type of the weight
// buffer (vec4 unless set).
#ifndef VKCNN_CONVOLUTION_BINDINGS_GLSL
#define VKCNN_CONVOLUTION_BINDINGS_GLSL

#include "convolution_interface.h"

#ifndef VKCNN_WEIGHT_TYPE
#define VKCNN_WEIGHT_TYPE vec4
#endif

#ifdef VKCNN_PIECES
// One dispatch over the pieces of a batch that the layer limit splits (convolution_tiled_pieces):
// piece p's source, destination and residual at element p of each array (the host binds every
// element, repeating its last piece), IMAGES_PER_PIECE images in each but the last: piece p
// holds images [p, p + 1) x IMAGES_PER_PIECE of the batch. uSource, uDestination and uResidual
// name piece `currentPiece`'s, so that the epilogue's helpers (residualOf, writeSlice) read and
// write the piece pieceImage last set.
#extension GL_EXT_nonuniform_qualifier : require
layout(constant_id = 8) const int IMAGES_PER_PIECE = 1;
layout(set = 0, binding = 0) uniform sampler2DArray uSources[VKCNN_MAX_PIECES];
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE
    uDestinations[VKCNN_MAX_PIECES];
layout(set = 0, binding = 5) uniform sampler2DArray uResiduals[VKCNN_MAX_PIECES];
int currentPiece = 0;
#define uSource uSources[nonuniformEXT(currentPiece)]
#define uDestination uDestinations[nonuniformEXT(currentPiece)]
#define uResidual uResiduals[nonuniformEXT(currentPiece)]
// Image `img` of the batch as an image of its piece, which becomes the current one.
int pieceImage(int img) {
  currentPiece = img / IMAGES_PER_PIECE;
  return img - currentPiece * IMAGES_PER_PIECE;
}
#else
layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
int pieceImage(int img) { return img; }
#endif
layout(set = 0, binding = 2, std430) readonly buffer Weights { VKCNN_WEIGHT_TYPE weights[]; };
layout(set = 0, binding = 3, std430) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 4, std430) readonly buffer Slopes { float slopes[]; };
#define VKCNN_NEURON_SLOPES
// Added before the neuron when pc.neuron.residual is set (a residual block's shortcut); the host
// binds the source here otherwise.
#ifndef VKCNN_PIECES
layout(set = 0, binding = 5) uniform sampler2DArray uResidual;
#endif
layout(push_constant) uniform Push { ConvolutionPush pc; };

#include "image_io.glsl"
#include "neuron.glsl"
#include "slice_product.glsl"

// ConvolutionDescriptor::sourceActivation: 0 none, 1 a per-channel affine on the source as it is
// read, 2 the affine and a ReLU. Its scales follow the bias in the bias buffer, then its shifts,
// each padded with zeros to VKCNN_SOURCE_ACTIVATION_STRIDE (convolution_interface.h). A
// specialization constant: without an activation the shaders are what they were.
layout(constant_id = 10) const int SOURCE_ACTIVATION = 0;
struct SourceAffine {
  vec4 scale, shift;
};
// The affine of window channels [c, c + 4).
SourceAffine sourceAffineOf(int c) {
  const int at = pc.destination.featureChannels + c;
  const int shiftAt = at + VKCNN_SOURCE_ACTIVATION_STRIDE(pc.source.featureChannels);
  return SourceAffine(vec4(bias[at], bias[at + 1], bias[at + 2], bias[at + 3]),
                      vec4(bias[shiftAt], bias[shiftAt + 1], bias[shiftAt + 2], bias[shiftAt + 3]));
}
vec4 activateSource(vec4 x, SourceAffine a) {
  const vec4 y = x * a.scale + a.shift;
  return SOURCE_ACTIVATION == 2 ? nanMax(y, vec4(0.0)) : y;  // relu keeps NaN (nan.glsl)
}
// Window channels [c, c + 4) at pixel p of image img as the convolution reads them: zero outside
// the source (padding pads the activated source), activated inside.
vec4 readSourceChannels(ivec2 p, int img, int c) {
  if (SOURCE_ACTIVATION == 0) return readChannels(uSource, pc.source, p, img, c);
  const ivec2 size = textureSize(uSource, 0).xy;
  if (any(lessThan(p, ivec2(0))) || any(greaterThanEqual(p, size))) return vec4(0.0);
  return activateSource(readChannels(uSource, pc.source, p, img, c), sourceAffineOf(c));
}

// The residual's channels for destination layer t of image img at pixel p: its pixel, image and
// window channel are the destination's. Shaders that only write destinations starting at a layer
// (VKCNN_ALIGNED_DESTINATION) read one texel: the residual view starts at a layer too (views
// always do), so its layer t holds the same channels, and lanes past the window, which may hold
// anything, are dropped by writeSlice.
vec4 residualOf(ivec2 p, int img, int t) {
#ifdef VKCNN_ALIGNED_DESTINATION
  return texelFetch(uResidual, ivec3(p, img * pc.neuron.residualLayersPerImage + t), 0);
#else
  const ImageView residual = ImageView(pc.neuron.residualLayersPerImage,
                                       pc.destination.featureChannels,
                                       pc.neuron.residualChannelShift, 0);
  return readChannels(uResidual, residual, p, img, firstChannelOfSlice(pc.destination, t));
#endif
}

vec4 biasOf(ivec4 oc) { return vec4(bias[oc.x], bias[oc.y], bias[oc.z], bias[oc.w]); }

// convolutionOutput with the residual texel and the bias already read (residual unused unless
// pc.neuron.residual is set). A shader that defines VKCNN_EPILOGUE_OPS (a specialization constant:
// the neuron's type, + VKCNN_EPILOGUE_OPS_RESIDUAL with a residual, -1 unknown) has both fixed
// where it is known.
vec4 convolutionOutputOf(ivec4 oc, vec4 sum, vec4 residual, vec4 biasValues) {
#ifdef VKCNN_EPILOGUE_OPS
  if (VKCNN_EPILOGUE_OPS >= 0) {
    const int type = VKCNN_EPILOGUE_OPS & (VKCNN_EPILOGUE_OPS_RESIDUAL - 1);
    if ((VKCNN_EPILOGUE_OPS & VKCNN_EPILOGUE_OPS_RESIDUAL) != 0) sum += residual;
    return applyNeuronOfType(type, pc.neuron, sum + biasValues,
                             type == 18 ? neuronSlopes(oc, pc.neuron.slopeCount) : vec4(0.0));
  }
#endif
  if (pc.neuron.residual != 0) sum += residual;
  return applyNeuron4(pc.neuron, sum + biasValues, neuronSlopes(oc, pc.neuron.slopeCount));
}

// What destination layer t of image img holds at pixel p for the accumulated `sum` of output
// channels `oc` (clamped into range by the caller): bias, the residual, then the fused neuron.
vec4 convolutionOutput(ivec2 p, int img, int t, ivec4 oc, vec4 sum) {
#ifdef VKCNN_EPILOGUE_OPS
  const bool withResidual = VKCNN_EPILOGUE_OPS >= 0
                                ? (VKCNN_EPILOGUE_OPS & VKCNN_EPILOGUE_OPS_RESIDUAL) != 0
                                : pc.neuron.residual != 0;
#else
  const bool withResidual = pc.neuron.residual != 0;
#endif
  const vec4 residual = withResidual ? residualOf(p, img, t) : vec4(0.0);
  return convolutionOutputOf(oc, sum, residual, biasOf(oc));
}

#endif
