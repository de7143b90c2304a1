// Max, average and global pooling against double-precision references: kernels 1-5 (even too),
// strides 1-3, both padding modes, ceil mode, count_include_pad both ways, dilation, swept channel
// counts, batch sub-ranges, clip rectangles, offsets and channel windows at any destination
// channel offset. Destinations are poisoned with NaN: every element inside the clip must be
// written and nothing outside it touched.
#include <vkcnn/neuron.h>
#include <vkcnn/pooling.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr uint32_t kChannelCounts[] = {1, 3, 4, 5, 13, 17, 32};

// Geometry of one encode call, applied to the kernel and mirrored by the reference.
struct Placement {
  Offset offset;
  ClipRect clip;
  uint32_t sourceChannelOffset = 0;
  uint32_t sourceChannelMaxCount = kWholeExtent;
  uint32_t destinationChannelOffset = 0;
};

void place(Kernel& kernel, const Placement& p) {
  kernel.offset = p.offset;
  kernel.clipRect = p.clip;
  kernel.sourceFeatureChannelOffset = p.sourceChannelOffset;
  kernel.sourceFeatureChannelMaxCount = p.sourceChannelMaxCount;
  kernel.destinationFeatureChannelOffset = p.destinationChannelOffset;
}

struct Region {
  uint32_t x, y, z, width, height, depth;
};

Region resolve(const ClipRect& c, uint32_t width, uint32_t height, uint32_t images) {
  return {c.x,
          c.y,
          c.z,
          c.width == kWholeExtent ? width - c.x : c.width,
          c.height == kWholeExtent ? height - c.y : c.height,
          c.depth == kWholeExtent ? images - c.z : c.depth};
}

// `expected` holds NaN where the destination must keep its poison. Checks both that and the
// relative L2 error over the written elements.

uint32_t dilated(uint32_t kernel, uint32_t dilation) {
  return (kernel - 1) * dilation + 1;
}

// The output size PyTorch / ONNX give (explicit padding) or MPS gives (mpsDefault).
uint32_t expectedPooledSize(uint32_t size, uint32_t kernel, uint32_t stride, uint32_t dilation,
                            uint32_t padBegin, uint32_t padEnd, const Padding& padding) {
  if (padding.mode == Padding::Mode::mpsDefault) return (size + stride - 1) / stride;
  const double span = double(size + padBegin + padEnd) - dilated(kernel, dilation);
  if (!padding.ceilMode) return uint32_t(std::floor(span / stride)) + 1;
  uint32_t out = uint32_t(std::ceil(span / stride)) + 1;
  if ((out - 1) * stride >= size + padBegin) --out;
  return out;
}

double poolWindow(const Tensor& x, uint32_t image, uint32_t channel, int64_t startX, int64_t startY,
                  const PoolingDescriptor& d, bool average) {
  const bool mps = d.padding.mode == Padding::Mode::mpsDefault;
  double largest = -std::numeric_limits<double>::infinity(), sum = 0;
  int inside = 0, counted = 0;
  for (uint32_t ky = 0; ky < d.kernelHeight; ++ky)
    for (uint32_t kx = 0; kx < d.kernelWidth; ++kx) {
      const int64_t y = startY + int64_t(ky) * d.dilationRateY;
      const int64_t xx = startX + int64_t(kx) * d.dilationRateX;
      const bool in = y >= 0 && xx >= 0 && y < int64_t(x.h) && xx < int64_t(x.w);
      if (in) {
        const double v = x.at(image, channel, uint32_t(y), uint32_t(xx));
        largest = nanMax(largest, v);
        sum += v;
        ++inside;
      }
      bool counts = in;
      if (d.countIncludePad)
        counts = mps ||
                 (xx >= -int64_t(d.padding.left) && xx < int64_t(x.w) + int64_t(d.padding.right) &&
                  y >= -int64_t(d.padding.top) && y < int64_t(x.h) + int64_t(d.padding.bottom));
      counted += counts;
    }
  if (average) return counted ? sum / counted : 0;
  return inside ? largest : 0;
}

