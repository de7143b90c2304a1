// TensorResize against a double-precision reference of ONNX Resize (separable, as the ONNX
// reference implementation): nearest (every rounding), linear and cubic (exclude_outside on and
// off), every coordinate transformation, up- and downsampling by sizes and by arbitrary scales on
// any axes, crop-and-resize with extrapolation; float32 and small float16; and the errors.
#include <cmath>

#include "tensor_check.h"

using namespace vkcnn;
using namespace vkcnn::tensortest;

namespace {

struct Axis {
  uint32_t in, out;
  double scale, start, end;
  double length = 1;  // the resized length before flooring
};

double originalCoordinate(TensorCoordinateTransformation mode, double x, const Axis& a) {
  const double in = a.in, out = a.out, s = a.scale;
  switch (mode) {
    case TensorCoordinateTransformation::halfPixel:
      return (x + 0.5) / s - 0.5;
    case TensorCoordinateTransformation::halfPixelSymmetric: {
      const double adjustment = out / (s * in);
      return in / 2 * (1 - adjustment) + (x + 0.5) / s - 0.5;
    }
    case TensorCoordinateTransformation::pytorchHalfPixel:
      return out > 1 ? (x + 0.5) / s - 0.5 : 0;
    case TensorCoordinateTransformation::alignCorners:
      // ONNX divides by the resized length before flooring (in * scale with scales).
      return a.length == 1 ? 0 : x * (in - 1) / (a.length - 1);
    case TensorCoordinateTransformation::asymmetric:
      return x / s;
    case TensorCoordinateTransformation::tfCropAndResize:
      return out > 1 ? a.start * (in - 1) + x * (a.end - a.start) * (in - 1) / (out - 1)
                     : 0.5 * (a.start + a.end) * (in - 1);
    case TensorCoordinateTransformation::tfHalfPixelForNN:
      return (x + 0.5) / s;
  }
  return NAN;
}

// One output value along an axis from the input line `v`.
double interpolate(const TensorResizeDescriptor& d, const std::vector<double>& v, uint32_t x,
                   const Axis& a) {
  const double xo = originalCoordinate(d.coordinateTransformation, x, a);
  const int64_t n = int64_t(v.size());
  auto at = [&](int64_t i) { return v[size_t(std::clamp<int64_t>(i, 0, n - 1))]; };
  if (d.coordinateTransformation == TensorCoordinateTransformation::tfCropAndResize &&
      (xo < 0 || xo > double(n - 1)))
    return d.extrapolationValue;
  if (d.interpolation == TensorInterpolation::nearest) {
    double r = d.nearestMode == 1   ? std::floor(xo + 0.5)
               : d.nearestMode == 2 ? std::floor(xo)
               : d.nearestMode == 3 ? std::ceil(xo)
                                    : std::ceil(xo - 0.5);
    return at(int64_t(r));
  }
  const double f = std::floor(xo), t = xo - f;
  const int64_t i = int64_t(f);
  if (d.interpolation == TensorInterpolation::linear) return (1 - t) * at(i) + t * at(i + 1);
  const double A = d.cubicCoefficient;
  auto kernel = [&](double s) {  // the cubic convolution kernel at distance s
    s = std::fabs(s);
    if (s <= 1) return ((A + 2) * s - (A + 3)) * s * s + 1;
    if (s < 2) return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
    return 0.0;
  };
  double w[4], sum = 0, y = 0;
  for (int k = 0; k < 4; ++k) {
    w[k] = kernel(t + 1 - k);
    if (d.excludeOutside && (i - 1 + k < 0 || i - 1 + k >= n)) w[k] = 0;
    sum += w[k];
  }
  for (int k = 0; k < 4; ++k) y += (d.excludeOutside ? w[k] / sum : w[k]) * at(i - 1 + k);
  return y;
}

// Resizes `x` of `shape` along every axis whose plan changes it, one axis after another.
std::vector<double> reference(const TensorResizeDescriptor& d, std::vector<double> x, Shape shape,
                              const std::vector<Axis>& axes, TensorDataType type) {
  for (uint32_t a = 0; a < shape.size(); ++a) {
    const Axis& ax = axes[a];
    const bool changes =
        ax.out != ax.in || ax.scale != 1.0 ||
        d.coordinateTransformation == TensorCoordinateTransformation::tfCropAndResize ||
        d.coordinateTransformation == TensorCoordinateTransformation::tfHalfPixelForNN;
    if (!changes) continue;
    Shape out = shape;
    out[a] = ax.out;
    std::vector<double> y(countOf(out));
    for (uint64_t i = 0; i < y.size(); ++i) {
      auto c = coordinates(i, out);
      std::vector<double> line(shape[a]);
      auto src = c;
      for (uint32_t j = 0; j < shape[a]; ++j) {
        src[a] = j;
        line[j] = x[flatten(src, shape)];
      }
      y[i] = stored(interpolate(d, line, c[a], ax), type);
    }
    x = std::move(y);
    shape = out;
  }
  return x;
}

}  // namespace

