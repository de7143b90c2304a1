#version 450
// Dense convolution as implicit GEMM (convolution_gemm.glsl), tiles for layers with few outputs
// (late layers at batch 1): 16 pixels x 8 slices per workgroup, the reduction split 8 ways.
#extension GL_GOOGLE_include_directive : require

#include "convolution_tiles.h"

#define TILE_M VKCNN_GEMM_SMALL_PIXELS
#define TILE_N VKCNN_GEMM_SMALL_SLICES
#define THREAD_M 2
#define THREAD_N 2
#define SPLIT_K VKCNN_GEMM_SMALL_SPLIT_K
#define K_CHUNK 4
#define VKCNN_SLICE_AS_MULTIPLY_ADDS
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "convolution_gemm.glsl"
