#version 450
// Dense convolution as implicit GEMM with two shared stages (convolution_gemm_staged.glsl), tiles
// for layers with many outputs (float32 at batch 32): 128 pixels x 32 slices per workgroup,
// 8 x 2 per invocation, 256 invocations (8 warps).
#extension GL_GOOGLE_include_directive : require

#include "convolution_tiles.h"

#define TILE_M VKCNN_GEMM_128X32W8_PIXELS
#define TILE_N VKCNN_GEMM_128X32W8_SLICES
#define THREAD_M 8
#define THREAD_N 2
#define K_CHUNK 4
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "convolution_gemm_staged.glsl"
