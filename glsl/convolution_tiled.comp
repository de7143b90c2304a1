#version 450
// Dense convolution in large matrix-unit tiles (convolution_tiled.glsl).
#extension GL_GOOGLE_include_directive : require
// vkcnn-build: reflect-separately (SPIRV-Cross cannot parse cooperative matrices)

#include "convolution_tiled.glsl"
