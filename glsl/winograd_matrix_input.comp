#version 450
// Winograd F(2x2,3x3), the input transform into float16 (winograd_transform_input.glsl), for
// the matrix units (winograd_matrix_gemm.comp): [16][rows][input channels, padded].
#extension GL_GOOGLE_include_directive : require

#define WINOGRAD_M 2
#define WINOGRAD_HALF_STORAGE
#include "winograd_transform_input.glsl"
