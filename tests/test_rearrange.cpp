// Channel shuffle, DepthToSpace (DCR, CRD) and SpaceToDepth against double-precision references:
// whole tensors against the literal reshape -> transpose -> reshape of torch and the ONNX
// specification, and clipped, offset, batch-ranged and channel-windowed encodes against the
// per-element formulas documented in vkcnn/rearrange.h.
#include <vkcnn/rearrange.h>

#include <cmath>
#include <functional>
#include <limits>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// numpy's reshape(shape).transpose(perm) of a row-major array, flattened again.
std::vector<double> permute(const std::vector<double>& data, const std::vector<uint32_t>& shape,
                            const std::vector<uint32_t>& perm) {
  const size_t rank = shape.size();
  std::vector<size_t> stride(rank, 1);
  for (size_t d = rank - 1; d > 0; --d) stride[d - 1] = stride[d] * shape[d];
  std::vector<uint32_t> outShape(rank);
  for (size_t d = 0; d < rank; ++d) outShape[d] = shape[perm[d]];
  std::vector<double> out(data.size());
  std::vector<uint32_t> index(rank, 0);  // index into the output
  for (size_t o = 0; o < out.size(); ++o) {
    size_t source = 0;
    for (size_t d = 0; d < rank; ++d) source += index[d] * stride[perm[d]];
    out[o] = data[source];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < outShape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

Tensor reshaped(std::vector<double> data, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
  Tensor t(n, c, h, w);
  REQUIRE(data.size() == t.data.size());
  t.data = std::move(data);
  return t;
}

// torch.nn.ChannelShuffle: view [N, g, C/g, H, W], transpose(1, 2), flatten.
Tensor shuffleReference(const Tensor& x, uint32_t g) {
  return reshaped(permute(x.data, {x.n, g, x.c / g, x.h, x.w}, {0, 2, 1, 3, 4}), x.n, x.c, x.h,
                  x.w);
}

// The ONNX specification's numpy reference implementations.
Tensor depthToSpaceReference(const Tensor& x, uint32_t b, DepthToSpace::Mode mode) {
  const uint32_t c = x.c / (b * b);
  std::vector<double> y = mode == DepthToSpace::Mode::DCR
                              ? permute(x.data, {x.n, b, b, c, x.h, x.w}, {0, 3, 4, 1, 5, 2})
                              : permute(x.data, {x.n, c, b, b, x.h, x.w}, {0, 1, 4, 2, 5, 3});
  return reshaped(std::move(y), x.n, c, x.h * b, x.w * b);
}

Tensor spaceToDepthReference(const Tensor& x, uint32_t b) {
  return reshaped(permute(x.data, {x.n, x.c, x.h / b, b, x.w / b, b}, {0, 3, 5, 1, 2, 4}), x.n,
                  x.c * b * b, x.h / b, x.w / b);
}

// Exact comparison where `expected` is NaN only where the destination must keep its poison.
bool matches(const Tensor& actual, const Tensor& expected, double tol) {
  REQUIRE(actual.data.size() == expected.data.size());
  double diff = 0, norm = 0;
  size_t misplaced = 0;
  for (size_t i = 0; i < actual.data.size(); ++i) {
    const double a = actual.data[i], e = expected.data[i];
    if (std::isnan(e) || std::isnan(a)) {
      misplaced += std::isnan(e) != std::isnan(a);
      continue;
    }
    diff += (a - e) * (a - e);
    norm += e * e;
  }
  const double error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  INFO("NaN mismatches: " << misplaced << ", relative L2: " << error);
  CHECK(misplaced == 0);
  CHECK(error <= tol);
  return misplaced == 0 && error <= tol;
}

// What `kernel` must leave in a destination poisoned with NaN (shape `dst`): element (i, o, p) of
// the written region is value(source image, output window channel o, p - clip origin).
using ValueAt = std::function<double(uint32_t image, uint32_t o, int64_t qx, int64_t qy)>;

Tensor expected(const UnaryKernel& kernel, const ImageDescriptor& destination,
                uint32_t sourceWindow, const ValueAt& value) {
  Tensor y(destination.numberOfImages, destination.featureChannels, destination.height,
           destination.width, kNaN);
  const ClipRect& clip = kernel.clipRect;
  const uint32_t n = clip.depth == kWholeExtent ? destination.numberOfImages - clip.z : clip.depth;
  const uint32_t w = clip.width == kWholeExtent ? destination.width - clip.x : clip.width;
  const uint32_t h = clip.height == kWholeExtent ? destination.height - clip.y : clip.height;
  const uint32_t outChannels = kernel.destinationFeatureChannels(sourceWindow);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t o = 0; o < outChannels; ++o)
      for (uint32_t qy = 0; qy < h; ++qy)
        for (uint32_t qx = 0; qx < w; ++qx)
          y.at(clip.z + i, kernel.destinationFeatureChannelOffset + o, clip.y + qy, clip.x + qx) =
              value(uint32_t(kernel.offset.z) + i, o, qx, qy);
  return y;
}

// Source channel `c` of the kernel's window (zero outside the image).
double sourceAt(const Tensor& x, const UnaryKernel& k, uint32_t image, uint32_t c, int64_t sx,
                int64_t sy) {
  return x.atOrZero(image, k.sourceFeatureChannelOffset + c, sy, sx);
}

ValueAt shuffleValue(const Tensor& x, const ChannelShuffle& k, uint32_t window) {
  const uint32_t g = k.groups();
  return [&x, &k, g, window](uint32_t i, uint32_t o, int64_t qx, int64_t qy) {
    const uint32_t c = (o % g) * (window / g) + o / g;
    return sourceAt(x, k, i, c, qx + k.offset.x, qy + k.offset.y);
  };
}

ValueAt depthToSpaceValue(const Tensor& x, const DepthToSpace& k, uint32_t window) {
  const uint32_t b = k.blockSize(), depth = window / (b * b);
  return [&x, &k, b, depth](uint32_t i, uint32_t o, int64_t qx, int64_t qy) {
    const uint32_t bx = uint32_t(qx % b), by = uint32_t(qy % b);
    const uint32_t c =
        k.mode() == DepthToSpace::Mode::DCR ? (by * b + bx) * depth + o : o * b * b + by * b + bx;
    return sourceAt(x, k, i, c, qx / b + k.offset.x, qy / b + k.offset.y);
  };
}

ValueAt spaceToDepthValue(const Tensor& x, const SpaceToDepth& k, uint32_t window) {
  const uint32_t b = k.blockSize();
  return [&x, &k, b, window](uint32_t i, uint32_t o, int64_t qx, int64_t qy) {
    const uint32_t block = o / window, c = o % window;
    return sourceAt(x, k, i, c, qx * b + k.offset.x + block % b, qy * b + k.offset.y + block / b);
  };
}

Tensor run(UnaryKernel& kernel, const Image& source, const ImageDescriptor& destination) {
  Image y = makePoisoned(context(), destination);
  runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, y); });
  return download(y);
}

