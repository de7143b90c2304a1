#version 450
// convolution_tiled_pieces.comp (a batch's pieces in one dispatch) with float16 accumulators
// (convolution_tiled_fp16acc.comp).
#extension GL_GOOGLE_include_directive : require
// vkcnn-build: reflect-separately (SPIRV-Cross cannot parse cooperative matrices)

#define VKCNN_PIECES
#define VKCNN_ACCUMULATE_FP16
#include "convolution_tiled.glsl"
