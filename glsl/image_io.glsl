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

// The value a float16 image should hold: rounded to nearest even at float16 precision, finite
// values beyond the range saturated to +-65504 (as the host's writeBytes does). Done here because
// Vulkan lets image stores convert to float16 by truncation (lavapipe does, and so does NVIDIA's
// driver on the H200), and that error, always towards zero, accumulates through a network instead
// of averaging out. Exact for normal float16 values; subnormals are left to the store. In integer
// arithmetic: NVIDIA's compiler folds a conversion to float16 and back (f16vec4, packHalf2x16),
// RoundingModeRTE declared or not, and the store then truncates (bench/NOTES.md, 2026-11-28,
// session 31).
vec4 roundToFloat16(vec4 value) {
  uvec4 bits = floatBitsToUint(value);
  uvec4 rounded = (bits + 0xFFFu + ((bits >> 13) & 1u)) & ~0x1FFFu;
  vec4 saturated = clamp(uintBitsToFloat(rounded), vec4(-65504.0), vec4(65504.0));
  // Infinities and NaN keep their kind (the exponent bits are all ones).
  bvec4 special = equal(bits & 0x7F800000u, uvec4(0x7F800000u));
  return mix(saturated, value, special);
}

// Writes `value` (window channels [firstChannelOfSlice(v, t), +4)) to layer t of image `img` of
// the kernel's output, which every kernel declares as `uDestination` before including this file.
// Channels outside the window keep their contents; storage padding is written as zero.
void writeSlice(ImageView v, ivec2 p, int img, int t, vec4 value) {
#ifdef VKCNN_VARIANT_f16
  value = roundToFloat16(value);
#endif
  ivec3 at = ivec3(p, img * v.layersPerImage + t);
  int c0 = 4 * t;
  int lo = v.channelShift, hi = v.channelShift + v.featureChannels;
  if (c0 >= lo && c0 + 4 <= hi) {
    imageStore(uDestination, at, value);
    return;
  }
  bool keepOld = false;
  for (int k = 0; k < 4; ++k) {
    int bc = c0 + k;
    keepOld = keepOld || (bc < v.paddingFrom && (bc < lo || bc >= hi));
  }
  vec4 old = keepOld ? imageLoad(uDestination, at) : vec4(0.0);
  vec4 result;
  for (int k = 0; k < 4; ++k) {
    int bc = c0 + k;
    result[k] = bc >= v.paddingFrom ? 0.0 : (bc >= lo && bc < hi) ? value[k] : old[k];
  }
  imageStore(uDestination, at, result);
}

#endif
