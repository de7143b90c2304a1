#version 450
// Softmax or log-softmax along one axis: one workgroup per position of the other axes (outer
// index space; args[0] the source, args[1] the destination), the axis as the inner index space.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"
#include "tensor_reduce.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// op: 0 softmax, 1 log-softmax. flags VKCNN_TENSOR_SERIAL: one invocation per position (a short
// axis), else one workgroup.
void main() {
  bool serial = (p.flags & VKCNN_TENSOR_SERIAL) != 0;
  int item = serial ? flatIndex(VKCNN_GROUP_SIZE) : flatGroup();
  if (item >= p.count) return;  // serial, or the whole workgroup before any barrier
  int lid = serial ? 0 : int(gl_LocalInvocationIndex);
  int step = serial ? 1 : VKCNN_GROUP_SIZE;
  ivec4 base = outerOffsets(item);
  float m = uintBitsToFloat(0xFF800000u);
  for (int j = lid; j < p.innerCount; j += step)
    m = nanMax(m, float(src[base.x + innerOffsets(j).x]));  // NaN: a NaN row, as PyTorch
  if (!serial) m = groupReduce(m, VKCNN_COMBINE_MAX);
  float s = 0.0;
  for (int j = lid; j < p.innerCount; j += step)
    s += exp(float(src[base.x + innerOffsets(j).x]) - m);
  if (!serial) s = groupReduce(s, VKCNN_COMBINE_SUM);
  float logS = log(s);
  for (int j = lid; j < p.innerCount; j += step) {
    ivec4 off = innerOffsets(j);
    float x = float(src[base.x + off.x]) - m;
    float y = p.op == 1 ? x - logS : exp(x) / s;
    dst[base.y + off.y] = TENSOR_T(toStorage(y));
  }
}
