// NumPy .npy files of float32 (and raw little-endian float32 .bin files) for the command-line tool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkcnn::cli {

struct Array {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

// Reads a little-endian float32 (or float64, converted) C-order .npy file; a malformed or
// oversized file throws vkcnn::Error(io or invalidModel) naming the file.
Array readNpy(const std::string& path);
// The shape alone (the header is checked as readNpy does, the data is not read).
std::vector<int64_t> readNpyShape(const std::string& path);
void writeNpy(const std::string& path, const Array& array);
// Raw little-endian float32 with no header; the element count must equal `expected` when given.
std::vector<float> readRawFloats(const std::string& path, size_t expected = 0);
void writeRawFloats(const std::string& path, const std::vector<float>& data);

}  // namespace vkcnn::cli
