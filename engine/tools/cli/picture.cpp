#include "picture.h"

#include <algorithm>
#include <cmath>

#include "vkcnn/error.h"

#define STB_IMAGE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>

namespace vkcnn::cli {

std::vector<float> loadPicture(const std::string& path, const PictureOptions& o) {
  int w = 0, h = 0, n = 0;
  const int wanted = o.channels == 1 ? 1 : 3;
  unsigned char* pixels = stbi_load(path.c_str(), &w, &h, &n, wanted);
  if (!pixels)
    throw Error(ErrorCode::io,
                path + ": cannot decode the picture (" + stbi_failure_reason() + ")");
  std::vector<float> out(size_t(wanted) * o.width * o.height);
  const float sx = float(w) / float(o.width), sy = float(h) / float(o.height);
  for (uint32_t y = 0; y < o.height; ++y) {
    const float fy = std::clamp((float(y) + 0.5f) * sy - 0.5f, 0.0f, float(h - 1));
    const int y0 = int(fy), y1 = std::min(y0 + 1, h - 1);
    const float wy = fy - float(y0);
    for (uint32_t x = 0; x < o.width; ++x) {
      const float fx = std::clamp((float(x) + 0.5f) * sx - 0.5f, 0.0f, float(w - 1));
      const int x0 = int(fx), x1 = std::min(x0 + 1, w - 1);
      const float wx = fx - float(x0);
      for (int c = 0; c < wanted; ++c) {
        auto at = [&](int yy, int xx) { return float(pixels[(size_t(yy) * w + xx) * wanted + c]); };
        const float v = (at(y0, x0) * (1 - wx) + at(y0, x1) * wx) * (1 - wy) +
                        (at(y1, x0) * (1 - wx) + at(y1, x1) * wx) * wy;
        out[(size_t(c) * o.height + y) * o.width + x] = (v / 255.0f - o.mean[c]) / o.std[c];
      }
    }
  }
  stbi_image_free(pixels);
  return out;
}

}  // namespace vkcnn::cli
