#version 450
// Dense convolution as implicit GEMM with two shared stages (convolution_gemm_staged.glsl): 128
// pixels x 16 slices per workgroup, 8 x 1 per invocation, 256 invocations (8 warps). The selector
// takes it where the 128 x 32 tile does not fit (fewer than 128 output channels, or too few of its
// tiles), in place of convolution_gemm.glsl's one-stage tiles (bench/NOTES.md, 2026-11-27).
#extension GL_GOOGLE_include_directive : require

#include "convolution_tiles.h"

#define TILE_M VKCNN_GEMM_128X16W8_PIXELS
#define TILE_N VKCNN_GEMM_128X16W8_SLICES
#define THREAD_M 8
#define THREAD_N 1
#define K_CHUNK 4
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "convolution_gemm_staged.glsl"
