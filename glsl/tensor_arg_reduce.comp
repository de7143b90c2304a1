#version 450
// ONNX ArgMax / ArgMin along one axis: the index (as a float) of the largest (smallest) element,
// the first or with select_last_index the last of equal ones. Outer index space: the other axes
// (args[0] the source, args[1] the destination); inner: the axis (args[0].innerStrides). One
// workgroup per position, or one invocation with VKCNN_TENSOR_SERIAL.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

shared float bestValue[128];
shared int bestIndex[128];

// op: 0 argmax, 1 argmin; i0: 1 selects the last of equal elements. A NaN beats every number
// for both, as in PyTorch's argmax/argmin (NaN propagates through max and min); among NaNs the
// rule for equal elements decides. Tested explicitly: ordered compares are false for NaN.
bool better(float v, int i, float w, int j) {  // (v, i) beats (w, j)
  if (j < 0) return true;
  const bool vNan = isnan(v), wNan = isnan(w);
  if (vNan || wNan) return vNan && (!wNan || (p.i0 != 0 ? i > j : i < j));
  if (v == w) return p.i0 != 0 ? i > j : i < j;
  return p.op == 0 ? v > w : v < w;
}

void main() {
  bool serial = (p.flags & VKCNN_TENSOR_SERIAL) != 0;
  int item = serial ? flatIndex(128) : flatGroup();
  if (item >= p.count) return;  // serial, or the whole workgroup before any barrier
  int lid = serial ? 0 : int(gl_LocalInvocationIndex);
  int step = serial ? 1 : 128;
  ivec4 base = outerOffsets(item);
  float v = 0.0;
  int index = -1;
  for (int j = lid; j < p.innerCount; j += step) {
    float x = float(src[base.x + j * p.args[0].innerStrides[0].x]);
    if (better(x, j, v, index)) {
      v = x;
      index = j;
    }
  }
  if (!serial) {
    bestValue[lid] = v;
    bestIndex[lid] = index;
    barrier();
    for (int s = 64; s > 0; s >>= 1) {
      if (lid < s && bestIndex[lid + s] >= 0 &&
          better(bestValue[lid + s], bestIndex[lid + s], bestValue[lid], bestIndex[lid])) {
        bestValue[lid] = bestValue[lid + s];
        bestIndex[lid] = bestIndex[lid + s];
      }
      barrier();
    }
    index = bestIndex[0];
  }
  if (lid == 0) dst[base.y] = TENSOR_T(float(index));
}
