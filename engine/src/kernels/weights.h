// Weight files: raw little-endian float32 without a header (the MPSCNN samples' .dat files),
// memory-mapped so a large layer is not copied twice on its way to the device.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vkcnn::detail {

class MappedFloatFile {
 public:
  // Maps `path`, which must hold exactly `expectedCount` float32 values; otherwise Error(io)
  // naming `what`, the file, and the expected and actual sizes in bytes.
  MappedFloatFile(const std::string& path, uint64_t expectedCount, const std::string& what);
  ~MappedFloatFile();
  MappedFloatFile(const MappedFloatFile&) = delete;
  MappedFloatFile& operator=(const MappedFloatFile&) = delete;

  std::span<const float> values() const { return values_; }

 private:
  void* mapping_ = nullptr;
  size_t length_ = 0;
  std::vector<float> swapped_;  // big-endian hosts only
  std::span<const float> values_;
};

}  // namespace vkcnn::detail
