#version 450
// ONNX Resize along one axis (TensorResize runs one pass per resized axis, which is what the
// ONNX reference's separable interpolation computes). Item i of the dispatch is output position
// i % outExtent along the axis of outer item i / outExtent; args[0] the source (the axis' stride
// in i4), args[1] the destination (the axis' stride in i5).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// i0 input extent, i1 output extent, b cubic coefficient, c extrapolation value, innerCount bit 0:
// exclude_outside. The table holds, per output position, the source coordinate the host worked
// out in double precision (as ONNX's reference does; float32 would round some exact ties the
// other way): the index (floor, or the nearest mode's choice; INT_MIN: outside the crop) and the
// fraction's bits.
layout(set = 0, binding = 3, std430) readonly buffer Table { ivec2 table[]; };

float at(int base, int i) {
  return float(src[base + clamp(i, 0, p.i0 - 1) * p.i4]);
}

void main() {
  int index = flatIndex(256);
  if (index >= p.count * p.i1) return;
  int x = index % p.i1;
  ivec4 base = outerOffsets(index / p.i1);
  ivec2 entry = table[x];
  int i = entry.x;
  float t = intBitsToFloat(entry.y);
  float y;
  if (i == int(0x80000000u)) {
    y = p.c;
  } else if (p.op == VKCNN_TENSOR_RESIZE_NEAREST) {
    y = at(base.x, i);
  } else if (p.op == VKCNN_TENSOR_RESIZE_LINEAR) {
    y = (1.0 - t) * at(base.x, i) + t * at(base.x, i + 1);
  } else {
    float A = p.b;
    vec4 w = vec4(((A * (t + 1.0) - 5.0 * A) * (t + 1.0) + 8.0 * A) * (t + 1.0) - 4.0 * A,
                  ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0,
                  ((A + 2.0) * (1.0 - t) - (A + 3.0)) * (1.0 - t) * (1.0 - t) + 1.0,
                  ((A * (2.0 - t) - 5.0 * A) * (2.0 - t) + 8.0 * A) * (2.0 - t) - 4.0 * A);
    if ((p.innerCount & 1) != 0) {
      // exclude_outside: taps outside the input get no weight; the rest are renormalised.
      for (int k = 0; k < 4; ++k)
        if (i - 1 + k < 0 || i - 1 + k >= p.i0) w[k] = 0.0;
      w /= w.x + w.y + w.z + w.w;
    }
    y = 0.0;
    for (int k = 0; k < 4; ++k) y += w[k] * at(base.x, i - 1 + k);
  }
  dst[base.y + x * p.i5] = TENSOR_T(toStorage(y));
}
