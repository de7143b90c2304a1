#version 450
// ONNX LayerNormalization: each position of the axes before `axis` (outer index space) is
// normalised over the axes from `axis` on (inner index space), then scaled and shifted:
// y = (x - mean) / sqrt(variance + epsilon) * scale + bias. args: 0 source, 1 scale, 2 bias,
// 3 destination; scale and bias broadcast over the normalised axes (stride 0 elsewhere).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"
#include "tensor_reduce.glsl"

layout(set = 0, binding = 1, std430) readonly buffer Source { TENSOR_T src[]; };
layout(set = 0, binding = 2, std430) readonly buffer Scale { TENSOR_T scale[]; };
layout(set = 0, binding = 3, std430) readonly buffer Bias { TENSOR_T bias[]; };
layout(set = 0, binding = 4, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// a: epsilon; flags bit 0: a bias is bound; VKCNN_TENSOR_SERIAL: one invocation per position
// (few normalised elements), else one workgroup.
void main() {
  bool serial = (p.flags & VKCNN_TENSOR_SERIAL) != 0;
  int item = serial ? flatIndex(VKCNN_GROUP_SIZE) : flatGroup();
  if (item >= p.count) return;  // serial, or the whole workgroup before any barrier
  int lid = serial ? 0 : int(gl_LocalInvocationIndex);
  int step = serial ? 1 : VKCNN_GROUP_SIZE;
  ivec4 base = outerOffsets(item);
  float s = 0.0;
  for (int j = lid; j < p.innerCount; j += step)
    s += float(src[base.x + innerOffsets(j).x]);
  if (!serial) s = groupReduce(s, VKCNN_COMBINE_SUM);
  float mean = s / float(p.innerCount);
  float v = 0.0;
  for (int j = lid; j < p.innerCount; j += step) {
    float d = float(src[base.x + innerOffsets(j).x]) - mean;
    v += d * d;
  }
  if (!serial) v = groupReduce(v, VKCNN_COMBINE_SUM);
  float variance = v / float(p.innerCount);
  float inv = 1.0 / sqrt(variance + p.a);
  for (int j = lid; j < p.innerCount; j += step) {
    ivec4 off = innerOffsets(j);
    float y = (float(src[base.x + off.x]) - mean) * inv * float(scale[base.y + off.y]);
    if ((p.flags & 1) != 0) y += float(bias[base.z + off.z]);
    dst[base.w + off.w] = TENSOR_T(toStorage(y));
  }
}
