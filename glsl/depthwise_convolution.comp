#version 450
// Depthwise convolution (MPSCNNDepthWiseConvolutionDescriptor; a grouped convolution with one
// input channel per group): output channel o reads input channel o / multiplier only.
//
// Weights: float weights[kernelHeight][kernelWidth][outputChannels], so the 4 outputs of a slice
// load 4 neighbouring floats per tap at any destination channel offset.
//
// With one output channel per input channel and a source slice that starts at a layer, a kernel
// row of up to 5 taps is unrolled: its fetches are all issued before any is used (at clamped
// positions; taps outside the source count as zero). In the loop over taps, bounded by push
// constants, each fetch waited for the one before it (bench/NOTES.md, 2026-11-27, session 25).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

#define VKCNN_WEIGHT_TYPE float
#include "convolution_bindings.glsl"

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
  // The 4 outputs read at most 4 consecutive input channels, starting at ic.x.
  ivec4 ic = oc / cp.outputChannelsPerGroup;
  ivec4 lane = ic - ic.x;
  vec4 acc = vec4(0.0);
  const int shifted = ic.x + pc.source.channelShift;
  if (cp.outputChannelsPerGroup == 1 && cp.kernelWidth <= 5 && (shifted & 3) == 0 &&
      ic.x + 4 <= pc.source.featureChannels && oc0 >= 0 && oc0 + 4 <= outputChannels) {
    const int layer = img * pc.source.layersPerImage + (shifted >> 2);
    for (int ky = 0; ky < cp.kernelHeight; ++ky) {
      const int sy = origin.y + ky * cp.dilationY;
      if (sy < 0 || sy >= size.y) continue;
      vec4 x[5], w[5];
      [[unroll]] for (int kx = 0; kx < 5; ++kx) {
        const int sx = origin.x + kx * cp.dilationX;
        x[kx] = w[kx] = vec4(0.0);
        if (kx < cp.kernelWidth) {
          const vec4 texel = texelFetch(uSource, ivec3(clamp(sx, 0, size.x - 1), sy, layer), 0);
          if (sx >= 0 && sx < size.x)
            x[kx] = SOURCE_ACTIVATION != 0 ? activateSource(texel, sourceAffineOf(ic.x)) : texel;
          const int at = (ky * cp.kernelWidth + kx) * outputChannels + oc0;
          w[kx] = vec4(weights[at], weights[at + 1], weights[at + 2], weights[at + 3]);
        }
      }
      [[unroll]] for (int kx = 0; kx < 5; ++kx) acc += x[kx] * w[kx];
    }
    const ivec2 p = ivec2(g.clipX, g.clipY) + gid.xy;
    writeSlice(pc.destination, p, img, t, convolutionOutput(p, img, t, oc, acc));
    return;
  }
  for (int ky = 0; ky < cp.kernelHeight; ++ky) {
    int sy = origin.y + ky * cp.dilationY;
    if (sy < 0 || sy >= size.y) continue;
    for (int kx = 0; kx < cp.kernelWidth; ++kx) {
      int sx = origin.x + kx * cp.dilationX;
      if (sx < 0 || sx >= size.x) continue;
      vec4 x = readSourceChannels(ivec2(sx, sy), img, ic.x);
      int w = (ky * cp.kernelWidth + kx) * outputChannels;
      acc += vec4(x[lane.x], x[lane.y], x[lane.z], x[lane.w]) *
             vec4(weights[w + oc.x], weights[w + oc.y], weights[w + oc.z], weights[w + oc.w]);
    }
  }
  const ivec2 p = ivec2(g.clipX, g.clipY) + gid.xy;
  writeSlice(pc.destination, p, img, t, convolutionOutput(p, img, t, oc, acc));
}
