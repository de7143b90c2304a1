// Resize and Pad against double-precision references written from the ONNX/numpy definitions:
// up and down in both resize modes with every coordinate transformation and nearest mode, pad in
// every mode with asymmetric and negative amounts, known values from PyTorch/numpy, batch
// sub-ranges, clips, channel windows and unaligned destination offsets into poisoned
// destinations, and the errors.
#include <vkcnn/padding.h>
#include <vkcnn/resize.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const uint32_t kChannelCounts[] = {1, 3, 4, 5, 13, 17, 32};

constexpr CoordinateTransformationMode kCoordinateModes[] = {
    CoordinateTransformationMode::halfPixel, CoordinateTransformationMode::pytorchHalfPixel,
    CoordinateTransformationMode::alignCorners, CoordinateTransformationMode::asymmetric,
    CoordinateTransformationMode::tfHalfPixelForNN};
constexpr NearestMode kNearestModes[] = {NearestMode::roundPreferFloor,
                                         NearestMode::roundPreferCeil, NearestMode::floor,
                                         NearestMode::ceil};
constexpr PadMode kPadModes[] = {PadMode::constant, PadMode::edge, PadMode::reflect, PadMode::wrap};

// NaN in `expected` marks poison that must survive; everything else is compared by relative L2.
void checkResult(const Tensor& actual, const Tensor& expected, ChannelFormat format) {
  REQUIRE(actual.data.size() == expected.data.size());
  Tensor a = actual, e = expected;
  size_t poisonLost = 0;
  for (size_t k = 0; k < e.data.size(); ++k)
    if (std::isnan(e.data[k])) {
      poisonLost += !std::isnan(a.data[k]);
      a.data[k] = e.data[k] = 0;
    }
  CHECK_MESSAGE(poisonLost == 0, poisonLost << " elements outside the output were written");
  CHECK_FALSE(hasNaN(a));
  const double error = relativeL2(a, e);
  CHECK_MESSAGE(error <= tolerance(format), "relative L2 " << error);
}

// Fills `y` (poisoned) the way a UnaryKernel with this geometry writes: value(i, c, u, v) at
// output coordinate (u, v) = (p - clip) + offset.xy, of source image offset.z + i and source window
// channel c.
template <typename Value>
Tensor expectedDestination(const UnaryKernel& k, const ImageDescriptor& d, uint32_t windowChannels,
                           Value&& value) {
  Tensor y(d.numberOfImages, d.featureChannels, d.height, d.width, kNaN);
  const ClipRect& clip = k.clipRect;
  const uint32_t cw = clip.width == kWholeExtent ? y.w - clip.x : clip.width;
  const uint32_t ch = clip.height == kWholeExtent ? y.h - clip.y : clip.height;
  const uint32_t n = clip.depth == kWholeExtent ? y.n - clip.z : clip.depth;
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t c = 0; c < windowChannels; ++c)
      for (uint32_t yy = 0; yy < ch; ++yy)
        for (uint32_t xx = 0; xx < cw; ++xx)
          y.at(clip.z + i, k.destinationFeatureChannelOffset + c, clip.y + yy, clip.x + xx) =
              value(k.offset.z + i, k.sourceFeatureChannelOffset + c, int64_t(yy) + k.offset.y,
                    int64_t(xx) + k.offset.x);
  return y;
}

// ---- Resize reference (ONNX Resize, sizes given)
// -------------------------------------------------

double sourceCoordinate(CoordinateTransformationMode mode, double x, uint32_t in, uint32_t out) {
  const double scale = double(out) / double(in);
  switch (mode) {
    case CoordinateTransformationMode::halfPixel:
      return (x + 0.5) / scale - 0.5;
    case CoordinateTransformationMode::pytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordinateTransformationMode::alignCorners:
      return out == 1 ? 0.0 : x * double(in - 1) / double(out - 1);
    case CoordinateTransformationMode::asymmetric:
      return x / scale;
    case CoordinateTransformationMode::tfHalfPixelForNN:
      return (x + 0.5) / scale;
  }
  return kNaN;
}

// Values a hair from a multiple of 1/2 are that multiple: ties must be ties despite rounding.
double snap(double v) {
  const double h = std::round(v * 2) / 2;
  return std::abs(v - h) < 1e-9 ? h : v;
}

