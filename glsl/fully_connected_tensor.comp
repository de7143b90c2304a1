#version 450
// Fully connected layers over a batch of Tensors, float32 weights (fully_connected_batched.glsl,
// FC_TENSORS): FullyConnected::encodeBatch.
#extension GL_GOOGLE_include_directive : require

#define FC_TENSORS
#include "fully_connected_batched.glsl"