Tensor runWhole(UnaryKernel& kernel, const Tensor& x, ChannelFormat format) {
  Image source = makeImage(x, format, "x");
  ImageDescriptor d = kernel.destinationImageDescriptor(source);
  d.channelFormat = format;
  return run(kernel, source, d);
}

}  // namespace

TEST_CASE("rearrange: the reshape/transpose references agree with the documented formulas") {
  // Guards the references themselves: two independent derivations of each mapping.
  Tensor x = randomTensor(2, 36, 3, 4, 1);
  for (uint32_t g : {2u, 3u, 4u}) {
    Tensor y = shuffleReference(x, g);
    bool ok = true;
    for (uint32_t o = 0; o < 36; ++o)
      ok &= y.at(1, o, 2, 3) == x.at(1, (o % g) * (36 / g) + o / g, 2, 3);
    CHECK(ok);
  }
  CHECK(shuffleReference(reshaped({0, 1, 2, 3, 4, 5}, 1, 6, 1, 1), 2).data ==
        std::vector<double>{0, 3, 1, 4, 2, 5});
  for (uint32_t b : {2u, 3u}) {
    const uint32_t depth = 36 / (b * b);
    Tensor dcr = depthToSpaceReference(x, b, DepthToSpace::Mode::DCR);
    Tensor crd = depthToSpaceReference(x, b, DepthToSpace::Mode::CRD);
    Tensor s2d = spaceToDepthReference(dcr, b);
    CHECK(s2d.data == x.data);  // SpaceToDepth inverts DCR
    bool ok = true;
    for (uint32_t c = 0; c < depth; ++c)
      for (uint32_t by = 0; by < b; ++by)
        for (uint32_t bx = 0; bx < b; ++bx) {
          ok &= dcr.at(1, c, 2 * b + by, 3 * b + bx) == x.at(1, (by * b + bx) * depth + c, 2, 3);
          ok &= crd.at(1, c, 1 * b + by, 0 * b + bx) == x.at(1, c * b * b + by * b + bx, 1, 0);
        }
    CHECK(ok);
  }
}

