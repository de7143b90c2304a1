#include "kernels/weights.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "vkcnn/error.h"

namespace vkcnn::detail {

namespace {

std::string systemError(int error) {
  return std::strerror(error);
}

// Closes the descriptor on every path; the mapping outlives it.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFloatFile::MappedFloatFile(const std::string& path, uint64_t expectedCount,
                                 const std::string& what) {
  const uint64_t expectedBytes = expectedCount * sizeof(float);
  const std::string file = what + " file '" + path + "'";
  FileDescriptor f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0)
    throw Error(ErrorCode::io, "cannot open " + file + " (expected " +
                                   std::to_string(expectedBytes) +
                                   " bytes): " + systemError(errno));
  struct stat info {};
  if (::fstat(f.fd, &info) != 0)
    throw Error(ErrorCode::io, "cannot stat " + file + ": " + systemError(errno));
  if (!S_ISREG(info.st_mode))
    throw Error(ErrorCode::io, file + " is not a regular file (expected " +
                                   std::to_string(expectedBytes) + " bytes of float32)");
  const uint64_t actualBytes = uint64_t(info.st_size);
  if (actualBytes != expectedBytes)
    throw Error(ErrorCode::io, file + " is too " +
                                   (actualBytes < expectedBytes ? "short" : "long") +
                                   ": expected " + std::to_string(expectedBytes) + " bytes (" +
                                   std::to_string(expectedCount) + " float32 values), found " +
                                   std::to_string(actualBytes) + " bytes");
  length_ = size_t(actualBytes);
  if (length_ == 0) return;
  mapping_ = ::mmap(nullptr, length_, PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw Error(ErrorCode::io, "cannot map " + file + " (" + std::to_string(actualBytes) +
                                   " bytes): " + systemError(errno));
  }
  const float* data = static_cast<const float*>(mapping_);
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

MappedFloatFile::~MappedFloatFile() {
  if (mapping_) ::munmap(mapping_, length_);
}

}  // namespace vkcnn::detail
