// Pictures (PNG, JPEG, ... through Debian's libstb) as network inputs.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace vkcnn::cli {

struct PictureOptions {
  uint32_t width = 224, height = 224;                 // the network's input size
  uint32_t channels = 3;                              // 1 (grey) or 3 (RGB)
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};  // ImageNet defaults, on [0, 1] values
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
};

// Decodes the file, resizes it (bilinear, half-pixel centres) and returns CHW floats
// (value / 255 - mean) / std. An unreadable or undecodable file throws vkcnn::Error(io).
std::vector<float> loadPicture(const std::string& path, const PictureOptions& options);

}  // namespace vkcnn::cli