int64_t nearestIndex(NearestMode mode, double x) {
  x = snap(x);
  const bool tie = x - std::floor(x) == 0.5;
  switch (mode) {
    case NearestMode::roundPreferFloor:
      return int64_t(tie ? std::floor(x) : std::round(x));
    case NearestMode::roundPreferCeil:
      return int64_t(tie ? std::ceil(x) : std::round(x));
    case NearestMode::floor:
      return int64_t(std::floor(x));
    case NearestMode::ceil:
      return int64_t(std::ceil(x));
  }
  return 0;
}

int64_t clampIndex(int64_t i, uint32_t size) {
  return std::clamp<int64_t>(i, 0, int64_t(size) - 1);
}

double resized(const ResizeDescriptor& r, const Tensor& x, uint32_t i, uint32_t c, int64_t v,
               int64_t u) {
  const double sx = sourceCoordinate(r.coordinateTransformationMode, double(u), x.w, r.width);
  const double sy = sourceCoordinate(r.coordinateTransformationMode, double(v), x.h, r.height);
  if (r.mode == ResizeMode::nearest)
    return x.at(i, c, uint32_t(clampIndex(nearestIndex(r.nearestMode, sy), x.h)),
                uint32_t(clampIndex(nearestIndex(r.nearestMode, sx), x.w)));
  const double fx = snap(sx), fy = snap(sy);
  const int64_t x0 = int64_t(std::floor(fx)), y0 = int64_t(std::floor(fy));
  const double tx = fx - double(x0), ty = fy - double(y0);
  const auto at = [&](int64_t yy, int64_t xx) {
    return x.at(i, c, uint32_t(clampIndex(yy, x.h)), uint32_t(clampIndex(xx, x.w)));
  };
  const double top = (1 - tx) * at(y0, x0) + tx * at(y0, x0 + 1);
  const double bottom = (1 - tx) * at(y0 + 1, x0) + tx * at(y0 + 1, x0 + 1);
  return (1 - ty) * top + ty * bottom;
}

Tensor runResize(Resize& kernel, const Tensor& x, ChannelFormat f, const ImageDescriptor& d) {
  Image source = makeImage(x, f, "x");
  Image destination = makePoisoned(context(), d);
  runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
  return download(destination);
}

void resizeCase(const ResizeDescriptor& r, uint32_t inW, uint32_t inH, uint32_t c, ChannelFormat f,
                uint32_t seed) {
  CAPTURE(toString(r.mode));
  CAPTURE(toString(r.coordinateTransformationMode));
  CAPTURE(toString(r.nearestMode));
  CAPTURE(inW);
  CAPTURE(inH);
  CAPTURE(r.width);
  CAPTURE(r.height);
  CAPTURE(c);
  CAPTURE(toString(f));
  Tensor x = roundedTo(randomTensor(1, c, inH, inW, seed, -2, 2), f);
  Resize kernel(context(), r);
  const ImageDescriptor d{r.width, r.height, c, 1, f};
  Tensor y = runResize(kernel, x, f, d);
  checkResult(y,
              expectedDestination(kernel, d, c,
                                  [&](uint32_t i, uint32_t ch, int64_t v, int64_t u) {
                                    return resized(r, x, i, ch, v, u);
                                  }),
              f);
}

// ---- Pad reference (numpy.pad)
// -------------------------------------------------------------------

// The source index shown at s along an axis of n pixels, or -1 for the constant.
int64_t padIndex(PadMode mode, int64_t s, int64_t n) {
  if (s >= 0 && s < n) return s;
  switch (mode) {
    case PadMode::constant:
      return -1;
    case PadMode::edge:
      return std::clamp<int64_t>(s, 0, n - 1);
    case PadMode::reflect:
      if (n == 1) return 0;
      while (s < 0 || s >= n) s = s < 0 ? -s : 2 * (n - 1) - s;
      return s;
    case PadMode::wrap:
      return ((s % n) + n) % n;
  }
  return -1;
}

double padded(const PadDescriptor& p, const Tensor& x, uint32_t i, uint32_t c, int64_t v,
              int64_t u) {
  const int64_t sx = padIndex(p.mode, u - p.left, x.w), sy = padIndex(p.mode, v - p.top, x.h);
  if (sx < 0 || sy < 0) return p.value;
  return x.at(i, c, uint32_t(sy), uint32_t(sx));
}

