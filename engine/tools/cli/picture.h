// Pictures (PNG, JPEG, ... through Debian's libstb) as network inputs, prepared as torchvision's
// classification presets prepare them: Resize(shorter side) with antialiased bilinear filtering as
// PIL does it, CenterCrop to the network's input size, ToTensor, Normalize(mean, std).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace vkcnn::cli {

struct PictureOptions {
  uint32_t width = 224, height = 224;  // the network's input size: the crop
  uint32_t channels = 3;               // 1 (grey) or 3 (RGB)
  // The shorter side after resizing, before the centre crop (torchvision's Resize(resize)); a
  // picture smaller than the crop after it is padded with zeros, as torchvision's CenterCrop
  // does. 0: the crop's shorter side x 256/224 (Resize(256) before CenterCrop(224)), enlarged if
  // needed so that the picture covers the crop.
  uint32_t resize = 0;
  bool stretch = false;  // resize straight to width x height, ignoring the aspect ratio
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};  // ImageNet defaults, on [0, 1] values
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
};

// Decodes the file and returns CHW floats (value / 255 - mean) / std of the crop. An unreadable or
// undecodable file throws vkcnn::Error(io).
std::vector<float> loadPicture(const std::string& path, const PictureOptions& options);

// The same from decoded 8-bit pixels (height x width x channels, interleaved).
std::vector<float> preparePicture(const uint8_t* pixels, uint32_t width, uint32_t height,
                                  const PictureOptions& options);

}  // namespace vkcnn::cli
