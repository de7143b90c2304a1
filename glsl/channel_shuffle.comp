#version 450
// Channel shuffle: destination channel o = source channel (o % groups) * (C / groups) + o / groups.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "rearrange_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { ChannelShufflePush pc; };

#include "image_io.glsl"

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  ivec2 dst = ivec2(g.clipX, g.clipY) + gid.xy;
  ivec2 src = gid.xy + ivec2(g.offsetX, g.offsetY);
  int c0 = firstChannelOfSlice(pc.destination, t);
  vec4 y = vec4(0.0);
  for (int k = 0; k < 4; ++k) {
    int o = c0 + k;
    // Channels outside the window are masked by writeSlice; skip their reads.
    if (o < 0 || o >= pc.destination.featureChannels) continue;
    int c = (o % pc.groups) * pc.channelsPerGroup + o / pc.groups;
    y[k] = readChannel(uSource, pc.source, src, img, c);
  }
  writeSlice(pc.destination, dst, img, t, y);
}
