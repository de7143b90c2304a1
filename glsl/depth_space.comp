#version 450
// ONNX DepthToSpace (DCR and CRD) and SpaceToDepth: each destination channel is one source channel
// at one pixel of a b x b block; rearrange_interface.h and vkcnn/rearrange.h give the formulas.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "rearrange_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { DepthSpacePush pc; };

#include "image_io.glsl"

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  ivec2 dst = ivec2(g.clipX, g.clipY) + gid.xy;
  int b = pc.blockSize;
  int c0 = firstChannelOfSlice(pc.destination, t);
  vec4 y = vec4(0.0);
  for (int k = 0; k < 4; ++k) {
    int o = c0 + k;
    if (o < 0 || o >= pc.destination.featureChannels) continue;
    ivec2 src;
    int c;
    if (pc.mode == VKCNN_SPACE_TO_DEPTH) {
      // o = (by * b + bx) * C + c
      int block = o / pc.depthChannels;
      c = o % pc.depthChannels;
      src = gid.xy * b + ivec2(g.offsetX, g.offsetY) + ivec2(block % b, block / b);
    } else {
      // gid is the position inside the depth-to-space output of the clip; >= 0, so / and % floor.
      ivec2 inBlock = gid.xy % b;
      src = gid.xy / b + ivec2(g.offsetX, g.offsetY);
      int blockIndex = inBlock.y * b + inBlock.x;
      c = pc.mode == VKCNN_DEPTH_TO_SPACE_DCR ? blockIndex * pc.depthChannels + o
                                                : o * b * b + blockIndex;
    }
    y[k] = readChannel(uSource, pc.source, src, img, c);
  }
  writeSlice(pc.destination, dst, img, t, y);
}
