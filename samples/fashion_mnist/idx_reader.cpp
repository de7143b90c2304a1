#include "idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>

namespace fashion_mnist {

namespace {

// Caps what a header may claim, so a corrupt size cannot ask for gigabytes.
constexpr uint64_t kMaxElements = uint64_t(1) << 31;

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw IdxError("IDX file " + path + ": " + what);
}

// Reads exactly `size` bytes or throws, naming what was being read.
void readExactly(gzFile file, const std::string& path, void* data, size_t size, const char* what) {
  auto* bytes = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    // gzread takes an unsigned count: read in chunks well below its limit.
    unsigned chunk = unsigned(std::min<size_t>(size - done, size_t(1) << 30));
    int n = gzread(file, bytes + done, chunk);
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(file, &code);
      fail(path, std::string("cannot read the ") + what + ": " + (message ? message : "error"));
    }
    if (n == 0) {
      fail(path, std::string("the ") + what + " ends after " + std::to_string(done) + " of " +
                     std::to_string(size) + " bytes");
    }
    done += size_t(n);
  }
}

uint32_t bigEndian32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

std::string hex32(uint32_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) s += digits[(v >> shift) & 15];
  return s;
}

}  // namespace

IdxFile readIdx(const std::string& path) {
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) fail(path, std::string("cannot open it: ") + std::strerror(errno));
  gzbuffer(file.get(), 1 << 17);

  std::array<uint8_t, 4> magic{};
  readExactly(file.get(), path, magic.data(), magic.size(), "header");
  const uint32_t magicValue = bigEndian32(magic.data());
  if (magic[0] != 0 || magic[1] != 0) fail(path, "bad magic " + hex32(magicValue));
  if (magic[2] != 0x08) {
    fail(path, "element type " + hex32(magic[2]) + " is not unsigned byte (0x08)");
  }
  const uint32_t rank = magic[3];
  if (rank == 0) fail(path, "no dimensions");

  IdxFile idx;
  std::vector<uint8_t> sizes(size_t(rank) * 4);
  readExactly(file.get(), path, sizes.data(), sizes.size(), "header");
  uint64_t elements = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    idx.dimensions.push_back(bigEndian32(sizes.data() + 4 * d));
    elements *= idx.dimensions.back();
    if (elements > kMaxElements) fail(path, "the header claims more than 2^31 elements");
  }

  idx.data.resize(size_t(elements));
  readExactly(file.get(), path, idx.data.data(), idx.data.size(), "data");
  uint8_t extra = 0;
  int n = gzread(file.get(), &extra, 1);
  if (n != 0) {
    fail(path, n > 0 ? "more data than the header's " + std::to_string(elements) + " elements"
                     : std::string("cannot read past the data"));
  }
  return idx;
}

IdxImages readIdxImages(const std::string& path) {
  IdxFile idx = readIdx(path);
  if (idx.dimensions.size() != 3) {
    fail(path, std::to_string(idx.dimensions.size()) +
                   " dimensions where an images file has 3 (count, rows, columns)");
  }
  IdxImages images;
  images.count = idx.dimensions[0];
  images.rows = idx.dimensions[1];
  images.columns = idx.dimensions[2];
  images.pixels = std::move(idx.data);
  return images;
}

std::vector<uint8_t> readIdxLabels(const std::string& path) {
  IdxFile idx = readIdx(path);
  if (idx.dimensions.size() != 1) {
    fail(path, std::to_string(idx.dimensions.size()) + " dimensions where a labels file has 1");
  }
  return std::move(idx.data);
}

}  // namespace fashion_mnist