// Expected destination (NaN where untouched) for a pooling kernel placed by `p`.
Tensor referencePooling(const Tensor& x, uint32_t dn, uint32_t dc, uint32_t dh, uint32_t dw,
                        const PoolingDescriptor& d, bool average, const Placement& p) {
  Tensor expected(dn, dc, dh, dw, kNaN);
  const Region r = resolve(p.clip, dw, dh, dn);
  const uint32_t channels = std::min(p.sourceChannelMaxCount, x.c - p.sourceChannelOffset);
  const bool mps = d.padding.mode == Padding::Mode::mpsDefault;
  const int64_t shiftX =
      mps ? int64_t(dilated(d.kernelWidth, d.dilationRateX) >> 1) : int64_t(d.padding.left);
  const int64_t shiftY =
      mps ? int64_t(dilated(d.kernelHeight, d.dilationRateY) >> 1) : int64_t(d.padding.top);
  for (uint32_t i = 0; i < r.depth; ++i)
    for (uint32_t c = 0; c < channels; ++c)
      for (uint32_t py = r.y; py < r.y + r.height; ++py)
        for (uint32_t px = r.x; px < r.x + r.width; ++px) {
          const int64_t sx = int64_t(px - r.x) * d.strideInPixelsX + p.offset.x - shiftX;
          const int64_t sy = int64_t(py - r.y) * d.strideInPixelsY + p.offset.y - shiftY;
          expected.at(r.z + i, p.destinationChannelOffset + c, py, px) = poolWindow(
              x, uint32_t(p.offset.z) + i, p.sourceChannelOffset + c, sx, sy, d, average);
        }
  return expected;
}

std::unique_ptr<Pooling> makePooling(bool average, const PoolingDescriptor& d) {
  if (average) return std::make_unique<PoolingAverage>(context(), d);
  return std::make_unique<PoolingMax>(context(), d);
}

struct PoolCase {
  bool average = false;
  PoolingDescriptor descriptor;
  uint32_t n = 1, c = 1, h = 1, w = 1;
  ChannelFormat format = ChannelFormat::float32;
  Placement placement;
  // Destination shape; 0: the natural one (its images: n - offset.z, its channels: the window
  // at the destination channel offset).
  uint32_t dn = 0, dc = 0, dh = 0, dw = 0;
};

void runPoolCase(const PoolCase& pc, uint32_t seed) {
  const PoolingDescriptor& d = pc.descriptor;
  Tensor x = roundedTo(randomTensor(pc.n, pc.c, pc.h, pc.w, seed, -2, 2), pc.format);
  auto kernel = makePooling(pc.average, d);
  place(*kernel, pc.placement);
  const uint32_t naturalW =
      expectedPooledSize(pc.w, d.kernelWidth, d.strideInPixelsX, d.dilationRateX, d.padding.left,
                         d.padding.right, d.padding);
  const uint32_t naturalH =
      expectedPooledSize(pc.h, d.kernelHeight, d.strideInPixelsY, d.dilationRateY, d.padding.top,
                         d.padding.bottom, d.padding);
  CHECK(kernel->destinationWidth(pc.w) == naturalW);
  CHECK(kernel->destinationHeight(pc.h) == naturalH);
  const Placement& p = pc.placement;
  const uint32_t window = std::min(p.sourceChannelMaxCount, pc.c - p.sourceChannelOffset);
  const uint32_t dn = pc.dn ? pc.dn : pc.n - uint32_t(p.offset.z);
  const uint32_t dc = pc.dc ? pc.dc : p.destinationChannelOffset + window;
  const uint32_t dh = pc.dh ? pc.dh : naturalH, dw = pc.dw ? pc.dw : naturalW;
  Image source = makeImage(x, pc.format, "x");
  Image destination = makePoisoned(context(), {dw, dh, dc, dn, pc.format, ImageUsage::all, "y"});
  runOnce([&](CommandBuffer& cb) { kernel->encode(cb, source, destination); });
  compare(download(destination), referencePooling(x, dn, dc, dh, dw, d, pc.average, p),
          tolerance(pc.format));
}

PoolingDescriptor descriptorFor(uint32_t kernel, uint32_t stride, int paddingKind,
                                bool countIncludePad) {
  // paddingKind 0: mpsDefault; 1: explicit, asymmetric; 2: explicit with ceil mode.
  Padding padding;
  if (paddingKind > 0) {
    padding = Padding::explicitPadding(kernel / 2, (kernel - 1) / 2, (kernel - 1) / 3, kernel / 2);
    padding.ceilMode = paddingKind == 2;
  }
  PoolingDescriptor d = PoolingDescriptor::of(kernel, kernel, stride, stride, padding);
  d.countIncludePad = countIncludePad;
  return d;
}

}  // namespace

