#version 450
// Winograd F(4x4,3x3), the output transform (winograd_transform_output.glsl) of the portable
// GEMM's products (winograd_gemm.comp): [row][36][output slice].
#extension GL_GOOGLE_include_directive : require

#define WINOGRAD_M 4
#include "winograd_transform_output.glsl"
