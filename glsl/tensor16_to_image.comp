#version 450
#extension GL_GOOGLE_include_directive : require
// A float16 tensor view into sliced image layers (see tensor_to_image.glsl).
#define VKCNN_TENSOR_F16 1
#include "tensor_to_image.glsl"