TEST_CASE("pooling: ceil mode and count_include_pad match hand-computed PyTorch values") {
  // AvgPool2d(3, stride 2, padding 1, ceil_mode) on a 4x4 image of ones: 3x3 output. The last
  // window [3, 6) runs past the padded edge 5; that position never counts.
  Tensor ones(1, 1, 4, 4, 1.0);
  Image source = makeImage(ones, ChannelFormat::float32);
  PoolingDescriptor d = PoolingDescriptor::of(3, 3, 2, 2, Padding::explicitPadding(1, 1, 1, 1));
  d.padding.ceilMode = true;
  d.countIncludePad = true;
  PoolingAverage includePad(context(), d);
  d.countIncludePad = false;
  PoolingAverage excludePad(context(), d);
  CHECK(includePad.destinationWidth(4) == 3);
  Image withPad = makePoisoned(context(), {3, 3, 1, 1, ChannelFormat::float32});
  Image withoutPad = makePoisoned(context(), {3, 3, 1, 1, ChannelFormat::float32});
  runOnce([&](CommandBuffer& cb) {
    includePad.encode(cb, source, withPad);
    excludePad.encode(cb, source, withoutPad);
  });
  Tensor a = download(withPad), b = download(withoutPad);
  const double along[3] = {2.0 / 3, 1.0, 1.0 / 2};  // inside / counted, per axis
  for (uint32_t y = 0; y < 3; ++y)
    for (uint32_t x = 0; x < 3; ++x) {
      CHECK(a.at(0, 0, y, x) == doctest::Approx(along[y] * along[x]).epsilon(1e-6));
      CHECK(b.at(0, 0, y, x) == doctest::Approx(1.0).epsilon(1e-6));
    }
  CHECK(a.at(0, 0, 2, 2) == doctest::Approx(0.25).epsilon(1e-6));  // 1 of 4, not 1 of 9

  // Max pooling never sees padding as zero: an all-negative image stays negative at the edges.
  Tensor negative(1, 5, 5, 5, -3.0);
  Image negativeSource = makeImage(negative, ChannelFormat::float32);
  PoolingMax max(context(),
                 PoolingDescriptor::of(3, 3, 2, 2, Padding::explicitPadding(1, 1, 1, 1)));
  Image pooled = makePoisoned(context(), {3, 3, 5, 1, ChannelFormat::float32});
  runOnce([&](CommandBuffer& cb) { max.encode(cb, negativeSource, pooled); });
  for (double v : download(pooled).data) CHECK(v == -3.0);
}

TEST_CASE("pooling: kernels 1-5, strides 1-3, padding modes, ceil mode and count_include_pad") {
  uint32_t seed = 1;
  for (uint32_t kernel = 1; kernel <= 5; ++kernel)
    for (uint32_t stride = 1; stride <= 3; ++stride)
      for (int paddingKind = 0; paddingKind < 3; ++paddingKind)
        for (int variant = 0; variant < 3; ++variant) {  // max, average, average incl. padding
          PoolCase pc;
          pc.average = variant > 0;
          pc.descriptor = descriptorFor(kernel, stride, paddingKind, variant == 2);
          pc.c = kChannelCounts[seed % 7];
          pc.w = 5 + seed % 4;        // 5..8: odd and even
          pc.h = 4 + (seed / 3) % 5;  // 4..8
          CAPTURE(kernel);
          CAPTURE(stride);
          CAPTURE(paddingKind);
          CAPTURE(variant);
          CAPTURE(pc.c);
          CAPTURE(pc.w);
          CAPTURE(pc.h);
          runPoolCase(pc, seed++);
        }
}

