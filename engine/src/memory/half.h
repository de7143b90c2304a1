// float32 <-> float16 conversion on the host.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace vkcnn::detail {

// Round to nearest even; finite values beyond the float16 range saturate to +-65504 (vkcnn's
// documented choice), infinities and NaN keep their kind.
inline uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) return uint16_t(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  int e = int(exponent) - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7bffu);
  if (e <= 0) {
    if (e < -10) return uint16_t(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - e;
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(e) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  if ((half & 0x7fffu) >= 0x7c00u) return uint16_t(sign | 0x7bffu);  // rounded past the max
  return uint16_t(sign | half);
}

inline float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {
      float f = std::ldexp(float(mantissa), -24);
      return (h & 0x8000u) ? -f : f;
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace vkcnn::detail
