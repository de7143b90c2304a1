#version 450
// Fully connected (MPSCNNFullyConnected): the convolution of convolution.glsl with a window that
// spans the source. The output is one pixel per image, so a workgroup spans output slices instead
// of pixels, which would leave 63 of 64 invocations idle.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 1, local_size_y = 1, local_size_z = 64) in;

#include "convolution.glsl"