void padCase(const PadDescriptor& p, uint32_t w, uint32_t h, uint32_t c, ChannelFormat f,
             uint32_t seed) {
  CAPTURE(toString(p.mode));
  CAPTURE(p.top);
  CAPTURE(p.left);
  CAPTURE(p.bottom);
  CAPTURE(p.right);
  CAPTURE(w);
  CAPTURE(h);
  CAPTURE(c);
  CAPTURE(toString(f));
  Tensor x = roundedTo(randomTensor(2, c, h, w, seed, -2, 2), f);
  Pad kernel(context(), p);
  const ImageDescriptor d{kernel.destinationWidth(w), kernel.destinationHeight(h), c, 2, f};
  CHECK(int64_t(d.width) == int64_t(w) + p.left + p.right);
  CHECK(int64_t(d.height) == int64_t(h) + p.top + p.bottom);
  Image source = makeImage(x, f, "x");
  Image destination = makePoisoned(context(), d);
  runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
  checkResult(download(destination),
              expectedDestination(kernel, d, c,
                                  [&](uint32_t i, uint32_t ch, int64_t v, int64_t u) {
                                    return padded(p, x, i, ch, v, u);
                                  }),
              f);
}

// One row [1, 2, 3, 4] through a 1-channel kernel; returns the output row.
template <typename K>
std::vector<double> row(K& kernel, std::vector<double> values, uint32_t outWidth) {
  Tensor x(1, 1, 1, uint32_t(values.size()));
  x.data = values;
  Image source = makeImage(x, ChannelFormat::float32);
  Image destination = makePoisoned(context(), {outWidth, 1, 1, 1, ChannelFormat::float32});
  runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
  return download(destination).data;
}

void checkRow(const std::vector<double>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    CAPTURE(k);
    CHECK(actual[k] == doctest::Approx(expected[k]).epsilon(1e-6));
  }
}

}  // namespace

TEST_CASE("resize: known values (PyTorch, ONNX)") {
  const auto resize = [](ResizeMode mode, CoordinateTransformationMode coordinates,
                         NearestMode nearest, uint32_t width) {
    return Resize(context(), {width, 1, mode, coordinates, nearest});
  };
  using C = CoordinateTransformationMode;
  // F.interpolate([1, 2], 4, mode='linear', align_corners=False / True).
  Resize r = resize(ResizeMode::bilinear, C::halfPixel, NearestMode::floor, 4);
  checkRow(row(r, {1, 2}, 4), {1, 1.25, 1.75, 2});
  r = resize(ResizeMode::bilinear, C::alignCorners, NearestMode::floor, 4);
  checkRow(row(r, {1, 2}, 4), {1, 4.0 / 3, 5.0 / 3, 2});
  r = resize(ResizeMode::bilinear, C::asymmetric, NearestMode::floor, 4);
  checkRow(row(r, {1, 2}, 4), {1, 1.5, 2, 2});
  // Halving with half_pixel puts every sample on a tie (0.5, 2.5): the nearest mode decides.
  r = resize(ResizeMode::nearest, C::halfPixel, NearestMode::roundPreferFloor, 2);
  checkRow(row(r, {1, 2, 3, 4}, 2), {1, 3});
  r = resize(ResizeMode::nearest, C::halfPixel, NearestMode::roundPreferCeil, 2);
  checkRow(row(r, {1, 2, 3, 4}, 2), {2, 4});
  // PyTorch's legacy 'nearest' is asymmetric + floor: [1, 2, 3] -> 7 samples.
  r = resize(ResizeMode::nearest, C::asymmetric, NearestMode::floor, 7);
  checkRow(row(r, {1, 2, 3}, 7), {1, 1, 1, 2, 2, 3, 3});
  r = resize(ResizeMode::nearest, C::asymmetric, NearestMode::ceil, 7);
  checkRow(row(r, {1, 2, 3}, 7), {1, 2, 2, 3, 3, 3, 3});
  // tf_half_pixel_for_nn: (x + 0.5) * 3 / 2 = 0.75, 2.25 -> round to 1, 2.
  r = resize(ResizeMode::nearest, C::tfHalfPixelForNN, NearestMode::roundPreferFloor, 2);
  checkRow(row(r, {1, 2, 3}, 2), {2, 3});
}

