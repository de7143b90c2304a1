#version 450
// Global max and average pooling: one workgroup per (image, destination slice) reduces the whole
// source image in shared memory, so large images keep every lane busy. The lanes (a power of two,
// 64 to 1024: specialization constant 0) grow with the image, so that a 112x112 map is not left
// to 64 lanes per slice.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(local_size_x_id = 0) in;
#define VKCNN_GLOBAL_POOLING_LANES int(gl_WorkGroupSize.x)

#include "pooling_interface.h"

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(push_constant) uniform Push { GlobalPoolingPush pc; };

#include "image_io.glsl"
#include "nan.glsl"

// Sized by the workgroup, not by the largest one: 64 lanes (7x7 maps) take 2 KiB, not 32, so that
// a multiprocessor holds 32 of their workgroups instead of 7 (a 7x7 average pool at batch 32 was
// 27 us a dispatch, latency-bound; bench/NOTES.md, 2026-11-27, session 17).
shared vec4 sSum[gl_WorkGroupSize.x];
shared vec4 sMax[gl_WorkGroupSize.x];

void main() {
  Geometry g = pc.geometry;
  int z = int(gl_WorkGroupID.z);
  int img = z / g.slices;
  int t = z % g.slices;
  int lane = int(gl_LocalInvocationIndex);
  ivec2 size = textureSize(uSource, 0).xy;
  int total = size.x * size.y;
  int c0 = firstChannelOfSlice(pc.destination, t);

  vec4 sum = vec4(0.0);
  vec4 largest = vec4(uintBitsToFloat(0xff800000u));
  for (int i = lane; i < total; i += VKCNN_GLOBAL_POOLING_LANES) {
    vec4 v = readChannels(uSource, pc.source, ivec2(i % size.x, i / size.x), img, c0);
    sum += v;
    largest = nanMax(largest, v);  // a NaN anywhere is the result, as in PyTorch
  }
  sSum[lane] = sum;
  sMax[lane] = largest;
  barrier();
  for (int span = VKCNN_GLOBAL_POOLING_LANES / 2; span > 0; span >>= 1) {
    if (lane < span) {
      sSum[lane] += sSum[lane + span];
      sMax[lane] = nanMax(sMax[lane], sMax[lane + span]);
    }
    barrier();
  }
  vec4 result = pc.average != 0 ? sSum[0] / float(total) : sMax[0];
  for (int i = lane; i < g.clipWidth * g.clipHeight; i += VKCNN_GLOBAL_POOLING_LANES)
    writeSlice(pc.destination, ivec2(g.clipX + i % g.clipWidth, g.clipY + i / g.clipWidth), img, t,
               result);
}
