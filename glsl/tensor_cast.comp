#version 450
#extension GL_GOOGLE_include_directive : require
// A float32 tensor into either element type (see tensor_cast.glsl).
#include "tensor_cast.glsl"
