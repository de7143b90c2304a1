#version 450
// Standalone neuron, and the copy behind concatenation (type none at a channel offset).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(set = 0, binding = 2, std430) readonly buffer Slopes { float slopes[]; };
#define VKCNN_NEURON_SLOPES
layout(push_constant) uniform Push { NeuronPush pc; };

#include "image_io.glsl"
#include "neuron.glsl"

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  ivec2 dst = ivec2(g.clipX, g.clipY) + gid.xy;
  ivec2 src = gid.xy + ivec2(g.offsetX, g.offsetY);
  int c0 = firstChannelOfSlice(pc.destination, t);
  vec4 x = readChannels(uSource, pc.source, src, img, c0);
  const vec4 slope = neuronSlopes(ivec4(c0) + ivec4(0, 1, 2, 3), pc.neuron.slopeCount);
  writeSlice(pc.destination, dst, img, t, applyNeuron4(pc.neuron, x, slope));
}
