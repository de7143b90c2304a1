#version 450
// Sliced image layers into a float32 NCHW or NHWC tensor in a storage buffer. Only tensor
// elements are written: the buffer's other bytes keep their contents.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "layout_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, std430) writeonly buffer Tensor { float tensor[]; };
layout(push_constant) uniform Push { LayoutPush pc; };

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
  // Layer t of the bound view holds window channels [4t - shift, +4).
  vec4 texel = texelFetch(uSource, ivec3(gid.xy, img * pc.image.layersPerImage + t), 0);
  int c0 = 4 * t - pc.image.channelShift;
  for (int k = 0; k < 4; ++k) {
    int c = c0 + k;
    if (c < 0 || c >= pc.channels) continue;
    tensor[pc.firstElement + elementIndex(img, c, gid.y, gid.x)] = texel[k];
  }
}