TEST_CASE("channel shuffle: groups 2, 3, 4 on 6, 12, 24, 36 channels") {
  for (uint32_t channels : {6u, 12u, 24u, 36u})
    for (uint32_t g : {2u, 3u, 4u}) {
      if (channels % g) continue;
      CAPTURE(channels);
      CAPTURE(g);
      Tensor x =
          roundedTo(randomTensor(2, channels, 3, 5, channels * 10 + g), ChannelFormat::float32);
      ChannelShuffle shuffle(context(), g);
      Tensor y = runWhole(shuffle, x, ChannelFormat::float32);
      CHECK(matches(y, shuffleReference(x, g), 0.0));
    }
}

TEST_CASE("depth to space: DCR and CRD, block sizes 2 and 3, odd sizes") {
  const std::pair<uint32_t, uint32_t> shapes[] = {{2, 4}, {2, 8},  {2, 12}, {2, 36},
                                                  {3, 9}, {3, 18}, {3, 36}};
  for (auto mode : {DepthToSpace::Mode::DCR, DepthToSpace::Mode::CRD})
    for (auto [b, channels] : shapes) {
      CAPTURE(toString(mode));
      CAPTURE(b);
      CAPTURE(channels);
      const uint32_t w = channels > 12 ? 3 : 5, h = channels > 12 ? 1 : 3;
      Tensor x =
          roundedTo(randomTensor(2, channels, h, w, b * 100 + channels), ChannelFormat::float32);
      DepthToSpace d2s(context(), b, mode);
      Tensor y = runWhole(d2s, x, ChannelFormat::float32);
      REQUIRE(y.w == w * b);
      REQUIRE(y.h == h * b);
      REQUIRE(y.c == channels / (b * b));
      CHECK(matches(y, depthToSpaceReference(x, b, mode), 0.0));
    }
}

TEST_CASE("space to depth: block sizes 2 and 3, odd block counts, odd channel counts") {
  for (uint32_t b : {2u, 3u})
    for (uint32_t channels : {1u, 3u, 4u, 5u, 13u}) {
      CAPTURE(b);
      CAPTURE(channels);
      const uint32_t w = 3 * b, h = (channels > 4 ? 1 : 5) * b;
      Tensor x =
          roundedTo(randomTensor(2, channels, h, w, b * 1000 + channels), ChannelFormat::float32);
      SpaceToDepth s2d(context(), b);
      Tensor y = runWhole(s2d, x, ChannelFormat::float32);
      REQUIRE(y.c == channels * b * b);
      CHECK(matches(y, spaceToDepthReference(x, b), 0.0));
    }
}

TEST_CASE("rearrange: float16 on small shapes") {
  const ChannelFormat f16 = ChannelFormat::float16;
  {
    Tensor x = roundedTo(randomTensor(1, 6, 3, 3, 7, -4, 4), f16);
    ChannelShuffle shuffle(context(), 3);
    CHECK(matches(runWhole(shuffle, x, f16), shuffleReference(x, 3), tolerance(f16)));
  }
  for (auto mode : {DepthToSpace::Mode::DCR, DepthToSpace::Mode::CRD}) {
    CAPTURE(toString(mode));
    Tensor x = roundedTo(randomTensor(1, 8, 3, 2, 8, -4, 4), f16);
    DepthToSpace d2s(context(), 2, mode);
    CHECK(matches(runWhole(d2s, x, f16), depthToSpaceReference(x, 2, mode), tolerance(f16)));
  }
  {
    Tensor x = roundedTo(randomTensor(1, 3, 6, 3, 9, -4, 4), f16);
    SpaceToDepth s2d(context(), 3);
    CHECK(matches(runWhole(s2d, x, f16), spaceToDepthReference(x, 3), tolerance(f16)));
  }
}

