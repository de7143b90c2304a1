#version 450
// convolution_tiled.glsl with the reduction split over the dispatch's z workgroups, the last of a
// tile's adding their partial sums in order.
#extension GL_GOOGLE_include_directive : require
// vkcnn-build: reflect-separately (SPIRV-Cross cannot parse cooperative matrices)

#define VKCNN_SPLIT_REDUCTION
#include "convolution_tiled.glsl"
