// Fully connected layers over a batch (MPSCNNFullyConnected, numberOfImages > 1): a workgroup owns
// 8 / K_ROWS destination slices for up to FC_IMAGES images and streams each slice's weights once
// for all of them; more images take more workgroups along x (their weights come from L2), each
// keeping FC_IMAGES accumulators in registers.
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
//
// FC_TENSORS: source and destination are Tensors in storage buffers of the variant's element type,
// [images][taps][channels] and [images][channels] (FullyConnected::encodeBatch: a batch held in
// several Images, one dispatch over all of them, so the weights are streamed once per batch).
//
// FC_REDUCE (with FC_TENSORS): fully_connected_matrix.comp's float32 partial sums, added split by
// split in order, then this file's store (bias, neuron) into the destination Tensor.
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
// Image path, one image (batch 1): a loop of its own, one accumulator and no skipped taps (a tap
// outside the source adds zero), where the loop of every batch keeps FC_IMAGES accumulators and
// guards each image's fetch: vgg16's fc6 0.095 -> 0.074 ms, fc7 0.033 -> 0.024 (H200). Loading
// 2, 4 or 8 steps before using them was no faster here: 0.074, 0.084, 0.097 ms (bench/NOTES.md,
// 2026-11-27, session 20). Its pipeline leaves out the batch loop, its partial sums are added by
// halves and its tap moves on without a division: fc6 86.5 -> 76.2 us, fc7 27.3 -> 25.6, fc8 10.2
// -> 9.2 (bench/NOTES.md, 2026-11-28, session 31).
layout(constant_id = 1) const bool ONE_IMAGE = false;

#ifdef FC_HALF_WEIGHTS
#define VKCNN_WEIGHT_TYPE uvec4  // 8 halves: two columns of a block
#endif
#ifdef FC_TENSORS
#define VKCNN_TENSOR_PUSH
#include "tensor.glsl"
#include "convolution_interface.h"
#ifndef VKCNN_WEIGHT_TYPE
#define VKCNN_WEIGHT_TYPE vec4
#endif
#ifdef VKCNN_TENSOR_HALF
#define TENSOR_T4 f16vec4
#else
#define TENSOR_T4 vec4
#endif
// Whole slices of 4 channels, one vector load per image and step (the host takes this path for
// channel counts that are multiples of 4 only). Element loads with bounds checks ran as fast
// (bench/NOTES.md, session 19); this is the simpler shader.
#ifdef FC_REDUCE
layout(set = 0, binding = 0, std430) readonly buffer Partials { vec4 splitSums[]; };
layout(push_constant) uniform Push { FullyConnectedMatrixPush pc; };
#else
layout(set = 0, binding = 0, std430) readonly buffer Source { TENSOR_T4 source[]; };
layout(set = 0, binding = 2, std430) readonly buffer Weights { VKCNN_WEIGHT_TYPE weights[]; };
layout(push_constant) uniform Push { FullyConnectedTensorPush pc; };
#endif
layout(set = 0, binding = 1, std430) writeonly buffer Destination { TENSOR_T destination[]; };
layout(set = 0, binding = 3, std430) readonly buffer Bias { float bias[]; };
layout(set = 0, binding = 4, std430) readonly buffer Slopes { float slopes[]; };
#define VKCNN_NEURON_SLOPES
#include "neuron.glsl"
#else
#include "convolution_bindings.glsl"
#endif

#ifndef FC_REDUCE
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

// One image adds one partial sum an invocation: a quarter of the memory. With 16 KiB its pipeline
// took 38 registers, six workgroups a multiprocessor and fc6's 1024 workgroups 1.3 waves; with 4
// KiB, 32 registers, eight, one wave: fc6 75 -> 59 us (H200, bench/NOTES.md, session 33).
shared vec4 partials[ONE_IMAGE ? 256 : 256 * FC_ROUND];
#endif

#ifdef FC_TENSORS
#ifndef FC_REDUCE
// Input channels [4s, 4s + 4) of tap `tap` of image img (sourceFirst and sourceChannels are
// multiples of 4).
vec4 sourceSlice(int img, int tap, int s) {
  return vec4(source[(pc.sourceFirst + (img * pc.taps + tap) * pc.sourceChannels) / 4 + s]);
}
#endif

