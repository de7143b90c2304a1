#version 450
// A float32 NCHW or NHWC tensor from a storage buffer into sliced image layers.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "layout_interface.h"

layout(set = 0, binding = 0, std430) readonly buffer Tensor { float tensor[]; };
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { LayoutPush pc; };

#include "image_io.glsl"

uint elementIndex(int n, int c, int y, int x) {
  uint C = uint(pc.channels), H = uint(pc.height), W = uint(pc.width);
  if (pc.dataLayout == VKCNN_LAYOUT_NHWC) return ((uint(n) * H + uint(y)) * W + uint(x)) * C + uint(c);
  return ((uint(n) * C + uint(c)) * H + uint(y)) * W + uint(x);
}

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  if (gid.x >= pc.width || gid.y >= pc.height || gid.z >= pc.imageCount * pc.slices) return;
  int img = gid.z / pc.slices;
  int t = gid.z % pc.slices;
  int c0 = firstChannelOfSlice(pc.image, t);
  vec4 v = vec4(0.0);
  for (int k = 0; k < 4; ++k) {
    int c = c0 + k;
    if (c < 0 || c >= pc.channels) continue;
    float x = tensor[pc.firstElement + elementIndex(img, c, gid.y, gid.x)];
#ifdef VKCNN_VARIANT_f16
    // Saturate as Image::writeBytes does: a finite value must not become an infinity.
    if (abs(x) > 65504.0 && !isinf(x)) x = sign(x) * 65504.0;
#endif
    v[k] = x;
  }
  writeSlice(pc.image, gid.xy, img, t, v);
}
