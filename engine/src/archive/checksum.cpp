// XXH64 as published (github.com/Cyan4973/xxHash, doc/xxhash_spec.md): four accumulators over
// 32-byte stripes, then the tail and the final avalanche. tests/test_model_format.cpp checks the
// reference values.
#include "archive/checksum.h"

#include "archive/bytes.h"

namespace vkcnn::archive {
namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kPrime5 = 0x27D4EB2F165667C5ull;

constexpr uint64_t rotl(uint64_t v, int r) {
  return (v << r) | (v >> (64 - r));
}

uint64_t round(uint64_t acc, uint64_t input) {
  return rotl(acc + input * kPrime2, 31) * kPrime1;
}

uint64_t merge(uint64_t hash, uint64_t acc) {
  return (hash ^ round(0, acc)) * kPrime1 + kPrime4;
}

}  // namespace

uint64_t xxh64(std::span<const uint8_t> bytes, uint64_t seed) {
  const uint8_t* p = bytes.data();
  const uint8_t* const end = p + bytes.size();
  uint64_t hash;
  if (bytes.size() >= 32) {
    uint64_t v1 = seed + kPrime1 + kPrime2, v2 = seed + kPrime2, v3 = seed, v4 = seed - kPrime1;
    for (; end - p >= 32; p += 32) {
      v1 = round(v1, loadU64(p));
      v2 = round(v2, loadU64(p + 8));
      v3 = round(v3, loadU64(p + 16));
      v4 = round(v4, loadU64(p + 24));
    }
    hash = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    hash = merge(merge(merge(merge(hash, v1), v2), v3), v4);
  } else {
    hash = seed + kPrime5;
  }
  hash += bytes.size();
  for (; end - p >= 8; p += 8) hash = rotl(hash ^ round(0, loadU64(p)), 27) * kPrime1 + kPrime4;
  if (end - p >= 4) {
    hash = rotl(hash ^ (uint64_t(loadU32(p)) * kPrime1), 23) * kPrime2 + kPrime3;
    p += 4;
  }
  for (; p < end; ++p) hash = rotl(hash ^ (*p * kPrime5), 11) * kPrime1;
  hash ^= hash >> 33;
  hash *= kPrime2;
  hash ^= hash >> 29;
  hash *= kPrime3;
  hash ^= hash >> 32;
  return hash;
}

}  // namespace vkcnn::archive