// The result of destination slice `slice` of image img: bias, the neuron, stored channels only.
void storeSlice(int img, int slice, vec4 sum) {
  const int channels = pc.destinationChannels;
  const ivec4 oc = min(ivec4(4 * slice) + ivec4(0, 1, 2, 3), channels - 1);
  const vec4 b = vec4(bias[oc.x], bias[oc.y], bias[oc.z], bias[oc.w]);
  const vec4 v = applyNeuron4(pc.neuron, sum + b, neuronSlopes(oc, pc.neuron.slopeCount));
  const int at = pc.destinationFirst + img * channels + 4 * slice;
  destination[at] = TENSOR_T(toStorage(v.x));
  if (4 * slice + 1 < channels) destination[at + 1] = TENSOR_T(toStorage(v.y));
  if (4 * slice + 2 < channels) destination[at + 2] = TENSOR_T(toStorage(v.z));
  if (4 * slice + 3 < channels) destination[at + 3] = TENSOR_T(toStorage(v.w));
}
#else
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
// The result of destination slice `slice` of image img at the clip origin (convolutionOutput).
void storeSlice(int img, int slice, vec4 sum) {
  const ivec2 p = ivec2(pc.geometry.clipX, pc.geometry.clipY);
  const int oc0 = firstChannelOfSlice(pc.destination, slice);
  const ivec4 oc = clamp(ivec4(oc0) + ivec4(0, 1, 2, 3), 0, pc.destination.featureChannels - 1);
  writeSlice(pc.destination, p, img, slice, convolutionOutput(p, img, slice, oc, sum));
}
#endif

