#version 450
// A reduction over any axes: one workgroup per output element. The outer index space walks the
// kept axes (args[0] the source, args[1] the destination), the inner one the reduced axes.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"
#include "tensor_reduce.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

float mapped(float x) {
  if (p.op == VKCNN_TENSOR_REDUCE_L1) return abs(x);
  if (p.op == VKCNN_TENSOR_REDUCE_L2 || p.op == VKCNN_TENSOR_REDUCE_SUM_SQUARE) return x * x;
  return x;
}

int modeOf(int op) {
  if (op == VKCNN_TENSOR_REDUCE_MAX || op == VKCNN_TENSOR_REDUCE_LOG_SUM_EXP)
    return VKCNN_COMBINE_MAX;
  if (op == VKCNN_TENSOR_REDUCE_MIN) return VKCNN_COMBINE_MIN;
  if (op == VKCNN_TENSOR_REDUCE_PROD) return VKCNN_COMBINE_PROD;
  return VKCNN_COMBINE_SUM;
}

float finish(float r, int base, bool serial) {
  if (p.op == VKCNN_TENSOR_REDUCE_LOG_SUM_EXP) {
    float m = isinf(r) ? 0.0 : r;
    float s = 0.0;
    int first = serial ? 0 : int(gl_LocalInvocationIndex);
    int step = serial ? 1 : VKCNN_GROUP_SIZE;
    for (int j = first; j < p.innerCount; j += step)
      s += exp(float(src[base + innerOffsets(j).x]) - m);
    if (!serial) s = groupReduce(s, VKCNN_COMBINE_SUM);
    return m + log(s);
  }
  if (p.op == VKCNN_TENSOR_REDUCE_MEAN) return r / float(p.innerCount);
  if (p.op == VKCNN_TENSOR_REDUCE_L2) return sqrt(r);
  if (p.op == VKCNN_TENSOR_REDUCE_LOG_SUM) return log(r);
  return r;
}

void main() {
  if ((p.flags & VKCNN_TENSOR_SERIAL) != 0) {
    // Few reduced elements: one invocation per output element.
    int item = flatIndex(VKCNN_GROUP_SIZE);
    if (item >= p.count) return;
    ivec4 o = outerOffsets(item);
    int mode = modeOf(p.op);
    float acc = identityOf(mode);
    for (int j = 0; j < p.innerCount; ++j)
      acc = combine(acc, mapped(float(src[o.x + innerOffsets(j).x])), mode);
    dst[o.y] = TENSOR_T(toStorage(finish(acc, o.x, true)));
    return;
  }
  int item = flatGroup();
  if (item >= p.count) return;  // the whole workgroup, before any barrier
  int lid = int(gl_LocalInvocationIndex);
  int base = outerOffsets(item).x;
  int mode = modeOf(p.op);
  float acc = identityOf(mode);
  for (int j = lid; j < p.innerCount; j += VKCNN_GROUP_SIZE)
    acc = combine(acc, mapped(float(src[base + innerOffsets(j).x])), mode);
  float r = finish(groupReduce(acc, mode), base, false);
  if (lid == 0) dst[outerOffsets(item).y] = TENSOR_T(toStorage(r));
}
