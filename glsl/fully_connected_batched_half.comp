#version 450
// Fully connected layers over a batch, float16 weights (fully_connected_batched.glsl): the float16
// networks' choice.
#extension GL_GOOGLE_include_directive : require

#define FC_HALF_WEIGHTS
#include "fully_connected_batched.glsl"
