#version 450
// y = a op b with numpy broadcasting: args[0] a, args[1] b (stride 0 along broadcast axes),
// args[2] the destination.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer A { TENSOR_T a[]; };
layout(set = 0, binding = 2, std430) readonly buffer B { TENSOR_T b[]; };
layout(set = 0, binding = 3, std430) writeonly buffer Destination { TENSOR_T dst[]; };

void main() {
  int index = flatIndex(256);
  if (index >= p.count) return;
  ivec4 off = outerOffsets(index);
  float x = float(a[off.x]);
  float z = float(b[off.y]);
  float y = 0.0;
  switch (p.op) {
    case VKCNN_TENSOR_BINARY_ADD: y = x + z; break;
    case VKCNN_TENSOR_BINARY_SUB: y = x - z; break;
    case VKCNN_TENSOR_BINARY_MUL: y = x * z; break;
    case VKCNN_TENSOR_BINARY_DIV: y = x / z; break;
    case VKCNN_TENSOR_BINARY_POW: {
      // GLSL's pow is undefined for x < 0; numpy's is defined for integral exponents.
      float r = pow(abs(x), z);
      bool odd = z == floor(z) && mod(z, 2.0) == 1.0;
      y = x < 0.0 ? (z == floor(z) ? (odd ? -r : r) : uintBitsToFloat(0x7FC00000u))
                  : (x == 0.0 && z == 0.0 ? 1.0 : r);
      break;
    }
    case VKCNN_TENSOR_BINARY_MAX: y = max(x, z); break;
    case VKCNN_TENSOR_BINARY_MIN: y = min(x, z); break;
    case VKCNN_TENSOR_BINARY_EQUAL: y = x == z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_LESS: y = x < z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_GREATER: y = x > z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_LESS_OR_EQUAL: y = x <= z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_GREATER_OR_EQUAL: y = x >= z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_PRELU: y = x >= 0.0 ? x : x * z; break;
  }
  dst[off.z] = TENSOR_T(toStorage(y));
}
