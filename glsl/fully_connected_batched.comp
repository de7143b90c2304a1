#version 450
// Fully connected layers over a batch, float32 weights (fully_connected_batched.glsl).
#extension GL_GOOGLE_include_directive : require

#include "fully_connected_batched.glsl"
