#version 450
// y = f(x) over a tensor index space: args[0] the source, args[1] the destination. Also the copy
// behind TensorCopy, concatenation and slicing (VKCNN_TENSOR_UNARY_COPY).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "interface.h"
#include "tensor.glsl"
#include "neuron.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// op: VKCNN_TENSOR_UNARY_*; i0: the neuron type, a, b, c its parameters.
void main() {
  int index = flatIndex(256);
  if (index >= p.count) return;
  ivec4 off = outerOffsets(index);
  float x = float(src[off.x]);
  float y = x;
  switch (p.op) {
    case VKCNN_TENSOR_UNARY_NEURON: {
      NeuronParams n;
      n.type = p.i0;
      n.slopeCount = 0;
      n.a = p.a;
      n.b = p.b;
      n.c = p.c;
      y = applyNeuron(n, x, 0.0);
      break;
    }
    case VKCNN_TENSOR_UNARY_ERF: y = vkcnnErf(x); break;
    case VKCNN_TENSOR_UNARY_SQRT: y = sqrt(x); break;
    case VKCNN_TENSOR_UNARY_RECIPROCAL: y = 1.0 / x; break;
    case VKCNN_TENSOR_UNARY_NEGATE: y = -x; break;
    case VKCNN_TENSOR_UNARY_EXP: y = exp(x); break;
    case VKCNN_TENSOR_UNARY_LOG: y = log(x); break;
    case VKCNN_TENSOR_UNARY_ABS: y = abs(x); break;
    case VKCNN_TENSOR_UNARY_FLOOR: y = floor(x); break;
    case VKCNN_TENSOR_UNARY_CEIL: y = ceil(x); break;
    default: break;  // VKCNN_TENSOR_UNARY_COPY
  }
  dst[off.y] = TENSOR_T(toStorage(y));
}
