// Reading and writing sliced CNN images: 4 channels per array layer, images one after another.
#ifndef VKCNN_IMAGE_IO_GLSL
#define VKCNN_IMAGE_IO_GLSL

// Channels [c, c + 4) of the window of image `img` at pixel p. Zero outside the image or window:
// explicit, because out-of-range reads under robustness may return (0,0,0,1).
vec4 readChannels(sampler2DArray s, ImageView v, ivec2 p, int img, int c) {
  ivec2 size = textureSize(s, 0).xy;
  if (any(lessThan(p, ivec2(0))) || any(greaterThanEqual(p, size))) return vec4(0.0);
  int base = img * v.layersPerImage;
  int sc = c + v.channelShift;
  if ((sc & 3) == 0 && c >= 0 && c + 4 <= v.featureChannels)
    return texelFetch(s, ivec3(p, base + (sc >> 2)), 0);
  vec4 r = vec4(0.0);
  int loaded = -1;
  vec4 texel = vec4(0.0);
  for (int k = 0; k < 4; ++k) {
    int ch = c + k;
    if (ch < 0 || ch >= v.featureChannels) continue;
    int layer = (ch + v.channelShift) >> 2;
    if (layer != loaded) {
      texel = texelFetch(s, ivec3(p, base + layer), 0);
      loaded = layer;
    }
    r[k] = texel[(ch + v.channelShift) & 3];
  }
  return r;
}

// One channel of the window (zero outside).
float readChannel(sampler2DArray s, ImageView v, ivec2 p, int img, int c) {
  ivec2 size = textureSize(s, 0).xy;
  if (c < 0 || c >= v.featureChannels || any(lessThan(p, ivec2(0))) ||
      any(greaterThanEqual(p, size)))
    return 0.0;
  int sc = c + v.channelShift;
  return texelFetch(s, ivec3(p, img * v.layersPerImage + (sc >> 2)), 0)[sc & 3];
}

// First window channel held by bound layer `t` of the destination (may be negative for t = 0).
int firstChannelOfSlice(ImageView v, int t) { return 4 * t - v.channelShift; }

// Clamps finite values beyond float16's range to +-65504 (as the host's writeBytes does);
// infinities and NaN keep their kind (the exponent bits are all ones).
vec4 saturateToFloat16(vec4 value) {
  bvec4 special = equal(floatBitsToUint(value) & 0x7F800000u, uvec4(0x7F800000u));
  return mix(clamp(value, vec4(-65504.0), vec4(65504.0)), value, special);
}

#if defined(VKCNN_VARIANT_f16bits)
// float16 images written as their bits, through a rg32ui view of the image (the Context makes
// float16 images mutable-format where packHalf2x16 rounds to nearest even: see
// DeviceCapabilities::float16BitStores): two channels a word, the first in the low half, which is
// how a rgba16f texel lies in memory. The conversion rounds in hardware; a float written to a
// rgba16f view is converted by the store instead, which truncates on lavapipe and on NVIDIA's
// driver, and that error, always towards zero, accumulates through a network.
uvec2 storedTexel(vec4 value) {
  value = saturateToFloat16(value);
  return uvec2(packHalf2x16(value.xy), packHalf2x16(value.zw));
}
void storeTexel(ivec3 at, vec4 value) {
  imageStore(uDestination, at, uvec4(storedTexel(value), 0u, 0u));
}
// Channels `written` from `value`, `kept` from the texel's contents, the others zero.
void mergeTexel(ivec3 at, vec4 value, bvec4 written, bvec4 kept) {
  uvec4 halves = uvec4(0xFFFFu, 0xFFFF0000u, 0xFFFFu, 0xFFFF0000u);
  uvec4 w = mix(uvec4(0u), halves, written), k = mix(uvec4(0u), halves, kept);
  uvec2 old = any(kept) ? imageLoad(uDestination, at).xy : uvec2(0u);
  uvec2 bits = (storedTexel(value) & (w.xz | w.yw)) | (old & (k.xz | k.yw));
  imageStore(uDestination, at, uvec4(bits, 0u, 0u));
}
#else
#if defined(VKCNN_VARIANT_f16)
// The value a float16 image written through a float view (a wrapped application image) should
// hold: rounded to nearest even at float16 precision, saturated. Exact for normal float16 values;
// subnormals are left to the store. In integer arithmetic: NVIDIA's compiler folds a conversion to
// float16 and back (f16vec4, packHalf2x16), RoundingModeRTE declared or not, and the store then
// truncates (bench/NOTES.md, 2026-11-28, session 31).
vec4 storedTexel(vec4 value) {
  uvec4 bits = floatBitsToUint(value);
  uvec4 rounded = (bits + 0xFFFu + ((bits >> 13) & 1u)) & ~0x1FFFu;
  vec4 saturated = clamp(uintBitsToFloat(rounded), vec4(-65504.0), vec4(65504.0));
  return mix(saturated, value, equal(bits & 0x7F800000u, uvec4(0x7F800000u)));
}
#else
vec4 storedTexel(vec4 value) { return value; }
#endif
void storeTexel(ivec3 at, vec4 value) { imageStore(uDestination, at, storedTexel(value)); }
void mergeTexel(ivec3 at, vec4 value, bvec4 written, bvec4 kept) {
  vec4 old = any(kept) ? imageLoad(uDestination, at) : vec4(0.0);
  imageStore(uDestination, at, mix(mix(vec4(0.0), old, kept), storedTexel(value), written));
}
#endif

// Writes `value` (window channels [firstChannelOfSlice(v, t), +4)) to layer t of image `img` of
// the kernel's output, which every kernel declares as `uDestination` (a VKCNN_OUTPUT_IMAGE) before
// including this file. Channels outside the window keep their contents; storage padding is
// written as zero.
void writeSlice(ImageView v, ivec2 p, int img, int t, vec4 value) {
  ivec3 at = ivec3(p, img * v.layersPerImage + t);
  int c0 = 4 * t;
  int lo = v.channelShift, hi = v.channelShift + v.featureChannels;
  if (c0 >= lo && c0 + 4 <= hi) {
    storeTexel(at, value);
    return;
  }
  ivec4 channel = ivec4(c0) + ivec4(0, 1, 2, 3);
  uvec4 inWindow =
      uvec4(greaterThanEqual(channel, ivec4(lo))) & uvec4(lessThan(channel, ivec4(hi)));
  uvec4 stored = uvec4(lessThan(channel, ivec4(v.paddingFrom)));  // the rest is padding: zero
  mergeTexel(at, value, bvec4(inWindow & stored), bvec4((inWindow ^ 1u) & stored));
}

#endif
