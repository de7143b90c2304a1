// Converts between element types (tensor_cast.comp from float32, tensor16_cast.comp from
// float16): the variant is the destination's type, the including file fixes the source's.
// args[0] the source, args[1] the destination, over one index space.
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"

#ifdef VKCNN_CAST_FROM_HALF
layout(set = 0, binding = 1, std430) readonly buffer Source { float16_t src[]; };
#else
layout(set = 0, binding = 1, std430) readonly buffer Source { float src[]; };
#endif
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

void main() {
  int index = flatIndex(256);
  if (index >= p.count) return;
  ivec4 off = outerOffsets(index);
  dst[off.y] = TENSOR_T(toStorage(float(src[off.x])));
}