TEST_CASE("resize: nearest, every coordinate and nearest mode, up and down") {
  const uint32_t shapes[][4] = {{5, 7, 10, 14}, {13, 9, 4, 6}, {4, 4, 7, 3},
                                {6, 5, 1, 1},   {1, 1, 3, 2},  {7, 3, 21, 6}};
  uint32_t k = 0;
  for (CoordinateTransformationMode coordinates : kCoordinateModes)
    for (NearestMode nearest : kNearestModes)
      for (const auto& s : shapes) {
        resizeCase({s[2], s[3], ResizeMode::nearest, coordinates, nearest}, s[0], s[1],
                   kChannelCounts[k % 7], ChannelFormat::float32, 100 + k);
        ++k;
      }
}

TEST_CASE("resize: bilinear, every coordinate mode, up and down") {
  const uint32_t shapes[][4] = {{5, 7, 10, 14}, {13, 9, 4, 6}, {4, 4, 7, 3}, {6, 5, 1, 1},
                                {1, 1, 3, 2},   {7, 3, 21, 6}, {3, 5, 3, 5}};
  uint32_t k = 0;
  for (CoordinateTransformationMode coordinates : kCoordinateModes)
    for (const auto& s : shapes)
      for (uint32_t c : {kChannelCounts[k % 7], kChannelCounts[(k + 3) % 7]}) {
        resizeCase({s[2], s[3], ResizeMode::bilinear, coordinates, NearestMode::roundPreferFloor},
                   s[0], s[1], c, ChannelFormat::float32, 200 + k);
        ++k;
      }
}

TEST_CASE("resize: NaN and infinities propagate as in PyTorch") {
  // Bilinear weighs as PyTorch does, a * (1 - t) + b * t: two equal infinities stay infinite
  // (mix() may compute a + t * (b - a), which is inf - inf), and a NaN or an infinity at weight 0
  // still makes NaN, as in PyTorch. Nearest copies.
  using C = CoordinateTransformationMode;
  const ResizeDescriptor descriptors[] = {
      {8, 8, ResizeMode::nearest, C::halfPixel, NearestMode::roundPreferFloor},
      {8, 8, ResizeMode::bilinear, C::halfPixel, NearestMode::floor},
      {8, 8, ResizeMode::bilinear, C::asymmetric, NearestMode::floor},
      {7, 6, ResizeMode::bilinear, C::alignCorners, NearestMode::floor}};
  for (ChannelFormat f : {ChannelFormat::float32, ChannelFormat::float16})
    for (const ResizeDescriptor& r : descriptors) {
      CAPTURE(std::string(toString(f)));
      CAPTURE(std::string(toString(r.mode)));
      CAPTURE(std::string(toString(r.coordinateTransformationMode)));
      Tensor x = roundedTo(randomTensor(1, 5, 4, 4, 404, -2, 2), f);
      sprinkleSpecials(x.data, 9, 2);
      x.at(0, 4, 1, 1) = x.at(0, 4, 1, 2) = INFINITY;  // neighbours of one sign
      Resize kernel(context(), r);
      const ImageDescriptor d{r.width, r.height, 5, 1, f};
      Image source = makeImage(x, f, "x");
      Image destination(context(), d);
      fill(destination, 1234.f);
      runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
      compareSpecials(download(destination),
                      expectedDestination(kernel, d, 5,
                                          [&](uint32_t i, uint32_t c, int64_t v, int64_t u) {
                                            return resized(r, x, i, c, v, u);
                                          }),
                      f == ChannelFormat::float32 ? 1e-5 : 2e-3);
    }
}

TEST_CASE("resize: float16 on small shapes") {
  uint32_t k = 0;
  for (ResizeMode mode : {ResizeMode::nearest, ResizeMode::bilinear})
    for (CoordinateTransformationMode coordinates :
         {CoordinateTransformationMode::halfPixel, CoordinateTransformationMode::alignCorners}) {
      resizeCase({6, 4, mode, coordinates, NearestMode::roundPreferCeil}, 3, 5, k % 2 ? 5 : 3,
                 ChannelFormat::float16, 300 + k);
      ++k;
    }
}

