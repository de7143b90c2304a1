#include "kernels/weights.h"

#include <bit>
#include <cstring>

#include "vkcnn/error.h"

namespace vkcnn::detail {

MappedFloatFile::MappedFloatFile(const std::string& path, uint64_t expectedCount,
                                 const std::string& what) {
  const uint64_t expectedBytes = expectedCount * sizeof(float);
  const std::string file = what + " file '" + path + "'";
  file_ = platform::MappedFile(path, file,
                               "expected " + std::to_string(expectedBytes) + " bytes of float32");
  const uint64_t actualBytes = file_.size();
  if (actualBytes != expectedBytes)
    throw Error(ErrorCode::io, file + " is too " +
                                   (actualBytes < expectedBytes ? "short" : "long") +
                                   ": expected " + std::to_string(expectedBytes) + " bytes (" +
                                   std::to_string(expectedCount) + " float32 values), found " +
                                   std::to_string(actualBytes) + " bytes");
  if (actualBytes == 0) return;
  const float* data = reinterpret_cast<const float*>(file_.bytes().data());
  values_ = std::span<const float>(data, size_t(expectedCount));
  if constexpr (std::endian::native == std::endian::big) {
    swapped_.resize(size_t(expectedCount));
    for (size_t i = 0; i < swapped_.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, data + i, 4);
      bits = (bits >> 24) | ((bits >> 8) & 0xff00u) | ((bits << 8) & 0xff0000u) | (bits << 24);
      std::memcpy(&swapped_[i], &bits, 4);
    }
    values_ = swapped_;
  }
}

MappedFloatFile::~MappedFloatFile() = default;

}  // namespace vkcnn::detail
