// Little-endian reading and writing of the .vkcnn format's integers and floats, the same on every
// host: values are assembled byte by byte (compilers turn that into one load or store on a
// little-endian machine), never read through a cast pointer, so neither the host's byte order
// nor the alignment of a buffer (a fuzzer's input, a file embedded in an application) matters.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace vkcnn::archive {

inline uint16_t loadU16(const uint8_t* p) {
  return uint16_t(p[0] | (p[1] << 8));
}
inline uint32_t loadU32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
inline uint64_t loadU64(const uint8_t* p) {
  return loadU32(p) | (uint64_t(loadU32(p + 4)) << 32);
}

// Appends to a growing buffer; patch* overwrite what was reserved earlier (sizes, offsets).
class ByteWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u16(uint16_t v) {
    u8(uint8_t(v));
    u8(uint8_t(v >> 8));
  }
  void u32(uint32_t v) {
    u16(uint16_t(v));
    u16(uint16_t(v >> 16));
  }
  void u64(uint64_t v) {
    u32(uint32_t(v));
    u32(uint32_t(v >> 32));
  }
  void f32(float v) { u32(std::bit_cast<uint32_t>(v)); }
  void raw(std::span<const uint8_t> data) { bytes_.insert(bytes_.end(), data.begin(), data.end()); }
  void raw(std::string_view text) { bytes_.insert(bytes_.end(), text.begin(), text.end()); }
  // Zero bytes up to the next multiple of `alignment` (a power of two).
  void alignTo(size_t alignment) {
    bytes_.resize((bytes_.size() + alignment - 1) & ~(alignment - 1));
  }
  void patchU32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_[at + i] = uint8_t(v >> (8 * i));
  }
  void patchU64(size_t at, uint64_t v) {
    patchU32(at, uint32_t(v));
    patchU32(at + 4, uint32_t(v >> 32));
  }
  size_t size() const { return bytes_.size(); }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace vkcnn::archive
