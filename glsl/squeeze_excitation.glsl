// The body of squeeze_excitation.comp and squeeze_excitation_small.comp (which define
// SE_CHANNELS and SE_REDUCED, the largest C and R their shared arrays hold, first).
// Squeeze-and-excitation after the global average pool: y = x * gate(fc2(inner(fc1(mean)))) per
// image and channel. Each workgroup recomputes the small MLP from the pooled means (a few thousand
// multiply-adds, from L2) and scales its share of the map: a block's excitation and scale in one
// dispatch instead of four. Accumulation in float32.
#include "squeeze_excitation_interface.h"

layout(local_size_x = VKCNN_SE_LANES, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) uniform sampler2DArray uSource;
layout(set = 0, binding = 1) uniform sampler2DArray uMean;
layout(set = 0, binding = 2, VKCNN_OUTPUT_FORMAT) uniform VKCNN_OUTPUT_IMAGE uDestination;
layout(set = 0, binding = 3, std430) readonly buffer Weights { float weights[]; };
layout(push_constant) uniform Push { SqueezeExcitationPush pc; };

#include "image_io.glsl"
#include "neuron.glsl"

// The means, then (once the hidden layer is done) the gates of this workgroup's channels.
shared float sChannels[SE_CHANNELS + 4];
shared float sPartial[SE_REDUCED > VKCNN_SE_LANES ? SE_REDUCED : VKCNN_SE_LANES];
shared float sHidden[SE_REDUCED];

void main() {
  Geometry g = pc.geometry;
  int lane = int(gl_LocalInvocationIndex);
  int img = int(gl_WorkGroupID.z);
  int group = int(gl_WorkGroupID.x) / pc.pixelChunks;
  int chunk = int(gl_WorkGroupID.x) % pc.pixelChunks;
  int C = pc.channels, R = pc.reduced;

  for (int c = lane; c < C; c += VKCNN_SE_LANES)
    sChannels[c] = readChannel(uMean, pc.mean, ivec2(0), img, c);
  barrier();

  // Hidden unit j's dot product split over S lanes (R * S <= lanes when R is small), lane s
  // summing channels s, s + S, ...: every lane busy, short chains of dependent loads.
  int S = clamp(VKCNN_SE_LANES / R, 1, 64);
  for (int p = lane; p < R * S; p += VKCNN_SE_LANES) {
    int j = p / S, s = p % S;
    float sum = 0.0;
    for (int c = s; c < C; c += S) sum += weights[j * C + c] * sChannels[c];
    sPartial[p] = sum;
  }
  barrier();
  NeuronParams inner = NeuronParams(pc.innerType, 0, pc.innerA, pc.innerB, 0.0, 0, 0, 0);
  for (int j = lane; j < R; j += VKCNN_SE_LANES) {
    float sum = weights[R * C + j];
    for (int s = 0; s < S; ++s) sum += sPartial[j * S + s];
    sHidden[j] = applyNeuron(inner, sum, 0.0);
  }
  barrier();

  // Gates of this group's channels (fc2 is stored transposed: lanes read consecutive channels).
  int t0 = group * pc.layersPerGroup;
  int t1 = min(t0 + pc.layersPerGroup, g.slices);
  NeuronParams gate = NeuronParams(pc.gateType, 0, pc.gateA, pc.gateB, 0.0, 0, 0, 0);
  int fc2 = R * C + R;
  for (int q = lane; q < (t1 - t0) * 4; q += VKCNN_SE_LANES) {
    int c = firstChannelOfSlice(pc.destination, t0 + q / 4) + q % 4;
    float value = 0.0;
    if (c >= 0 && c < C) {
      float sum = weights[fc2 + R * C + c];
      for (int j = 0; j < R; ++j) sum += weights[fc2 + j * C + c] * sHidden[j];
      value = applyNeuron(gate, sum, 0.0);
    }
    sChannels[q] = value;
  }
  barrier();

  // Scale this chunk's pixels of the group's layers.
  int pixels = g.clipWidth * g.clipHeight;
  int p0 = chunk * pc.pixelsPerChunk;
  int count = min(p0 + pc.pixelsPerChunk, pixels) - p0;
  if (count <= 0) return;
  for (int i = lane; i < (t1 - t0) * count; i += VKCNN_SE_LANES) {
    int t = t0 + i / count;
    int p = p0 + i % count;
    ivec2 at = ivec2(p % g.clipWidth, p / g.clipWidth);
    int q = 4 * (t - t0);
    vec4 scale = vec4(sChannels[q], sChannels[q + 1], sChannels[q + 2], sChannels[q + 3]);
    vec4 x = readChannels(uSource, pc.source, at + ivec2(g.offsetX, g.offsetY), img,
                          firstChannelOfSlice(pc.destination, t));
    writeSlice(pc.destination, ivec2(g.clipX, g.clipY) + at, img, t, x * scale);
  }
}
