// Grouped convolution, and any convolution writing at an unaligned destinationFeatureChannelOffset:
// each invocation computes one destination layer (4 output channels) at one pixel, looping over the
// window and the group's input channels. Dense convolutions at aligned offsets use the faster
// convolution_gemm.glsl.
//
// Weights: the mat4 blocks of convolution_gemm.glsl, [outputChannels / 4][tap][slicesPerGroup]:
// the group's input channels 4 to a column, output channels 4 to a block, zero-padded.
#ifndef VKCNN_CONVOLUTION_GLSL
#define VKCNN_CONVOLUTION_GLSL

#include "convolution_bindings.glsl"

// Group-relative input channels [4j, 4j + 4) of the group starting at window channel `base`.
// Channels past the group's end belong to the next group; their weights are zero, but they are
// masked anyway so that an infinity there cannot turn into NaN.
// Input channels [4s, 4s + 4) of the group for output channel oc at reduction step k = tap * S + s.
vec4 weightRow(int oc, int k, int K) {
  int base = ((oc >> 2) * K + k) * 4, r = oc & 3;
  return vec4(weights[base][r], weights[base + 1][r], weights[base + 2][r], weights[base + 3][r]);
}

vec4 readGroupSlice(ivec2 p, int img, int base, int j, int perGroup) {
  vec4 x = readSourceChannels(p, img, base + 4 * j);
  if (4 * j + 4 > perGroup)
    x = mix(vec4(0.0), x, lessThan(ivec4(4 * j) + ivec4(0, 1, 2, 3), ivec4(perGroup)));
  return x;
}

void main() {
  ivec3 gid = ivec3(gl_GlobalInvocationID);
  Geometry g = pc.geometry;
  if (gid.x >= g.clipWidth || gid.y >= g.clipHeight || gid.z >= g.imageCount * g.slices) return;
  ConvolutionParams cp = pc.convolution;
  int img = gid.z / g.slices;
  int t = gid.z % g.slices;
  ivec2 origin = gid.xy * ivec2(cp.strideX, cp.strideY) + ivec2(g.offsetX, g.offsetY);
  ivec2 size = textureSize(uSource, 0).xy;
  int outputChannels = pc.destination.featureChannels;
  int oc0 = firstChannelOfSlice(pc.destination, t);
  // Lanes outside the output channels compute a clamped channel; writeSlice drops them.
  ivec4 oc = clamp(ivec4(oc0) + ivec4(0, 1, 2, 3), 0, outputChannels - 1);
  int perGroup = cp.inputChannelsPerGroup;
  int slicesPerGroup = (perGroup + 3) / 4;
  int taps = cp.kernelWidth * cp.kernelHeight;
  int K = taps * slicesPerGroup;
  ivec4 group = oc / cp.outputChannelsPerGroup;
  vec4 acc = vec4(0.0);
  if (group.x == group.w && (oc0 & 3) == 0) {
    // The usual case: all 4 outputs read the same input channels and are one block of the
    // weights, whose 4 columns (one an input channel) multiply the texel: 4 loads a slice and
    // tap, where weightRow takes 16 (resnext50's 4-channel groups at batch 32 took 1.5x longer:
    // bench/NOTES.md, 2026-11-29, session 35).
    // Lanes past the output channels read the block's zero padding; writeSlice drops them.
    const int base = group.x * perGroup, block = (oc0 >> 2) * K * 4;
    for (int ky = 0; ky < cp.kernelHeight; ++ky) {
      const int sy = origin.y + ky * cp.dilationY;
      if (sy < 0 || sy >= size.y) continue;
      for (int kx = 0; kx < cp.kernelWidth; ++kx) {
        const int sx = origin.x + kx * cp.dilationX;
        if (sx < 0 || sx >= size.x) continue;
        const int w = block + (ky * cp.kernelWidth + kx) * slicesPerGroup * 4;
        for (int j = 0; j < slicesPerGroup; ++j) {
          const vec4 x = readGroupSlice(ivec2(sx, sy), img, base, j, perGroup);
          acc += mat4(weights[w + 4 * j], weights[w + 4 * j + 1], weights[w + 4 * j + 2],
                      weights[w + 4 * j + 3]) *
                 x;
        }
      }
    }
  } else if (group.x == group.w) {
    // All 4 outputs read the same input channels but straddle two blocks of the weights (an
    // unaligned destination offset): one load feeds 4 dot products.
    int base = group.x * perGroup;
    for (int ky = 0; ky < cp.kernelHeight; ++ky) {
      int sy = origin.y + ky * cp.dilationY;
      if (sy < 0 || sy >= size.y) continue;
      for (int kx = 0; kx < cp.kernelWidth; ++kx) {
        int sx = origin.x + kx * cp.dilationX;
        if (sx < 0 || sx >= size.x) continue;
        int w = (ky * cp.kernelWidth + kx) * slicesPerGroup;
        for (int j = 0; j < slicesPerGroup; ++j) {
          vec4 x = readGroupSlice(ivec2(sx, sy), img, base, j, perGroup);
          acc += vec4(dot(x, weightRow(oc.x, w + j, K)), dot(x, weightRow(oc.y, w + j, K)),
                      dot(x, weightRow(oc.z, w + j, K)), dot(x, weightRow(oc.w, w + j, K)));
        }
      }
    }
  } else {
    // The slice straddles groups (channels per group not a multiple of 4, or an unaligned
    // destination offset): each output reads its own group.
    for (int k = 0; k < 4; ++k) {
      int base = group[k] * perGroup;
      float sum = 0.0;
      for (int ky = 0; ky < cp.kernelHeight; ++ky) {
        int sy = origin.y + ky * cp.dilationY;
        if (sy < 0 || sy >= size.y) continue;
        for (int kx = 0; kx < cp.kernelWidth; ++kx) {
          int sx = origin.x + kx * cp.dilationX;
          if (sx < 0 || sx >= size.x) continue;
          int w = (ky * cp.kernelWidth + kx) * slicesPerGroup;
          for (int j = 0; j < slicesPerGroup; ++j)
            sum += dot(readGroupSlice(ivec2(sx, sy), img, base, j, perGroup),
                       weightRow(oc[k], w + j, K));
        }
      }
      acc[k] = sum;
    }
  }
  const ivec2 p = ivec2(g.clipX, g.clipY) + gid.xy;
  writeSlice(pc.destination, p, img, t, convolutionOutput(p, img, t, oc, acc));
}

#endif
