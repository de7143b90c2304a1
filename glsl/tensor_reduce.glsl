// Workgroup reductions for the tensor kernels that give one workgroup to each output item
// (tensor_reduce.comp, tensor_softmax.comp, tensor_layer_norm.comp).
#ifndef VKCNN_TENSOR_REDUCE_GLSL
#define VKCNN_TENSOR_REDUCE_GLSL

#define VKCNN_GROUP_SIZE 128
#define VKCNN_COMBINE_SUM 0
#define VKCNN_COMBINE_MAX 1
#define VKCNN_COMBINE_MIN 2
#define VKCNN_COMBINE_PROD 3

#include "nan.glsl"

shared float partial[VKCNN_GROUP_SIZE];

// Max and min propagate NaN (nan.glsl), as PyTorch's amax/amin and softmax do.
float combine(float a, float b, int mode) {
  if (mode == VKCNN_COMBINE_MAX) return nanMax(a, b);
  if (mode == VKCNN_COMBINE_MIN) return nanMin(a, b);
  if (mode == VKCNN_COMBINE_PROD) return a * b;
  return a + b;
}

float identityOf(int mode) {
  if (mode == VKCNN_COMBINE_MAX) return uintBitsToFloat(0xFF800000u);  // -inf
  if (mode == VKCNN_COMBINE_MIN) return uintBitsToFloat(0x7F800000u);  // +inf
  if (mode == VKCNN_COMBINE_PROD) return 1.0;
  return 0.0;
}

// Every invocation of the workgroup calls it; all get the combined value.
float groupReduce(float value, int mode) {
  uint lid = gl_LocalInvocationIndex;
  partial[lid] = value;
  barrier();
  for (uint s = VKCNN_GROUP_SIZE / 2; s > 0; s >>= 1) {
    if (lid < s) partial[lid] = combine(partial[lid], partial[lid + s], mode);
    barrier();
  }
  float r = partial[0];
  barrier();
  return r;
}

#endif
