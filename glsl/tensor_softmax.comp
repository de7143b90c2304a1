#version 450
// Softmax or log-softmax along one axis: one workgroup per position of the other axes (outer
// index space; args[0] the source, args[1] the destination), the axis as the inner index space.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"
#include "tensor_reduce.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// op: 0 softmax, 1 log-softmax.
void main() {
  int item = flatGroup();
  if (item >= p.count) return;
  int lid = int(gl_LocalInvocationIndex);
  ivec4 base = outerOffsets(item);
  float m = uintBitsToFloat(0xFF800000u);
  for (int j = lid; j < p.innerCount; j += VKCNN_GROUP_SIZE)
    m = max(m, float(src[base.x + innerOffsets(j).x]));
  m = groupReduce(m, VKCNN_COMBINE_MAX);
  float s = 0.0;
  for (int j = lid; j < p.innerCount; j += VKCNN_GROUP_SIZE)
    s += exp(float(src[base.x + innerOffsets(j).x]) - m);
  s = groupReduce(s, VKCNN_COMBINE_SUM);
  float logS = log(s);
  for (int j = lid; j < p.innerCount; j += VKCNN_GROUP_SIZE) {
    ivec4 off = innerOffsets(j);
    float x = float(src[base.x + off.x]) - m;
    float y = p.op == 1 ? x - logS : exp(x) / s;
    dst[base.y + off.y] = TENSOR_T(toStorage(y));
  }
}