TEST_CASE("resize: batch sub-range, clip, output offset, channel windows") {
  const ChannelFormat f = ChannelFormat::float32;
  for (ResizeMode mode : {ResizeMode::nearest, ResizeMode::bilinear})
    for (uint32_t destinationOffset : {0u, 1u, 4u, 6u}) {
      CAPTURE(toString(mode));
      CAPTURE(destinationOffset);
      const ResizeDescriptor r{11, 8, mode, CoordinateTransformationMode::halfPixel,
                               NearestMode::roundPreferFloor};
      Tensor x = randomTensor(4, 9, 5, 6, 400 + destinationOffset + 10 * uint32_t(mode));
      Resize kernel(context(), r);
      kernel.offset = {3, 2, 1};  // the tile of the output that starts at (3, 2)
      kernel.clipRect = {1, 2, 1, 6, 5, 2};
      kernel.sourceFeatureChannelOffset = 3;
      kernel.sourceFeatureChannelMaxCount = 5;
      kernel.destinationFeatureChannelOffset = destinationOffset;
      const ImageDescriptor d{9, 7, 12, 3, f};
      Tensor y = runResize(kernel, x, f, d);
      checkResult(y,
                  expectedDestination(kernel, d, 5,
                                      [&](uint32_t i, uint32_t c, int64_t v, int64_t u) {
                                        return resized(r, x, i, c, v, u);
                                      }),
                  f);
    }
}

TEST_CASE("resize: into a temporary of the output size") {
  const ChannelFormat f = ChannelFormat::float32;
  Tensor x = randomTensor(2, 6, 5, 7, 500);
  Image source = makeImage(x, f);
  const ResizeDescriptor r{10, 14, ResizeMode::bilinear,
                           CoordinateTransformationMode::pytorchHalfPixel,
                           NearestMode::roundPreferFloor};
  Resize kernel(context(), r);
  CHECK(kernel.destinationImageDescriptor(source).width == 10);
  CHECK(kernel.destinationImageDescriptor(source).height == 14);
  Image result = makePoisoned(context(), {10, 14, 6, 2, f});
  runOnce([&](CommandBuffer& cb) {
    TemporaryImage t = kernel.encode(cb, source);
    Neuron(context(), NeuronDescriptor::of(NeuronType::none)).encode(cb, t, result);
  });
  Resize plain(context(), r);
  checkResult(download(result),
              expectedDestination(plain, {10, 14, 6, 2, f}, 6,
                                  [&](uint32_t i, uint32_t c, int64_t v, int64_t u) {
                                    return resized(r, x, i, c, v, u);
                                  }),
              f);
}

TEST_CASE("resize: errors") {
  VKCNN_CHECK_ERROR(Resize(context(), {0, 4}), ErrorCode::invalidArgument, "output size 0x4");
  VKCNN_CHECK_ERROR(Resize(context(), {4, 0}), ErrorCode::invalidArgument, "is empty");
  VKCNN_CHECK_ERROR(Resize(context(), {4, 4, ResizeMode(5)}), ErrorCode::invalidArgument,
                    "resize mode 5");
  VKCNN_CHECK_ERROR(Resize(context(), {4, 4, ResizeMode::nearest, CoordinateTransformationMode(9)}),
                    ErrorCode::invalidArgument, "coordinate transformation mode 9");
  VKCNN_CHECK_ERROR(Resize(context(), {4, 4, ResizeMode::nearest,
                                       CoordinateTransformationMode::halfPixel, NearestMode(4)}),
                    ErrorCode::invalidArgument, "nearest mode 4");
}

TEST_CASE("pad: known values (numpy.pad)") {
  const std::vector<double> x = {1, 2, 3, 4};
  Pad reflect(context(), {PadMode::reflect, 0, 2, 0, 2});
  checkRow(row(reflect, x, 8), {3, 2, 1, 2, 3, 4, 3, 2});
  Pad edge(context(), {PadMode::edge, 0, 2, 0, 2});
  checkRow(row(edge, x, 8), {1, 1, 1, 2, 3, 4, 4, 4});
  Pad wrap(context(), {PadMode::wrap, 0, 2, 0, 2});
  checkRow(row(wrap, x, 8), {3, 4, 1, 2, 3, 4, 1, 2});
  Pad constant(context(), {PadMode::constant, 0, 2, 0, 2, 9.5f});
  checkRow(row(constant, x, 8), {9.5, 9.5, 1, 2, 3, 4, 9.5, 9.5});
  Pad crop(context(), {PadMode::constant, 0, -1, 0, 2, -1.f});
  checkRow(row(crop, x, 5), {2, 3, 4, -1, -1});
  Pad wrapFar(context(), {PadMode::wrap, 0, 5, 0, 6});
  checkRow(row(wrapFar, x, 15), {4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2});
}