TEST_CASE("pooling: rectangular kernels, unequal strides and dilation") {
  struct Shape {
    uint32_t kw, kh, sx, sy, dx, dy;
  };
  const Shape shapes[] = {{2, 3, 1, 2, 1, 1}, {4, 1, 3, 1, 1, 1}, {3, 3, 1, 1, 2, 2},
                          {2, 2, 2, 1, 2, 3}, {5, 2, 2, 3, 1, 2}, {1, 4, 2, 2, 3, 1}};
  uint32_t seed = 300;
  for (const Shape& s : shapes)
    for (int paddingKind = 0; paddingKind < 3; ++paddingKind)
      for (int variant = 0; variant < 3; ++variant) {
        PoolCase pc;
        pc.average = variant > 0;
        PoolingDescriptor& d = pc.descriptor;
        d = PoolingDescriptor::of(s.kw, s.kh, s.sx, s.sy);
        d.dilationRateX = s.dx;
        d.dilationRateY = s.dy;
        d.countIncludePad = variant == 2;
        if (paddingKind > 0) {
          const uint32_t wx = dilated(s.kw, s.dx), wy = dilated(s.kh, s.dy);
          d.padding = Padding::explicitPadding(wy / 2, wx / 2, (wy - 1) / 2, (wx - 1) / 2);
          d.padding.ceilMode = paddingKind == 2;
        }
        pc.c = kChannelCounts[seed % 7];
        pc.w = 9 + seed % 2;
        pc.h = 8 + seed % 3;
        CAPTURE(s.kw);
        CAPTURE(s.kh);
        CAPTURE(s.dx);
        CAPTURE(s.dy);
        CAPTURE(paddingKind);
        CAPTURE(variant);
        runPoolCase(pc, seed++);
      }
}

TEST_CASE("pooling: batch sub-ranges, clip rectangles, offsets and channel windows") {
  uint32_t seed = 500;
  // Source batch 4, destination batch 3: source images 1, 2 go to destination images 1, 2.
  for (bool average : {false, true}) {
    for (uint32_t channels : {5u, 13u, 17u}) {
      PoolCase pc;
      pc.average = average;
      pc.descriptor = descriptorFor(3, 2, 1, average);
      pc.n = 4;
      pc.c = channels;
      pc.h = 7;
      pc.w = 8;
      pc.placement.offset.z = 1;
      pc.placement.clip.z = 1;
      pc.placement.clip.depth = 2;
      pc.dn = 3;
      CAPTURE(average);
      CAPTURE(channels);
      runPoolCase(pc, seed++);
    }
  }
  // A clip inside the destination with an offset in x and y (windows partly or wholly outside).
  for (int paddingKind : {0, 2}) {
    for (bool average : {false, true}) {
      PoolCase pc;
      pc.average = average;
      pc.descriptor = descriptorFor(3, 2, paddingKind, true);
      pc.c = 6;
      pc.h = 9;
      pc.w = 10;
      pc.placement.clip = {1, 2, 0, 3, 2, kWholeExtent};
      pc.placement.offset = {-3, 4, 0};
      CAPTURE(paddingKind);
      CAPTURE(average);
      runPoolCase(pc, seed++);
    }
  }
  // Source channel windows into aligned and unaligned destination channel offsets.
  for (uint32_t sourceOffset : {0u, 1u, 4u, 6u})
    for (uint32_t destinationOffset : {0u, 1u, 3u, 4u, 6u}) {
      PoolCase pc;
      pc.average = (sourceOffset + destinationOffset) % 2 == 1;
      pc.descriptor = descriptorFor(2, 2, 0, false);
      pc.n = 2;
      pc.c = 17;
      pc.h = 5;
      pc.w = 6;
      pc.placement.sourceChannelOffset = sourceOffset;
      pc.placement.sourceChannelMaxCount = 9;
      pc.placement.destinationChannelOffset = destinationOffset;
      pc.dc = destinationOffset + 9 + 3;  // channels beyond the written ones keep their poison
      CAPTURE(sourceOffset);
      CAPTURE(destinationOffset);
      runPoolCase(pc, seed++);
    }
}

TEST_CASE("pooling: float16 storage on small shapes") {
  uint32_t seed = 700;
  for (int variant = 0; variant < 3; ++variant)
    for (int paddingKind = 0; paddingKind < 3; ++paddingKind) {
      PoolCase pc;
      pc.format = ChannelFormat::float16;
      pc.average = variant > 0;
      pc.descriptor = descriptorFor(2 + variant, 1 + paddingKind, paddingKind, variant == 2);
      pc.c = kChannelCounts[(seed % 4) + 1];  // 3, 4, 5, 13
      pc.h = 5;
      pc.w = 6;
      pc.placement.destinationChannelOffset = paddingKind;
      CAPTURE(variant);
      CAPTURE(paddingKind);
      runPoolCase(pc, seed++);
    }
}