TEST_CASE("rearrange: batch sub-ranges, source windows and unaligned destination channel offsets") {
  // Source batch 3, destination batch 3: source images 1, 2 go to destination images 0, 1; the
  // window's channels land at `dstOffset` in a wider destination whose other channels keep NaN.
  const ChannelFormat f32 = ChannelFormat::float32;
  for (uint32_t dstOffset : {0u, 1u, 3u, 4u, 5u}) {
    CAPTURE(dstOffset);
    Tensor x = roundedTo(randomTensor(3, 23, 3, 3, 40 + dstOffset), f32);
    Image source = makeImage(x, f32, "x");
    auto configure = [&](UnaryKernel& k, uint32_t srcOffset, uint32_t window) {
      k.offset.z = 1;
      k.clipRect.z = 0;
      k.clipRect.depth = 2;
      k.sourceFeatureChannelOffset = srcOffset;
      k.sourceFeatureChannelMaxCount = window;
      k.destinationFeatureChannelOffset = dstOffset;
    };
    {
      ChannelShuffle shuffle(context(), 3);
      configure(shuffle, 2, 12);
      const ImageDescriptor d{3, 3, 12 + dstOffset + 2, 3, f32};
      CHECK(matches(run(shuffle, source, d), expected(shuffle, d, 12, shuffleValue(x, shuffle, 12)),
                    0.0));
    }
    for (auto mode : {DepthToSpace::Mode::DCR, DepthToSpace::Mode::CRD}) {
      CAPTURE(toString(mode));
      DepthToSpace d2s(context(), 2, mode);
      configure(d2s, 3, 20);  // 5 output channels
      const ImageDescriptor d{6, 6, 5 + dstOffset + 3, 3, f32};
      CHECK(matches(run(d2s, source, d), expected(d2s, d, 20, depthToSpaceValue(x, d2s, 20)), 0.0));
    }
    {
      Tensor xs = roundedTo(randomTensor(3, 7, 4, 6, 50 + dstOffset), f32);
      Image spatial = makeImage(xs, f32, "xs");
      SpaceToDepth s2d(context(), 2);
      configure(s2d, 1, 5);  // 20 output channels
      const ImageDescriptor d{3, 2, 20 + dstOffset + 1, 3, f32};
      CHECK(matches(run(s2d, spatial, d), expected(s2d, d, 5, spaceToDepthValue(xs, s2d, 5)), 0.0));
    }
  }
}

TEST_CASE("rearrange: clip rectangles and offsets in x and y follow the documented mapping") {
  // Offsets reach outside the source so the zero edge is exercised as well.
  const ChannelFormat f32 = ChannelFormat::float32;
  Tensor x = roundedTo(randomTensor(1, 9, 5, 4, 77), f32);
  Image source = makeImage(x, f32, "x");
  const Offset offsets[] = {{1, 2, 0}, {-1, 0, 0}, {2, -1, 0}};
  for (const Offset& offset : offsets) {
    CAPTURE(offset.x);
    CAPTURE(offset.y);
    {
      ChannelShuffle shuffle(context(), 3);
      shuffle.offset = offset;
      shuffle.clipRect = {1, 2, 0, 3, 2, 1};
      const ImageDescriptor d{5, 6, 9, 1, f32};
      CHECK(matches(run(shuffle, source, d), expected(shuffle, d, 9, shuffleValue(x, shuffle, 9)),
                    0.0));
    }
    for (auto mode : {DepthToSpace::Mode::DCR, DepthToSpace::Mode::CRD}) {
      CAPTURE(toString(mode));
      DepthToSpace d2s(context(), 3, mode);
      d2s.offset = offset;
      d2s.clipRect = {2, 1, 0, 7, 8, 1};  // not a multiple of the block: partial blocks at the edge
      const ImageDescriptor d{10, 11, 1, 1, f32};
      CHECK(matches(run(d2s, source, d), expected(d2s, d, 9, depthToSpaceValue(x, d2s, 9)), 0.0));
    }
    {
      Tensor xs = roundedTo(randomTensor(1, 3, 6, 8, 78), f32);
      Image spatial = makeImage(xs, f32, "xs");
      SpaceToDepth s2d(context(), 2);
      s2d.offset = offset;
      s2d.clipRect = {1, 0, 0, 3, 2, 1};
      const ImageDescriptor d{5, 4, 12, 1, f32};
      CHECK(matches(run(s2d, spatial, d), expected(s2d, d, 3, spaceToDepthValue(xs, s2d, 3)), 0.0));
    }
  }
}

