// Reader for IDX files (the MNIST / Fashion-MNIST container), gzip-compressed or not, through
// zlib's gzopen/gzread (which reads uncompressed files unchanged).
//
// An IDX file is a big-endian header, magic 0x0000TTDD (TT: element type, 0x08 = unsigned byte;
// DD: number of dimensions), then DD big-endian uint32 sizes, then the elements row-major.
// Fashion-MNIST: images are 3-dimensional [count][28][28] (magic 0x00000803), labels
// 1-dimensional [count] (0x00000801), both unsigned bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fashion_mnist {

// Anything wrong with a file: its message names the file and what was wrong.
class IdxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Any unsigned-byte IDX file: its sizes and its bytes, row-major.
struct IdxFile {
  std::vector<uint32_t> dimensions;
  std::vector<uint8_t> data;
};

// 8-bit grey images, row-major, image after image: pixel (x, y) of image i is at
// pixels[(i * rows + y) * columns + x]; 0 is background, 255 ink.
struct IdxImages {
  uint32_t count = 0, rows = 0, columns = 0;
  std::vector<uint8_t> pixels;

  size_t pixelsPerImage() const { return size_t(rows) * columns; }
  const uint8_t* image(uint32_t i) const { return pixels.data() + size_t(i) * pixelsPerImage(); }
};

// Reads an unsigned-byte IDX file of any number of dimensions. Throws IdxError for a missing or
// unreadable file, a bad magic, another element type, or data shorter or longer than the header
// says.
IdxFile readIdx(const std::string& path);
// Reads an images file (3 dimensions).
IdxImages readIdxImages(const std::string& path);
// Reads a labels file (1 dimension).
std::vector<uint8_t> readIdxLabels(const std::string& path);

}  // namespace fashion_mnist