TEST_CASE("pooling: a unorm8 picture pools into a float32 destination") {
  // Sources are sampled, so an 8-bit input picture reads as [0, 1] like any other format.
  Tensor x = roundedTo(randomTensor(1, 3, 7, 6, 750, 0, 1), ChannelFormat::unorm8);
  Image source = makeImage(x, ChannelFormat::unorm8);
  for (bool average : {false, true}) {
    PoolingDescriptor d = descriptorFor(3, 2, 2, average);
    auto kernel = makePooling(average, d);
    const uint32_t w = kernel->destinationWidth(6), h = kernel->destinationHeight(7);
    Image destination = makePoisoned(context(), {w, h, 3, 1, ChannelFormat::float32});
    runOnce([&](CommandBuffer& cb) { kernel->encode(cb, source, destination); });
    CAPTURE(average);
    compare(download(destination), referencePooling(x, 1, 3, h, w, d, average, Placement{}),
            tolerance(ChannelFormat::float32));
  }
}

TEST_CASE("pooling: a temporary destination gets the natural output shape") {
  Tensor x = randomTensor(2, 5, 7, 9, 800);
  Image source = makeImage(x, ChannelFormat::float32);
  PoolingDescriptor d = PoolingDescriptor::of(3, 2, 2, 2, Padding::explicitPadding(1, 1, 0, 1));
  d.padding.ceilMode = true;
  PoolingMax max(context(), d);
  const uint32_t w = expectedPooledSize(9, 3, 2, 1, 1, 1, d.padding);
  const uint32_t h = expectedPooledSize(7, 2, 2, 1, 1, 0, d.padding);
  Image destination = makePoisoned(context(), {w, h, 5, 2, ChannelFormat::float32});
  Neuron copy(context(), NeuronDescriptor::of(NeuronType::none));
  runOnce([&](CommandBuffer& cb) {
    TemporaryImage pooled = max.encode(cb, source);
    CHECK(pooled.width() == w);
    CHECK(pooled.height() == h);
    CHECK(pooled.featureChannels() == 5);
    CHECK(pooled.numberOfImages() == 2);
    copy.encode(cb, pooled, destination);
  });
  compare(download(destination), referencePooling(x, 2, 5, h, w, d, false, Placement{}),
          tolerance(ChannelFormat::float32));
}

// ---- Global pooling -----------------------------------------------------------------------------

namespace {

Tensor referenceGlobal(const Tensor& x, uint32_t dn, uint32_t dc, uint32_t dh, uint32_t dw,
                       bool average, const Placement& p) {
  Tensor expected(dn, dc, dh, dw, kNaN);
  const Region r = resolve(p.clip, dw, dh, dn);
  const uint32_t channels = std::min(p.sourceChannelMaxCount, x.c - p.sourceChannelOffset);
  for (uint32_t i = 0; i < r.depth; ++i)
    for (uint32_t c = 0; c < channels; ++c) {
      double sum = 0, largest = -std::numeric_limits<double>::infinity();
      for (uint32_t y = 0; y < x.h; ++y)
        for (uint32_t xx = 0; xx < x.w; ++xx) {
          const double v = x.at(uint32_t(p.offset.z) + i, p.sourceChannelOffset + c, y, xx);
          sum += v;
          largest = nanMax(largest, v);
        }
      const double value = average ? sum / (double(x.w) * x.h) : largest;
      for (uint32_t py = r.y; py < r.y + r.height; ++py)
        for (uint32_t px = r.x; px < r.x + r.width; ++px)
          expected.at(r.z + i, p.destinationChannelOffset + c, py, px) = value;
    }
  return expected;
}

void runGlobalCase(bool average, uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                   ChannelFormat format, const Placement& p, uint32_t dn, uint32_t dc, uint32_t dh,
                   uint32_t dw, uint32_t seed) {
  // Values around 0.5 keep the mean far from zero, so its relative error means something.
  Tensor x = roundedTo(randomTensor(n, c, h, w, seed, -0.5, 1.5), format);
  std::unique_ptr<GlobalPooling> kernel;
  if (average)
    kernel = std::make_unique<GlobalPoolingAverage>(context());
  else
    kernel = std::make_unique<GlobalPoolingMax>(context());
  place(*kernel, p);
  CHECK(kernel->destinationWidth(w) == 1);
  CHECK(kernel->destinationHeight(h) == 1);
  Image source = makeImage(x, format, "x");
  Image destination = makePoisoned(context(), {dw, dh, dc, dn, format, ImageUsage::all, "y"});
  runOnce([&](CommandBuffer& cb) { kernel->encode(cb, source, destination); });
  compare(download(destination), referenceGlobal(x, dn, dc, dh, dw, average, p), tolerance(format));
}

}  // namespace