#ifdef FC_REDUCE
void main() {
  const int slice = int(gl_GlobalInvocationID.x), img = int(gl_GlobalInvocationID.y);
  if (slice >= (pc.destinationChannels + 3) / 4 || img >= pc.imageCount) return;
  const int columnsQ = pc.partialColumns / 4;
  vec4 sum = vec4(0.0);
  for (int s = 0; s < pc.splits; ++s)
    sum += splitSums[pc.partialsFirst / 4 + (s * pc.partialRows + img) * columnsQ + slice];
  storeSlice(img, slice, sum);
}
#else
void main() {
  const int lid = int(gl_LocalInvocationID.x);
  const int row = lid >> 5, lane = lid & 31;
  const int slicesPerGroup = 8 / K_ROWS;
  const int t0 = int(gl_WorkGroupID.y) * slicesPerGroup;
  const int t = t0 + row / K_ROWS;
  const int img0 = int(gl_WorkGroupID.x) * FC_IMAGES;
#ifdef FC_TENSORS
  const int imageCount = pc.imageCount, slices = pc.slices;
  const int S = (pc.sourceChannels + 3) / 4;
  const int K = pc.taps * S;
#else
  const Geometry g = pc.geometry;
  const ConvolutionParams cp = pc.convolution;
  const int imageCount = g.imageCount, slices = g.slices;
  const int S = (cp.inputChannelsPerGroup + 3) / 4;
  const int K = cp.kernelWidth * cp.kernelHeight * S;
  const ivec2 size = textureSize(uSource, 0).xy;
  const ivec2 origin = ivec2(g.offsetX, g.offsetY);
  const bool aligned = pc.source.channelShift == 0;
  if (ONE_IMAGE) {
    // One image: one accumulator, no skipped taps (a tap outside the source adds zero), and the
    // slice's partial sums added by halves (a fixed order: the same bits every run) instead of
    // one invocation adding 32 x K_ROWS of them in turn. Returning here, the pipeline leaves out
    // the batch loop below and its FC_IMAGES accumulators, which set the registers (80 with
    // them) and so how many workgroups, and weight loads in flight, a multiprocessor holds.
    vec4 sum = vec4(0.0);
    if (t < slices) {
      // The tap and slice of step k move on by a fixed step, without a division a step.
      const int step = 32 * K_ROWS, tapStep = step / S, sliceStep = step - tapStep * S;
      int k = (row % K_ROWS) * 32 + lane;
      int s = k % S, tap = k / S;
      ivec2 at = ivec2(tap % cp.kernelWidth, tap / cp.kernelWidth);
      for (; k < K; k += step) {
        const ivec2 p = origin + at;
        const vec4 x = all(greaterThanEqual(p, ivec2(0))) && all(lessThan(p, size))
                           ? sourceSlice(p, img0, s, aligned)
                           : vec4(0.0);
        sum += weightBlock(t * K + k) * x;
        s += sliceStep;
        at.x += tapStep + (s >= S ? 1 : 0);
        s -= s >= S ? S : 0;
        while (at.x >= cp.kernelWidth) at += ivec2(-cp.kernelWidth, 1);
      }
    }
    partials[lid] = sum;
    barrier();
    const int segment = 32 * K_ROWS, m = lid % segment;
    for (int width = segment / 2; width > 0; width /= 2) {
      if (m < width) partials[lid] += partials[lid + width];
      barrier();
    }
    if (m == 0 && t < slices) storeSlice(img0, t, partials[lid]);
    return;
  }
#endif
  const int n = min(FC_IMAGES, imageCount - img0);

  vec4 acc[FC_IMAGES];
  [[unroll]] for (int i = 0; i < FC_IMAGES; ++i) acc[i] = vec4(0.0);
  if (t < slices) {
    int k = (row % K_ROWS) * 32 + lane;
#ifdef FC_TENSORS
    // Two steps at a time, their loads first: the loop waits on its loads (run 4, session 19);
    // the sums are added in the order of one step at a time.
    const int stride = 32 * K_ROWS;
    for (; k + stride < K; k += 2 * stride) {
      const int k1 = k + stride;
      const int tap0 = k / S, s0 = k - tap0 * S, tap1 = k1 / S, s1 = k1 - tap1 * S;
      const mat4 W0 = weightBlock(t * K + k), W1 = weightBlock(t * K + k1);
      vec4 x0[FC_IMAGES], x1[FC_IMAGES];
      [[unroll]] for (int i = 0; i < FC_IMAGES; ++i) {
        x0[i] = i < n ? sourceSlice(img0 + i, tap0, s0) : vec4(0.0);
        x1[i] = i < n ? sourceSlice(img0 + i, tap1, s1) : vec4(0.0);
      }
      [[unroll]] for (int i = 0; i < FC_IMAGES; ++i) acc[i] = acc[i] + W0 * x0[i] + W1 * x1[i];
    }
    if (k < K) {
      const int tap = k / S, s = k - tap * S;
      const mat4 W = weightBlock(t * K + k);
      [[unroll]] for (int i = 0; i < FC_IMAGES; ++i) if (i < n) acc[i] +=
          W * sourceSlice(img0 + i, tap, s);
    }
#else
    for (; k < K; k += 32 * K_ROWS) {
      const int tap = k / S, s = k - tap * S;
      const ivec2 p = origin + ivec2(tap % cp.kernelWidth, tap / cp.kernelWidth);
      if (any(lessThan(p, ivec2(0))) || any(greaterThanEqual(p, size))) continue;
      const mat4 W = weightBlock(t * K + k);
      [[unroll]] for (int i = 0; i < FC_IMAGES; ++i) if (i < n) acc[i] +=
          W * sourceSlice(p, img0 + i, s, aligned);
    }
#endif
  }

  // Slice j of the group sums the partials of invocations [j * 32 * K_ROWS, +32 * K_ROWS).
  [[unroll]] for (int r = 0; r < FC_IMAGES / FC_ROUND; ++r) {
    if (r * FC_ROUND >= n) break;  // n is the workgroup's: the barriers stay uniform
    [[unroll]] for (int q = 0; q < FC_ROUND; ++q) partials[lid * FC_ROUND + q] =
        acc[r * FC_ROUND + q];
    barrier();
    if (lid < slicesPerGroup * FC_ROUND) {
      const int j = lid / FC_ROUND, q = lid % FC_ROUND, i = r * FC_ROUND + q;
      const int slice = t0 + j;
      if (i < n && slice < slices) {
        vec4 sum = vec4(0.0);
        const int first = j * 32 * K_ROWS;
        for (int m = 0; m < 32 * K_ROWS; ++m) sum += partials[(first + m) * FC_ROUND + q];
        storeSlice(img0 + i, slice, sum);
      }
    }
    barrier();
  }
}

#endif  // FC_REDUCE

#endif
