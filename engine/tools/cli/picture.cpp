// Picture decoding (libstb) and torchvision-style preparation; see picture.h.
#include "picture.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "platform/platform.h"
#include "vkcnn/error.h"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>

namespace vkcnn::cli {

namespace {

// PIL's resampling taps for one axis (ImagingResample with the bilinear filter): output index i of
// `out` samples around input coordinate (i + 0.5) * in / out with a triangle filter widened by the
// scale when downsampling (antialiasing), normalised to sum 1.
struct Taps {
  int first = 0;
  std::vector<float> weights;
};

std::vector<Taps> taps(uint32_t in, uint32_t out) {
  const double scale = double(in) / double(out);
  const double filterScale = std::max(scale, 1.0);
  const double support = filterScale;  // the bilinear filter's support is 1
  std::vector<Taps> result(out);
  for (uint32_t i = 0; i < out; ++i) {
    const double center = (i + 0.5) * scale;
    const int lo = std::max(int(center - support + 0.5), 0);
    const int hi = std::min(int(center + support + 0.5), int(in));
    Taps& t = result[i];
    t.first = lo;
    double total = 0;
    for (int j = lo; j < hi; ++j) {
      const double x = std::abs((j - center + 0.5) / filterScale);
      const double w = x < 1 ? 1 - x : 0;
      t.weights.push_back(float(w));
      total += w;
    }
    if (total > 0)
      for (float& w : t.weights) w = float(w / total);
  }
  return result;
}

// PIL keeps 8-bit images between passes and at the end.
float toByte(float v) {
  return std::clamp(std::nearbyint(v), 0.0f, 255.0f);
}

}  // namespace

std::vector<float> preparePicture(const uint8_t* pixels, uint32_t w, uint32_t h,
                                  const PictureOptions& o) {
  const uint32_t c = o.channels == 1 ? 1 : 3;
  // The resized size (torchvision's Resize with an int: the shorter side, the longer one scaled
  // and truncated).
  uint32_t rw = o.width, rh = o.height;
  if (!o.stretch) {
    uint32_t size =
        o.resize ? o.resize : uint32_t(std::lround(std::min(o.width, o.height) * 256.0 / 224.0));
    auto resized = [&](uint32_t s) {
      if (w <= h)
        rw = s, rh = uint32_t(uint64_t(s) * h / w);
      else
        rh = s, rw = uint32_t(uint64_t(s) * w / h);
    };
    resized(size);
    if (!o.resize)
      while (rw < o.width || rh < o.height) resized(++size);
  }
  // torchvision's CenterCrop: the offset rounded half to even; outside the picture is zero.
  const long top = long(std::nearbyint((double(rh) - o.height) / 2.0));
  const long left = long(std::nearbyint((double(rw) - o.width) / 2.0));

  const std::vector<Taps> across = taps(w, rw), down = taps(h, rh);
  // Horizontal pass over every source row, for the crop's columns only.
  std::vector<float> rows(size_t(h) * o.width * c, 0.0f);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < o.width; ++x) {
      const long rx = long(x) + left;
      if (rx < 0 || rx >= long(rw)) continue;
      const Taps& t = across[size_t(rx)];
      for (uint32_t ch = 0; ch < c; ++ch) {
        float v = 0;
        for (size_t k = 0; k < t.weights.size(); ++k)
          v += t.weights[k] * pixels[(size_t(y) * w + size_t(t.first) + k) * c + ch];
        rows[(size_t(y) * o.width + x) * c + ch] = toByte(v);
      }
    }
  // Vertical pass for the crop's rows, then ToTensor and Normalize.
  std::vector<float> out(size_t(c) * o.width * o.height);
  for (uint32_t y = 0; y < o.height; ++y) {
    const long ry = long(y) + top;
    for (uint32_t x = 0; x < o.width; ++x) {
      const long rx = long(x) + left;
      const bool inside = ry >= 0 && ry < long(rh) && rx >= 0 && rx < long(rw);
      for (uint32_t ch = 0; ch < c; ++ch) {
        float v = 0;
        if (inside) {
          const Taps& t = down[size_t(ry)];
          for (size_t k = 0; k < t.weights.size(); ++k)
            v += t.weights[k] * rows[((size_t(t.first) + k) * o.width + x) * c + ch];
          v = toByte(v);
        }
        out[(size_t(ch) * o.height + y) * o.width + x] = (v / 255.0f - o.mean[ch]) / o.std[ch];
      }
    }
  }
  return out;
}

std::vector<float> loadPicture(const std::string& path, const PictureOptions& o) {
  int w = 0, h = 0, n = 0;
  const int wanted = o.channels == 1 ? 1 : 3;
  // Mapped, not opened by stb: only a regular file is read (a FIFO would block stb's fopen).
  const platform::MappedFile file(path, path);
  if (file.size() > size_t(INT_MAX))
    throw Error(ErrorCode::io,
                path + ": too large for a picture (" + std::to_string(file.size()) + " bytes)");
  unsigned char* pixels =
      stbi_load_from_memory(file.bytes().data(), int(file.size()), &w, &h, &n, wanted);
  if (!pixels)
    throw Error(ErrorCode::io,
                path + ": cannot decode the picture (" + stbi_failure_reason() + ")");
  std::vector<float> out;
  try {
    out = preparePicture(pixels, uint32_t(w), uint32_t(h), o);
  } catch (...) {
    stbi_image_free(pixels);
    throw;
  }
  stbi_image_free(pixels);
  return out;
}

}  // namespace vkcnn::cli