TEST_CASE("global pooling: sizes from 1x1 to 64x64 and swept channel counts") {
  struct Size {
    uint32_t w, h;
  };
  const Size sizes[] = {{1, 1},   {7, 7},   {13, 5},    {2, 9},
                        {64, 64}, {100, 3}, {160, 120}, {256, 256}};
  uint32_t seed = 900;
  for (bool average : {false, true})
    for (const Size& s : sizes) {
      const uint32_t c = kChannelCounts[seed % 7];
      CAPTURE(average);
      CAPTURE(s.w);
      CAPTURE(s.h);
      CAPTURE(c);
      runGlobalCase(average, 2, c, s.h, s.w, ChannelFormat::float32, Placement{}, 2, c, 1, 1,
                    seed++);
    }
}

TEST_CASE("global pooling: batch sub-range, clip, channel windows and float16") {
  uint32_t seed = 950;
  for (bool average : {false, true}) {
    // Source images 1, 2 of 4 into destination images 0, 1 of 2; a 3x2 destination whose clip
    // covers 2x1 pixels, channels 3..12 of the source at destination channel offset 5.
    Placement p;
    p.offset.z = 1;
    p.clip = {1, 1, 0, 2, 1, 2};
    p.sourceChannelOffset = 3;
    p.sourceChannelMaxCount = 10;
    p.destinationChannelOffset = 5;
    CAPTURE(average);
    runGlobalCase(average, 4, 17, 13, 5, ChannelFormat::float32, p, 2, 17, 2, 3, seed++);
    for (uint32_t destinationOffset : {0u, 1u, 2u, 4u}) {
      Placement q;
      q.destinationChannelOffset = destinationOffset;
      CAPTURE(destinationOffset);
      runGlobalCase(average, 1, 5, 7, 7, ChannelFormat::float16, q, 1, destinationOffset + 5, 1, 1,
                    seed++);
    }
  }
}

// ---- NaN and infinities -------------------------------------------------------------------------

TEST_CASE("pooling: NaN and infinities propagate as in PyTorch (max, average, global)") {
  // A NaN in the window is the maximum (GLSL's max may drop it: glsl/nan.glsl), +inf and -inf
  // order as numbers, and the average sums them (inf - inf is NaN). Poisoned with a finite value
  // so that an unwritten element fails too.
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16})
    for (bool average : {false, true}) {
      CAPTURE(std::string(toString(format)));
      CAPTURE(average);
      const double tolerance = format == ChannelFormat::float32 ? 1e-5 : 2e-3;
      Tensor x = roundedTo(randomTensor(1, 6, 9, 9, 77, -2, 2), format);
      sprinkleSpecials(x.data, 23, 5);
      Image source = makeImage(x, format, "x");
      const PoolingDescriptor d = descriptorFor(3, 2, 1, false);
      auto kernel = makePooling(average, d);
      const uint32_t w = kernel->destinationWidth(9), h = kernel->destinationHeight(9);
      Image pooled(context(), {w, h, 6, 1, format});
      fill(pooled, 1234.f);
      std::unique_ptr<GlobalPooling> global;
      if (average)
        global = std::make_unique<GlobalPoolingAverage>(context());
      else
        global = std::make_unique<GlobalPoolingMax>(context());
      Image reduced(context(), {1, 1, 6, 1, format});
      fill(reduced, 1234.f);
      runOnce([&](CommandBuffer& cb) {
        kernel->encode(cb, source, pooled);
        global->encode(cb, source, reduced);
      });
      compareSpecials(download(pooled), referencePooling(x, 1, 6, h, w, d, average, Placement{}),
                      tolerance);
      compareSpecials(download(reduced), referenceGlobal(x, 1, 6, 1, 1, average, Placement{}),
                      tolerance);
    }
}

// ---- Errors -------------------------------------------------------------------------------------

