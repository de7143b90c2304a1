#version 450
// y = a op b with numpy broadcasting: args[0] a, args[1] b (stride 0 along broadcast axes),
// args[2] the destination.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "nan.glsl"
#include "tensor.glsl"

layout(set = 0, binding = 1, std430) readonly buffer A { TENSOR_T a[]; };
layout(set = 0, binding = 2, std430) readonly buffer B { TENSOR_T b[]; };
layout(set = 0, binding = 3, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// x^z as C's pow gives it (numpy's, PyTorch's): GLSL's is undefined for x < 0, for x = 0 with
// z <= 0 and for NaN (lavapipe's pow(NaN, z) is 0, its pow(0, -1.5) 0).
float powC(float x, float z) {
  if (z == 0.0 || x == 1.0) return 1.0;  // NaN included
  if (isnan(x) || isnan(z)) return x + z;
  const bool integral = z == floor(z);  // +-inf too
  const bool odd = integral && !isinf(z) && mod(z, 2.0) == 1.0;
  const bool negative = (floatBitsToUint(x) >> 31) != 0u;  // -0 too
  const float inf = uintBitsToFloat(0x7F800000u);
  if (x == 0.0) return z > 0.0 ? (odd ? x : 0.0) : (odd && negative ? -inf : inf);
  const float r = pow(abs(x), z);
  if (!negative) return r;
  if (isinf(x) && !integral) return z > 0.0 ? inf : 0.0;
  return integral ? (odd ? -r : r) : uintBitsToFloat(0x7FC00000u);
}

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
    case VKCNN_TENSOR_BINARY_POW: y = powC(x, z); break;
    // NaN wins, as in torch.maximum / minimum (GLSL's max may return the other operand).
    case VKCNN_TENSOR_BINARY_MAX: y = nanMax(x, z); break;
    case VKCNN_TENSOR_BINARY_MIN: y = nanMin(x, z); break;
    case VKCNN_TENSOR_BINARY_EQUAL: y = x == z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_LESS: y = x < z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_GREATER: y = x > z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_LESS_OR_EQUAL: y = x <= z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_GREATER_OR_EQUAL: y = x >= z ? 1.0 : 0.0; break;
    case VKCNN_TENSOR_BINARY_PRELU: y = x >= 0.0 ? x : x * z; break;
  }
  dst[off.z] = TENSOR_T(toStorage(y));
}
