#version 450
// The split partial sums of fully_connected_matrix.comp added in order (deterministic), then the
// bias and the neuron into the destination Tensor (fully_connected_batched.glsl, FC_REDUCE):
// FullyConnected::encodeBatch on the matrix units.
#extension GL_GOOGLE_include_directive : require

#define FC_TENSORS
#define FC_REDUCE
#include "fully_connected_batched.glsl"
