#version 450
// Sliced image layers into a tensor view: element (n, c, y, x) of the tensor (TensorConversionPush
// in tensor_interface.h), whatever order the view keeps the axes in (NCHW, NHWC, ...). The
// variant is the tensor's element type (the image is sampled, whatever its format).
//
// One invocation per texel, the pixels of a layer flattened along x (as tensor_to_image.glsl):
// each of the 4 channel stores of a warp writes consecutive elements of an NCHW tensor.
// Parameters in push constants: the texel fetch waits on no parameter load.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#define VKCNN_TENSOR_PUSH 1
#include "tensor.glsl"

layout(push_constant) uniform Push { TensorConversionPush pc; };
layout(set = 0, binding = 1) uniform sampler2DArray uSource;
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// Workgroups: x over the pixels (looped when there are more), y the slice, z the image.
void main() {
  int t = int(gl_WorkGroupID.y), img = int(gl_WorkGroupID.z);
  ivec4 s = pc.strides;
  int c0 = 4 * t - pc.channelShift;
  int k0 = max(0, -c0), k1 = min(4, pc.channels - c0);
  int first = pc.offset + img * s.x + c0 * s.y;
  int layer = img * pc.layersPerImage + t;
  int step = int(gl_NumWorkGroups.x) * 64;
  for (int q = int(gl_GlobalInvocationID.x); q < pc.pixels; q += step) {
    int y = q / pc.width, x = q - y * pc.width;
    vec4 texel = texelFetch(uSource, ivec3(x, y, layer), 0);
    int base = first + y * s.z + x * s.w;
    for (int k = 0; k < 4; ++k)
      if (k >= k0 && k < k1) dst[base + k * s.y] = TENSOR_T(toStorage(texel[k]));
  }
}
