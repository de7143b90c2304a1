#version 450
// Fully connected layers over a batch of Tensors, float16 weights (fully_connected_batched.glsl,
// FC_TENSORS): FullyConnected::encodeBatch in float16 networks.
#extension GL_GOOGLE_include_directive : require

#define FC_TENSORS
#define FC_HALF_WEIGHTS
#include "fully_connected_batched.glsl"