TEST_CASE("tensor resize: every interpolation and coordinate transformation") {
  const TensorCoordinateTransformation modes[] = {
      TensorCoordinateTransformation::halfPixel,
      TensorCoordinateTransformation::halfPixelSymmetric,
      TensorCoordinateTransformation::pytorchHalfPixel,
      TensorCoordinateTransformation::alignCorners,
      TensorCoordinateTransformation::asymmetric,
      TensorCoordinateTransformation::tfCropAndResize,
      TensorCoordinateTransformation::tfHalfPixelForNN};
  struct Sizes {
    Shape in;
    std::vector<uint32_t> sizes;
    std::vector<float> scales;
  };
  const Sizes cases[] = {
      {{1, 2, 5, 7}, {1, 2, 9, 4}, {}},        // up along H, down along W (by sizes)
      {{1, 2, 6, 5}, {}, {1, 1, 0.6f, 2.3f}},  // arbitrary scales
      {{4, 3, 5}, {7, 3, 1}, {}},              // axis 0 up, an axis to extent 1
  };
  for (TensorDataType type : {TensorDataType::float32, TensorDataType::float16})
    for (const Sizes& k : cases)
      for (TensorCoordinateTransformation mode : modes)
        for (int interpolation = 0; interpolation < 3; ++interpolation)
          for (int variant = 0; variant < 4; ++variant) {
            // variant: the nearest rounding for nearest, exclude_outside (odd) for cubic.
            if (interpolation == 1 && variant) continue;
            if (interpolation == 2 && variant > 1) continue;
            if (type == TensorDataType::float16 && (variant || &k != &cases[0])) continue;
            TensorResizeDescriptor d;
            d.interpolation = TensorInterpolation(interpolation);
            d.coordinateTransformation = mode;
            d.nearestMode = interpolation == 0 ? uint32_t(variant) : 0;
            d.excludeOutside = interpolation == 2 && variant == 1;
            d.extrapolationValue = 7.5f;
            d.sizes = k.sizes;
            d.scales = k.scales;
            const uint32_t rank = uint32_t(k.in.size());
            if (mode == TensorCoordinateTransformation::tfCropAndResize) {
              d.roi.assign(2 * rank, 0);
              // A crop reaching outside the input (extrapolated) along the scaled axes.
              for (uint32_t i = 0; i < rank; ++i) {
                const bool scaled = k.scales.empty() || k.scales[i] != 1;
                d.roi[i] = scaled ? -0.1f : 0;
                d.roi[rank + i] = scaled ? 0.8f : 1;
              }
            }
            CAPTURE(name(type));
            CAPTURE(text(k.in));
            CAPTURE(int(mode));
            CAPTURE(interpolation);
            CAPTURE(variant);
            TensorResize resize(test::context(), d);
            std::vector<double> x;
            Tensor source = randomTensor(k.in, type, 100, x);
            const Shape outShape = resize.destinationShape(source);
            std::vector<Axis> axes;
            for (uint32_t i = 0; i < rank; ++i) {
              Axis a{k.in[i], outShape[i], 0, 0, 1};
              a.scale = k.scales.empty() ? double(float(a.out) / float(a.in)) : double(k.scales[i]);
              if (!d.roi.empty()) a.start = double(d.roi[i]), a.end = double(d.roi[rank + i]);
              a.length = k.scales.empty() ? double(a.out) : double(a.in) * a.scale;
              if (k.scales.empty()) CHECK(a.out == k.sizes[i]);
              axes.push_back(a);
            }
            Tensor out = poisoned(outShape, type);
            test::runOnce([&](CommandBuffer& cb) { resize.encode(cb, source, out); });
            CHECK(relativeError(out.readFloats(), reference(d, x, k.in, axes, type)) <=
                  (type == TensorDataType::float16 ? 3e-3 : 2e-6));
          }
}

TEST_CASE("tensor resize: output extents from scales, identity, errors") {
  Context& ctx = test::context();
  Tensor t(ctx, {{2, 3, 10}});
  TensorResizeDescriptor d;
  d.scales = {1, 1, 0.35f};
  CHECK(TensorResize(ctx, d).destinationShape(t) == Shape{2, 3, 3});
  d.coordinateTransformation = TensorCoordinateTransformation::tfCropAndResize;
  d.roi = {0, 0, 0.2f, 1, 1, 0.8f};
  d.scales = {1, 1, 2};
  CHECK(TensorResize(ctx, d).destinationShape(t) == Shape{2, 3, 12});
  // Same size everywhere: a copy.
  std::vector<double> x;
  Tensor source = randomTensor({2, 3, 4}, TensorDataType::float32, 101, x);
  TensorResizeDescriptor same;
  same.sizes = {2, 3, 4};
  same.interpolation = TensorInterpolation::cubic;
  Tensor out = poisoned({2, 3, 4}, TensorDataType::float32);
  test::runOnce([&](CommandBuffer& cb) { TensorResize(ctx, same).encode(cb, source, out); });
  CHECK(relativeError(out.readFloats(), x) == 0);

  TensorResizeDescriptor bad;
  VKCNN_CHECK_ERROR(TensorResize(ctx, bad), ErrorCode::invalidArgument, "sizes or scales");
  bad.scales = {1, -2, 1};
  VKCNN_CHECK_ERROR(TensorResize(ctx, bad), ErrorCode::invalidArgument, "positive finite");
  bad.scales = {1, 1};
  VKCNN_CHECK_ERROR(TensorResize(ctx, bad).destinationShape(t), ErrorCode::invalidArgument,
                    "2 scales for a rank-3");
  bad.scales = {1, 1, 0.01f};
  VKCNN_CHECK_ERROR(TensorResize(ctx, bad).destinationShape(t), ErrorCode::invalidArgument,
                    "at least 1");
  bad.scales = {1, 1, 1};
  bad.interpolation = TensorInterpolation(5);
  VKCNN_CHECK_ERROR(TensorResize(ctx, bad), ErrorCode::invalidArgument, "interpolation 5");
  bad.interpolation = TensorInterpolation::nearest;
  bad.coordinateTransformation = TensorCoordinateTransformation::tfCropAndResize;
  bad.roi = {0, 1};
  VKCNN_CHECK_ERROR(TensorResize(ctx, bad).destinationShape(t), ErrorCode::invalidArgument,
                    "roi values");
}