TEST_CASE("pooling: bad descriptors and shapes are errors before anything is encoded") {
  auto with = [](auto change) {
    PoolingDescriptor d = PoolingDescriptor::of(3, 3, 2, 2);
    change(d);
    return d;
  };
  VKCNN_CHECK_ERROR(PoolingMax(context(), with([](auto& d) { d.kernelWidth = 0; })),
                    ErrorCode::invalidArgument, "kernelWidth is 0");
  VKCNN_CHECK_ERROR(PoolingAverage(context(), with([](auto& d) { d.kernelHeight = 0; })),
                    ErrorCode::invalidArgument, "kernelHeight is 0");
  VKCNN_CHECK_ERROR(PoolingMax(context(), with([](auto& d) { d.strideInPixelsY = 0; })),
                    ErrorCode::invalidArgument, "strideInPixelsY is 0");
  VKCNN_CHECK_ERROR(PoolingMax(context(), with([](auto& d) { d.dilationRateX = 0; })),
                    ErrorCode::invalidArgument, "dilationRateX is 0");
  VKCNN_CHECK_ERROR(PoolingMax(context(), with([](auto& d) { d.padding.ceilMode = true; })),
                    ErrorCode::invalidArgument, "ceilMode");
  VKCNN_CHECK_ERROR(PoolingAverage(context(), with([](auto& d) {
                                     d.padding = Padding::explicitPadding(0, 3, 0, 0);
                                   })),
                    ErrorCode::invalidArgument, "padding left 3");
  VKCNN_CHECK_ERROR(PoolingMax(context(), with([](auto& d) {
                                 d.padding = Padding::explicitPadding(0, 0, 4, 0);
                               })),
                    ErrorCode::invalidArgument, "padding bottom 4");

  // A window larger than the padded source has no output size.
  PoolingMax wide(context(),
                  PoolingDescriptor::of(5, 1, 1, 1, Padding::explicitPadding(0, 1, 0, 0)));
  VKCNN_CHECK_ERROR(wide.destinationWidth(3), ErrorCode::invalidArgument, "larger than the padded");
  Image small(context(), {3, 3, 4, 2, ChannelFormat::float32});
  Image destination(context(), {2, 2, 4, 2, ChannelFormat::float32});
  CommandBuffer cb(context());
  VKCNN_CHECK_ERROR(wide.encode(cb, small), ErrorCode::invalidArgument, "horizontal window");

  PoolingMax max(context(), PoolingDescriptor::of(2, 2, 2, 2));
  max.destinationFeatureChannelOffset = 1;
  VKCNN_CHECK_ERROR(max.encode(cb, small, destination), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset");
  max.destinationFeatureChannelOffset = 0;
  max.offset.z = 1;
  VKCNN_CHECK_ERROR(max.encode(cb, small, destination), ErrorCode::invalidArgument, "offset.z");

  GlobalPoolingAverage global(context());
  global.offset.x = 1;
  VKCNN_CHECK_ERROR(global.encode(cb, small, destination), ErrorCode::invalidArgument,
                    "global pooling always reduces the whole source");
  global.offset = {};
  global.clipRect.x = 2;
  VKCNN_CHECK_ERROR(global.encode(cb, small, destination), ErrorCode::invalidArgument, "clipRect");

  // Windows, strides, offsets and padding past the shaders' 32-bit coordinates (fuzz_descriptors
  // found the window origin overflowing int32 on the host).
  VKCNN_CHECK_ERROR(PoolingMax(context(), with([](auto& d) { d.dilationRateX = 1u << 30; })),
                    ErrorCode::limitExceeded, "dilated window 2147483649x3");
  VKCNN_CHECK_ERROR(PoolingMax(context(), with([](auto& d) { d.strideInPixelsY = 1u << 31; })),
                    ErrorCode::limitExceeded, "stride 2x2147483648");
  // A 2-tap window dilated to INT32_MAX pixels may be padded by nearly as much.
  PoolingDescriptor far = PoolingDescriptor::of(2, 1, 1, 1);
  far.dilationRateX = 0x7ffffffe;
  far.padding = Padding::explicitPadding(0, 0x7ffffffd, 0, 0x7ffffffd);
  far.countIncludePad = true;
  PoolingAverage farAverage(context(), far);
  VKCNN_CHECK_ERROR(farAverage.encode(cb, small, destination), ErrorCode::limitExceeded,
                    "counted area right 2147483648");
  PoolingMax farMax(context(), far);
  farMax.offset.x = -4;  // the window starts at -4 - 0x7ffffffd, one below INT32_MIN
  VKCNN_CHECK_ERROR(farMax.encode(cb, small, destination), ErrorCode::limitExceeded,
                    "window origin x -2147483649");
  CHECK(cb.encodingStatistics().dispatches == 0);
}
