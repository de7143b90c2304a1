#version 450
#extension GL_GOOGLE_include_directive : require
// A float16 tensor into either element type (see tensor_cast.glsl).
#define VKCNN_CAST_FROM_HALF 1
#include "tensor_cast.glsl"
