#version 450
// ONNX Where: y = condition != 0 ? x : y, the three broadcast (args[0..2]) into args[3].
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Condition { TENSOR_T cond[]; };
layout(set = 0, binding = 2, std430) readonly buffer X { TENSOR_T x[]; };
layout(set = 0, binding = 3, std430) readonly buffer Y { TENSOR_T y[]; };
layout(set = 0, binding = 4, std430) writeonly buffer Destination { TENSOR_T dst[]; };

void main() {
  int index = flatIndex(256);
  if (index >= p.count) return;
  ivec4 off = outerOffsets(index);
  dst[off.w] = float(cond[off.x]) != 0.0 ? x[off.y] : y[off.z];
}
