#version 450
// Sliced image layers into a tensor view: element (n, c, y, x) at args[0].offset + n*s0 + c*s1 +
// y*s2 + x*s3, whatever order the view keeps the axes in (NCHW, NHWC, ...). The variant is the
// tensor's element type (the image is sampled, whatever its format).
//
// One invocation per texel, the pixels of a layer flattened along x (as tensor_to_image.glsl):
// each of the 4 channel stores of a warp writes consecutive elements of an NCHW tensor.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1) uniform sampler2DArray uSource;
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// i0 width, count pixels (width * height), op: channel shift of the first channel in its layer,
// flags: layers per image in the bound view, innerCount: channels. Workgroups: x over the pixels
// (looped when there are more), y the slice, z the image.
void main() {
  int t = int(gl_WorkGroupID.y), img = int(gl_WorkGroupID.z);
  ivec4 s = p.args[0].strides[0];
  int c0 = 4 * t - p.op;
  int k0 = max(0, -c0), k1 = min(4, p.innerCount - c0);
  int first = p.args[0].offset + img * s.x + c0 * s.y;
  int layer = img * p.flags + t;
  int step = int(gl_NumWorkGroups.x) * 64;
  for (int q = int(gl_GlobalInvocationID.x); q < p.count; q += step) {
    int y = q / p.i0, x = q - y * p.i0;
    vec4 texel = texelFetch(uSource, ivec3(x, y, layer), 0);
    int base = first + y * s.z + x * s.w;
    for (int k = 0; k < 4; ++k)
      if (k >= k0 && k < k1) dst[base + k * s.y] = TENSOR_T(toStorage(texel[k]));
  }
}
