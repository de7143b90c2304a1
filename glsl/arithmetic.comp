#version 450
// Element-wise arithmetic with broadcasting of the secondary and a fused neuron:
// y = neuron(op(primaryScale * a, secondaryScale * b) + bias).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "elementwise_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uPrimary;
layout(set = 0, binding = 1) uniform sampler2DArray uSecondary;
layout(set = 0, binding = 2, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(set = 0, binding = 3, std430) readonly buffer Slopes { float slopes[]; };
#define VKCNN_NEURON_SLOPES
layout(push_constant) uniform Push { ArithmeticPush pc; };

#include "image_io.glsl"
#include "neuron.glsl"

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  ivec2 dst = ivec2(g.clipX, g.clipY) + gid.xy;
  ivec2 pa = gid.xy + ivec2(g.offsetX, g.offsetY);
  ivec2 pb = gid.xy + ivec2(pc.secondaryOffsetX, pc.secondaryOffsetY);
  if ((pc.broadcast & VKCNN_BROADCAST_X) != 0) pb.x = 0;
  if ((pc.broadcast & VKCNN_BROADCAST_Y) != 0) pb.y = 0;
  int imgB = (pc.broadcast & VKCNN_BROADCAST_IMAGES) != 0 ? 0 : img;
  int c0 = firstChannelOfSlice(pc.destination, t);
  vec4 a = pc.primaryScale * readChannels(uPrimary, pc.primary, pa, img, c0);
  vec4 b = pc.secondaryScale *
           ((pc.broadcast & VKCNN_BROADCAST_CHANNELS) != 0
                ? vec4(readChannel(uSecondary, pc.secondary, pb, imgB, 0))
                : readChannels(uSecondary, pc.secondary, pb, imgB, c0));
  vec4 r;
  switch (pc.operation) {
    case 0: r = a + b; break;
    case 1: r = a - b; break;
    case 2: r = a * b; break;
    default: r = a / b; break;  // channels outside the window may be 0/0; writeSlice drops them
  }
  r += pc.bias;
  NeuronParams n = NeuronParams(pc.neuronType, pc.slopeCount, pc.neuronA, pc.neuronB, pc.neuronC,
                                0, 0, 0);
  const vec4 slope = neuronSlopes(ivec4(c0) + ivec4(0, 1, 2, 3), pc.slopeCount);
  writeSlice(pc.destination, dst, img, t, applyNeuron4(n, r, slope));
}
