#version 450
// ONNX Gather: the output index space has the data's axes before `axis`, the indices' axes, then
// the data's axes after `axis`. args[0] walks the data (stride 0 along the indices' axes),
// args[1] the indices (stride 0 elsewhere), args[2] the destination. Indices are float32 holding
// integers; negative ones count from the end; one outside the axis gives NaN.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Data { TENSOR_T data[]; };
layout(set = 0, binding = 2, std430) readonly buffer Indices { float indices[]; };
layout(set = 0, binding = 3, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// i0: the data's stride along the gathered axis, i1: its extent.
void main() {
  int index = flatIndex(256);
  if (index >= p.count) return;
  ivec4 off = outerOffsets(index);
  int i = int(indices[off.y]);
  if (i < 0) i += p.i1;
  float value = uintBitsToFloat(0x7FC00000u);
  if (i >= 0 && i < p.i1) value = float(data[off.x + i * p.i0]);
  dst[off.z] = TENSOR_T(value);
}
