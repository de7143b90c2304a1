// Fully connected layers over a batch (MPSCNNFullyConnected, numberOfImages > 1): a workgroup owns
// 8 / K_ROWS destination slices for up to FC_IMAGES images and streams each slice's weights once
// for all of them. FC_IMAGES is small because a graph runs a batch in chunks that fit 2048 array
// layers per image: a 4096-channel output is 1024 layers, so vgg16 sees 2 images per dispatch.
//
// The 256 invocations form 8 rows of 32; K_ROWS consecutive rows share a slice and split its
// reduction k = tap * S + s (S input slices per tap), invocation i of them taking k = i, i + 32 *
// K_ROWS, ...: neighbouring invocations read neighbouring weight blocks (coalesced), and each keeps
// FC_IMAGES accumulators. The partial sums meet in shared memory, FC_ROUND images at a time, and
// are added in a fixed order (deterministic).
//
// The host picks this shader only for a 1x1 destination region starting at a layer; weights are
// convolution.glsl's mat4 blocks [outputSlice][k], as float32 or (FC_HALF_WEIGHTS) float16: half
// the bytes to stream for float16 networks.
#ifndef VKCNN_FULLY_CONNECTED_BATCHED_GLSL
#define VKCNN_FULLY_CONNECTED_BATCHED_GLSL
#extension GL_EXT_control_flow_attributes : require

// Unrolled, fixed-size accumulator arrays: a bound given by a specialization constant would not
// be unrolled by the driver, which then keeps the array in local memory.
#define FC_IMAGES 8
#define FC_ROUND 4
#define VKCNN_ALIGNED_DESTINATION

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
// Rows of 32 invocations per destination slice: 1, 2, 4 or 8 (the host fills the device).
layout(constant_id = 0) const int K_ROWS = 1;

#ifdef FC_HALF_WEIGHTS
#define VKCNN_WEIGHT_TYPE uvec4  // 8 halves: two columns of a block
#endif
#include "convolution_bindings.glsl"

// Weight block b: column c holds input channel 4s + c for the slice's 4 output channels.
mat4 weightBlock(int b) {
#ifdef FC_HALF_WEIGHTS
  const uvec4 lo = weights[2 * b], hi = weights[2 * b + 1];
  return mat4(vec4(unpackHalf2x16(lo.x), unpackHalf2x16(lo.y)),
              vec4(unpackHalf2x16(lo.z), unpackHalf2x16(lo.w)),
              vec4(unpackHalf2x16(hi.x), unpackHalf2x16(hi.y)),
              vec4(unpackHalf2x16(hi.z), unpackHalf2x16(hi.w)));
#else
  return mat4(weights[4 * b], weights[4 * b + 1], weights[4 * b + 2], weights[4 * b + 3]);
#endif
}

shared vec4 partials[256 * FC_ROUND];

// Input channels [4s, 4s + 4) of the window at pixel p of image img; zero past the window's
// channels. `aligned`: the window starts at a layer (channelShift 0).
vec4 sourceSlice(ivec2 p, int img, int s, bool aligned) {
  const int layer = img * pc.source.layersPerImage;
  const int channels = pc.source.featureChannels;
  if (aligned && 4 * s + 4 <= channels) return texelFetch(uSource, ivec3(p, layer + s), 0);
  // The window starts inside a layer, or this is its last, partial slice: channel c of the slice
  // is component shift + c of two consecutive layers (constant indices, no local memory).
  const int shift = pc.source.channelShift;
  const int first = (4 * s + shift) >> 2;
  const int boundLayers = (shift + channels + 3) >> 2;
  const vec4 lo = texelFetch(uSource, ivec3(p, layer + first), 0);
  const vec4 hi =
      first + 1 < boundLayers ? texelFetch(uSource, ivec3(p, layer + first + 1), 0) : vec4(0.0);
  const int r = (4 * s + shift) & 3;
  vec4 x = r == 0   ? lo
           : r == 1 ? vec4(lo.yzw, hi.x)
           : r == 2 ? vec4(lo.zw, hi.xy)
                    : vec4(lo.w, hi.xyz);
  return mix(vec4(0.0), x, lessThan(ivec4(4 * s) + ivec4(0, 1, 2, 3), ivec4(channels)));
}

void main() {
  const Geometry g = pc.geometry;
  const ConvolutionParams cp = pc.convolution;
  const int lid = int(gl_LocalInvocationID.x);
  const int row = lid >> 5, lane = lid & 31;
  const int slicesPerGroup = 8 / K_ROWS;
  const int t0 = int(gl_WorkGroupID.y) * slicesPerGroup;
  const int t = t0 + row / K_ROWS;
  const int img0 = int(gl_WorkGroupID.x) * FC_IMAGES;
  const int n = min(FC_IMAGES, g.imageCount - img0);
  const int S = (cp.inputChannelsPerGroup + 3) / 4;
  const int K = cp.kernelWidth * cp.kernelHeight * S;
  const ivec2 size = textureSize(uSource, 0).xy;
  const ivec2 origin = ivec2(g.offsetX, g.offsetY);
  const bool aligned = pc.source.channelShift == 0;

  vec4 acc[FC_IMAGES];
  [[unroll]] for (int i = 0; i < FC_IMAGES; ++i) acc[i] = vec4(0.0);
  if (t < g.slices) {
    for (int k = (row % K_ROWS) * 32 + lane; k < K; k += 32 * K_ROWS) {
      const int tap = k / S, s = k - tap * S;
      const ivec2 p = origin + ivec2(tap % cp.kernelWidth, tap / cp.kernelWidth);
      if (any(lessThan(p, ivec2(0))) || any(greaterThanEqual(p, size))) continue;
      const mat4 W = weightBlock(t * K + k);
      [[unroll]] for (int i = 0; i < FC_IMAGES; ++i) if (i < n) acc[i] +=
          W * sourceSlice(p, img0 + i, s, aligned);
    }
  }

  // Slice j of the group sums the partials of invocations [j * 32 * K_ROWS, +32 * K_ROWS).
  const ivec2 p = ivec2(g.clipX, g.clipY);
  const int outputChannels = pc.destination.featureChannels;
  [[unroll]] for (int r = 0; r < FC_IMAGES / FC_ROUND; ++r) {
    if (r * FC_ROUND >= n) break;  // n is the workgroup's: the barriers stay uniform
    [[unroll]] for (int q = 0; q < FC_ROUND; ++q) partials[lid * FC_ROUND + q] =
        acc[r * FC_ROUND + q];
    barrier();
    if (lid < slicesPerGroup * FC_ROUND) {
      const int j = lid / FC_ROUND, q = lid % FC_ROUND, i = r * FC_ROUND + q;
      const int slice = t0 + j;
      if (i < n && slice < g.slices) {
        vec4 sum = vec4(0.0);
        const int first = j * 32 * K_ROWS;
        for (int m = 0; m < 32 * K_ROWS; ++m) sum += partials[(first + m) * FC_ROUND + q];
        const int oc0 = firstChannelOfSlice(pc.destination, slice);
        const ivec4 oc = clamp(ivec4(oc0) + ivec4(0, 1, 2, 3), 0, outputChannels - 1);
        writeSlice(pc.destination, p, img0 + i, slice,
                   convolutionOutput(p, img0 + i, slice, oc, sum));
      }
    }
    barrier();
  }
}

#endif
