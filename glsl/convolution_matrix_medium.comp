#version 450
// Dense convolution on the matrix units (convolution_matrix.glsl), tiles for mid-sized layers:
// 32 pixels x 32 channels per workgroup, the reduction split over 4 warps.
#extension GL_GOOGLE_include_directive : require
// vkcnn-build: reflect-separately (SPIRV-Cross cannot parse cooperative matrices)

#define WARPS_M 1
#define WARPS_N 1
#define FRAG_M 2
#define FRAG_N 2
#define SPLIT_K 4
#define K_STEPS 2
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#include "convolution_matrix.glsl"
