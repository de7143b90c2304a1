#version 450
// Dense convolution on the matrix units (convolution_matrix.glsl), tiles for layers with many
// outputs: 64 pixels x 64 channels per workgroup, 4 warps of 32 x 32.
#extension GL_GOOGLE_include_directive : require
// vkcnn-build: reflect-separately (SPIRV-Cross cannot parse cooperative matrices)

#include "convolution_tiles.h"

#define WARPS_M VKCNN_MATRIX_LARGE_WARPS_M
#define WARPS_N VKCNN_MATRIX_LARGE_WARPS_N
#define FRAG_M VKCNN_MATRIX_LARGE_FRAG_M
#define FRAG_N VKCNN_MATRIX_LARGE_FRAG_N
#define SPLIT_K VKCNN_MATRIX_LARGE_SPLIT_K
#define K_STEPS 2
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#include "convolution_matrix.glsl"
