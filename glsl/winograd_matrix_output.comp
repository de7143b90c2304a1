#version 450
// Winograd F(2x2,3x3), the output transform (winograd_transform_output.glsl) of the matrix
// units' products (winograd_matrix_gemm.comp): [16][rows][output channels, padded].
#extension GL_GOOGLE_include_directive : require

#define WINOGRAD_M 2
#include "winograd_transform_output.glsl"
