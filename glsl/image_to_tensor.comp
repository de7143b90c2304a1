#version 450
// Sliced image layers into a tensor view: element (n, c, y, x) at args[0].offset + n*s0 + c*s1 +
// y*s2 + x*s3, whatever order the view keeps the axes in (NCHW, NHWC, ...). The variant is the
// tensor's element type (the image is sampled, whatever its format).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "tensor.glsl"

layout(set = 0, binding = 1) uniform sampler2DArray uSource;
layout(set = 0, binding = 2, std430) writeonly buffer Destination { TENSOR_T dst[]; };

// i0 width, i1 height, i2 images, i3 slices per image, op: channel shift of the first channel in
// its layer, flags: layers per image in the bound view, innerCount: channels.
void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  if (gid.x >= p.i0 || gid.y >= p.i1 || gid.z >= p.i2 * p.i3) return;
  int img = gid.z / p.i3;
  int t = gid.z % p.i3;
  vec4 texel = texelFetch(uSource, ivec3(gid.xy, img * p.flags + t), 0);
  ivec4 s = p.args[0].strides[0];
  int base = p.args[0].offset + img * s.x + gid.y * s.z + gid.x * s.w;
  int c0 = 4 * t - p.op;
  for (int k = 0; k < 4; ++k) {
    int c = c0 + k;
    if (c < 0 || c >= p.innerCount) continue;
    dst[base + c * s.y] = TENSOR_T(toStorage(texel[k]));
  }
}
