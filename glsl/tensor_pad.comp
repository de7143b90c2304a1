#version 450
// ONNX Pad on any axes: output element c reads source element c - before along each axis,
// mapped back inside by the mode, or is the constant. args[0].strides: the source's strides,
// args[1].strides the destination's, args[2].strides the pads before each axis, innerShape the
// source's extents; shape the destination's.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// s modulo n in [0, n): GLSL leaves % of a negative operand undefined (NVIDIA's result differs
// from C's, which lavapipe gives).
int positiveMod(int s, int n) { return s >= 0 ? s % n : (n - 1) - ((-s - 1) % n); }

// op: 0 constant (a), 1 reflect, 2 edge, 3 wrap.
int mapInside(int s, int n) {
  if (p.op == 1) {
    if (n == 1) return 0;
    int period = 2 * (n - 1);
    s = positiveMod(s, period);
    return s < n ? s : period - s;
  }
  if (p.op == 2) return clamp(s, 0, n - 1);
  return positiveMod(s, n);  // wrap
}

void main() {
  int index = flatIndex(256);
  if (index >= p.count) return;
  int rest = index;
  int srcOffset = p.args[0].offset, dstOffset = p.args[1].offset;
  bool outside = false;
  for (int j = p.rank - 1; j >= 0; --j) {
    int extent = VKCNN_AT(p.shape, j);
    int c = rest % extent;
    rest /= extent;
    dstOffset += c * VKCNN_AT(p.args[1].strides, j);
    int n = VKCNN_AT(p.innerShape, j);
    int s = c - VKCNN_AT(p.args[2].strides, j);
    if (s < 0 || s >= n) {
      if (p.op == 0) outside = true;
      else s = mapInside(s, n);
    }
    srcOffset += s * VKCNN_AT(p.args[0].strides, j);
  }
  if (outside)
    dst[dstOffset] = TENSOR_T(toStorage(p.a));
  else
    dst[dstOffset] = src[srcOffset];
}