TEST_CASE("rearrange: SpaceToDepth then DCR DepthToSpace through a temporary is the identity") {
  // One command buffer: the temporary is written, then read (a missing barrier would show under
  // synchronization validation), then the second kernel's output is read back.
  for (uint32_t b : {2u, 3u}) {
    CAPTURE(b);
    Tensor x = roundedTo(randomTensor(2, 5, 2 * b, 3 * b, b), ChannelFormat::float32);
    Image source = makeImage(x, ChannelFormat::float32, "x");
    Image y = makePoisoned(context(), {x.w, x.h, x.c, x.n, ChannelFormat::float32});
    SpaceToDepth s2d(context(), b);
    DepthToSpace d2s(context(), b);
    CommandBuffer cb(context());
    TemporaryImage depth = s2d.encode(cb, source);
    CHECK(depth.featureChannels() == 5 * b * b);
    d2s.encode(cb, depth, y);
    cb.commit();
    cb.waitUntilCompleted();
    CHECK(cb.encodingStatistics().barriers == 2);
    CHECK(matches(download(y), x, 0.0));
  }
}

TEST_CASE("rearrange: bad descriptors and shapes are errors before anything is encoded") {
  const ChannelFormat f32 = ChannelFormat::float32;
  Image source(context(), {4, 6, 10, 1, f32});
  Image destination(context(), {8, 12, 10, 1, f32});
  CommandBuffer cb(context());
  VKCNN_CHECK_ERROR(ChannelShuffle(context(), 0), ErrorCode::invalidArgument, "groups");
  VKCNN_CHECK_ERROR(DepthToSpace(context(), 0), ErrorCode::invalidArgument, "block size 0");
  VKCNN_CHECK_ERROR(SpaceToDepth(context(), 0), ErrorCode::invalidArgument, "block size 0");
  VKCNN_CHECK_ERROR(DepthToSpace(context(), 2, DepthToSpace::Mode(7)), ErrorCode::invalidArgument,
                    "mode 7");

  ChannelShuffle shuffle(context(), 3);
  shuffle.label = "shuffle3";
  VKCNN_CHECK_ERROR(shuffle.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "10 source channels are not a multiple of 3 groups");
  VKCNN_CHECK_ERROR(shuffle.encode(cb, source), ErrorCode::invalidArgument, "shuffle3");
  shuffle.sourceFeatureChannelMaxCount = 9;
  shuffle.destinationFeatureChannelOffset = 2;
  VKCNN_CHECK_ERROR(shuffle.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset");

  DepthToSpace d2s(context(), 2);
  d2s.label = "d2s";
  VKCNN_CHECK_ERROR(d2s.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "10 source channels are not a multiple of blockSize^2 = 4");
  VKCNN_CHECK_ERROR(d2s.encode(cb, source), ErrorCode::invalidArgument, "kernel 'd2s'");
  d2s.sourceFeatureChannelOffset = 1;
  d2s.sourceFeatureChannelMaxCount = 8;
  d2s.destinationFeatureChannelOffset = 9;
  VKCNN_CHECK_ERROR(d2s.encode(cb, source, destination), ErrorCode::invalidArgument,
                    "destinationFeatureChannelOffset 9");

  SpaceToDepth s2d(context(), 3);
  s2d.label = "s2d";
  Image odd(context(), {5, 6, 2, 1, f32});  // width 5 is not a multiple of 3
  Image s2dOut(context(), {2, 2, 18, 1, f32});
  VKCNN_CHECK_ERROR(s2d.encode(cb, odd, s2dOut), ErrorCode::invalidArgument,
                    "source width 5 is not a multiple of block size 3");
  VKCNN_CHECK_ERROR(s2d.encode(cb, odd), ErrorCode::invalidArgument, "kernel 's2d'");
  Image tall(context(), {6, 4, 2, 1, f32});
  VKCNN_CHECK_ERROR(s2d.encode(cb, tall, s2dOut), ErrorCode::invalidArgument,
                    "source height 4 is not a multiple of block size 3");
  Image narrow(context(), {2, 2, 17, 1, f32});
  Image square(context(), {6, 6, 2, 1, f32});
  VKCNN_CHECK_ERROR(s2d.encode(cb, square, narrow), ErrorCode::invalidArgument, "feature channels");
  CHECK(cb.encodingStatistics().dispatches == 0);
}
