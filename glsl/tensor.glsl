// Shared by the tensor kernels: the element type of the variant, the parameter block, and walking
// index spaces. Each kernel declares its buffers with TENSOR_T after including this file.
#ifndef VKCNN_TENSOR_GLSL
#define VKCNN_TENSOR_GLSL

// The tensor's element type follows the variant, unless the kernel fixes it (the variant then
// names an image format: tensor_to_image.comp).
#if defined(VKCNN_TENSOR_F16) || (defined(VKCNN_VARIANT_f16) && !defined(VKCNN_TENSOR_F32))
#define VKCNN_TENSOR_HALF 1
#endif

#ifdef VKCNN_TENSOR_HALF
#extension GL_EXT_shader_16bit_storage : require
#define TENSOR_T float16_t
#else
#define TENSOR_T float
#endif

#include "tensor_interface.h"

// Kernels with push constants of their own (the conversions) define VKCNN_TENSOR_PUSH: no
// parameter block, nor the index-space walks that read it.
#ifndef VKCNN_TENSOR_PUSH
layout(set = 0, binding = 0, std140) uniform Parameters { TensorParams p; };
#endif

#define VKCNN_AT(array, i) array[(i) >> 2][(i) & 3]

// The value float16 storage should hold: rounded to nearest even, finite values beyond the range
// saturated to +-65504 (as the host's writes; a conversion may truncate).
float toStorage(float value) {
#ifdef VKCNN_TENSOR_HALF
  uint bits = floatBitsToUint(value);
  if ((bits & 0x7F800000u) == 0x7F800000u) return value;
  uint rounded = (bits + 0xFFFu + ((bits >> 13) & 1u)) & ~0x1FFFu;
  return clamp(uintBitsToFloat(rounded), -65504.0, 65504.0);
#else
  return value;
#endif
}

// The flat item index of this invocation: dispatches spread over x and y (65535 groups each).
int flatIndex(uint localSize) {
  return int((gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * localSize +
             gl_LocalInvocationIndex);
}
int flatGroup() { return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x); }

#ifndef VKCNN_TENSOR_PUSH
// Element offsets of operands 0..3 for item `index` of the outer index space.
ivec4 outerOffsets(int index) {
  ivec4 off = ivec4(p.args[0].offset, p.args[1].offset, p.args[2].offset, p.args[3].offset);
  for (int j = p.rank - 1; j >= 0; --j) {
    int extent = VKCNN_AT(p.shape, j);
    int i = index % extent;
    index /= extent;
    off += i * ivec4(VKCNN_AT(p.args[0].strides, j), VKCNN_AT(p.args[1].strides, j),
                     VKCNN_AT(p.args[2].strides, j), VKCNN_AT(p.args[3].strides, j));
  }
  return off;
}

// Offsets of operands 0..3 for item `index` of the inner index space (no base offset).
ivec4 innerOffsets(int index) {
  ivec4 off = ivec4(0);
  for (int j = p.innerRank - 1; j >= 0; --j) {
    int extent = VKCNN_AT(p.innerShape, j);
    int i = index % extent;
    index /= extent;
    off += i * ivec4(VKCNN_AT(p.args[0].innerStrides, j), VKCNN_AT(p.args[1].innerStrides, j),
                     VKCNN_AT(p.args[2].innerStrides, j), VKCNN_AT(p.args[3].innerStrides, j));
  }
  return off;
}
#endif

#endif
