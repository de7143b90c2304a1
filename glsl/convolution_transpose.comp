#version 450
// Transposed convolution as a gather: each invocation computes one destination slice (4 output
// channels) of one pixel from the input pixels that map onto it, so no atomics are needed.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#include "convolution_transpose_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
// [output channel][kernelY][kernelX][ceil(inputsPerGroup / 4)]: 4 input channels of the output
// channel's group per vec4, zero past the group's last channel.
layout(set = 0, binding = 2, std430) readonly buffer Weights { vec4 weights[]; };
layout(set = 0, binding = 3, std430) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 4, std430) readonly buffer Slopes { float slopes[]; };
#define VKCNN_NEURON_SLOPES
layout(push_constant) uniform Push { ConvolutionTransposePush pc; };

#include "image_io.glsl"
#include "neuron.glsl"

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  ConvolutionTransposeParams P = pc.convolution;
  ivec2 q = gid.xy + ivec2(g.offsetX, g.offsetY);
  ivec2 size = textureSize(uSource, 0).xy;
  int outputs = pc.destination.featureChannels;
  int c0 = firstChannelOfSlice(pc.destination, t);
  int chunks = (P.inputsPerGroup + 3) / 4;
  // A slice's 4 channels may straddle groups when outputsPerGroup is not a multiple of 4.
  int groupFirst = max(c0, 0) / P.outputsPerGroup;
  int groupLast = min(c0 + 3, outputs - 1) / P.outputsPerGroup;

  vec4 acc = vec4(0.0);
  for (int ky = 0; ky < P.kernelY; ++ky) {
    int ty = q.y - ky * P.dilationY;
    if (ty < 0) break;  // later taps only move further up
    if (ty % P.strideY != 0) continue;
    int iy = ty / P.strideY;
    if (iy >= size.y) continue;
    for (int kx = 0; kx < P.kernelX; ++kx) {
      int tx = q.x - kx * P.dilationX;
      if (tx < 0) break;
      if (tx % P.strideX != 0) continue;
      int ix = tx / P.strideX;
      if (ix >= size.x) continue;
      for (int group = groupFirst; group <= groupLast; ++group) {
        for (int chunk = 0; chunk < chunks; ++chunk) {
          // Channels past the group's end read the next group but meet zero weights.
          vec4 x = readChannels(uSource, pc.source, ivec2(ix, iy), img,
                                group * P.inputsPerGroup + 4 * chunk);
          for (int k = 0; k < 4; ++k) {
            int o = c0 + k;
            if (o < 0 || o >= outputs || o / P.outputsPerGroup != group) continue;
            acc[k] += dot(x, weights[((o * P.kernelY + ky) * P.kernelX + kx) * chunks + chunk]);
          }
        }
      }
    }
  }
  const ivec4 o = clamp(ivec4(c0) + ivec4(0, 1, 2, 3), 0, outputs - 1);
  writeSlice(pc.destination, ivec2(g.clipX, g.clipY) + gid.xy, img, t,
             applyNeuron4(pc.neuron, acc + vec4(bias[o.x], bias[o.y], bias[o.z], bias[o.w]),
                          neuronSlopes(o, pc.neuron.slopeCount)));
}
