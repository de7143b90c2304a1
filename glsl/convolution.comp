#version 450
// Dense and grouped convolution (MPSCNNConvolution): 8x8 pixels per workgroup.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "convolution.glsl"
