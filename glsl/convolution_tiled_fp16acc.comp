#version 450
// convolution_tiled.glsl with float16 accumulators (ConvolutionDescriptor::accumulatorPrecision
// float16): the float16-accumulate rate of the matrix units and the 256-wide tiles it allows.
#extension GL_GOOGLE_include_directive : require
// vkcnn-build: reflect-separately (SPIRV-Cross cannot parse cooperative matrices)

#define VKCNN_ACCUMULATE_FP16
#include "convolution_tiled.glsl"
