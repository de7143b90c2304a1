#version 450
// Winograd F(4x4,3x3), the input transform into float32 (winograd_transform_input.glsl), for
// the portable GEMM (winograd_gemm.comp): [row][36][input slice].
#extension GL_GOOGLE_include_directive : require

#define WINOGRAD_M 4
#include "winograd_transform_input.glsl"
