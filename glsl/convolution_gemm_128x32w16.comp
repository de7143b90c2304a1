#version 450
// Dense convolution as implicit GEMM with two shared stages (convolution_gemm_staged.glsl): the
// 128 x 32 tile with 8 x 1 outputs per invocation and 512 invocations (16 warps), so that a
// workgroup must fit in 128 registers an invocation (the 8 x 2 one takes 189: one workgroup, 8
// warps, a multiprocessor).
#extension GL_GOOGLE_include_directive : require

#include "convolution_tiles.h"

#define TILE_M VKCNN_GEMM_128X32W16_PIXELS
#define TILE_N VKCNN_GEMM_128X32W16_SLICES
#define THREAD_M 8
#define THREAD_N 1
#define K_CHUNK 4
layout(local_size_x = 512, local_size_y = 1, local_size_z = 1) in;

#include "convolution_gemm_staged.glsl"