TEST_CASE("pad: every mode with asymmetric amounts") {
  const int32_t amounts[][4] = {
      {1, 2, 3, 0}, {0, 3, 2, 1}, {2, 0, 0, 4}, {-1, 1, 2, -2}, {4, 4, 3, 4}};
  const uint32_t sizes[][2] = {{5, 6}, {6, 5}, {7, 8}};
  uint32_t k = 0;
  for (PadMode mode : kPadModes)
    for (const auto& a : amounts) {
      const auto& s = sizes[k % 3];
      padCase({mode, a[0], a[1], a[2], a[3], -0.75f}, s[0], s[1], kChannelCounts[k % 7],
              ChannelFormat::float32, 600 + k);
      ++k;
    }
}

TEST_CASE("pad: float16 on small shapes") {
  uint32_t k = 0;
  for (PadMode mode : kPadModes) {
    padCase({mode, 1, 2, 2, 1, 0.5f}, 3, 4, k % 2 ? 3 : 5, ChannelFormat::float16, 700 + k);
    ++k;
  }
}

TEST_CASE("pad: batch sub-range, clip, offset, channel windows") {
  const ChannelFormat f = ChannelFormat::float32;
  for (PadMode mode : kPadModes)
    for (uint32_t destinationOffset : {1u, 4u}) {
      CAPTURE(toString(mode));
      CAPTURE(destinationOffset);
      const PadDescriptor p{mode, 2, 1, 1, 3, 2.5f};
      Tensor x = randomTensor(3, 7, 4, 5, 800 + destinationOffset + 10 * uint32_t(mode));
      Image source = makeImage(x, f);
      Pad kernel(context(), p);
      kernel.offset = {1, -1, 1};
      kernel.clipRect = {2, 1, 0, 6, 5, 2};
      kernel.sourceFeatureChannelOffset = 1;
      kernel.sourceFeatureChannelMaxCount = 6;
      kernel.destinationFeatureChannelOffset = destinationOffset;
      const ImageDescriptor d{9, 8, 11, 2, f};
      Image destination = makePoisoned(context(), d);
      runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, destination); });
      checkResult(download(destination),
                  expectedDestination(kernel, d, 6,
                                      [&](uint32_t i, uint32_t c, int64_t v, int64_t u) {
                                        return padded(p, x, i, c, v, u);
                                      }),
                  f);
    }
}

TEST_CASE("pad: errors") {
  Image source(context(), {5, 4, 3, 1, ChannelFormat::float32, ImageUsage::all, "x"});
  Image destination(context(), {16, 16, 3, 1, ChannelFormat::float32});
  CommandBuffer cb(context());
  Pad left(context(), {PadMode::reflect, 0, 5, 0, 0});
  VKCNN_CHECK_ERROR(left.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "reflect padding left 5 needs a source width above 5; source 'x' is 5x4");
  Pad bottom(context(), {PadMode::reflect, 0, 0, 4, 0});
  VKCNN_CHECK_ERROR(bottom.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "reflect padding bottom 4");
  Pad fine(context(), {PadMode::reflect, 3, 4, 3, 4});  // the largest reflect allows
  Pad crop(context(), {PadMode::constant, 0, -3, 0, -2});
  VKCNN_CHECK_ERROR(crop.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "gives an empty output 0x4");
  VKCNN_CHECK_ERROR(crop.encode(cb, source), ErrorCode::invalidArgument, "empty output");
  CHECK(cb.encodingStatistics().dispatches == 0);
  fine.encode(cb, source, destination);
  CHECK(cb.encodingStatistics().dispatches == 1);
  VKCNN_CHECK_ERROR(Pad(context(), {PadMode(4)}), ErrorCode::invalidArgument, "pad mode 4");
  cb.commit();
  cb.waitUntilCompleted();
}
