#version 450
// Dense convolution as implicit GEMM (convolution_gemm.glsl), tiles for layers with many outputs:
// 64 pixels x 16 slices per workgroup, 4 x 2 per invocation.
#extension GL_GOOGLE_include_directive : require

#include "convolution_tiles.h"

#define TILE_M VKCNN_GEMM_LARGE_PIXELS
#define TILE_N VKCNN_GEMM_LARGE_SLICES
#define THREAD_M 4
#define THREAD_N 2
#define SPLIT_K VKCNN_GEMM_LARGE_SPLIT_K
#define K_CHUNK 8
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#include "convolution_gemm.glsl"
