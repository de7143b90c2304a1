#version 450
// convolution_tiled.glsl over the pieces of a batch that the layer limit splits, in one dispatch:
// rows run over every piece's images, and each row reads and writes its own piece's images
// (convolution_bindings.glsl). One dispatch instead of one a piece spares each piece's partial
// last row tile and the waves' rounding (bench/NOTES.md, 2026-11-28, session 27).
#extension GL_GOOGLE_include_directive : require
// vkcnn-build: reflect-separately (SPIRV-Cross cannot parse cooperative matrices)

#define VKCNN_PIECES
#include "convolution_tiled.glsl"
