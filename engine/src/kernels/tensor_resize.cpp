// TensorResize: ONNX Resize on any axes, one tensor_resize.comp pass per resized axis through
// temporaries.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/tensor_checks.h"
#include "kernels/tensor_encoding.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn {

TensorResize::TensorResize(const Context& context, const TensorResizeDescriptor& descriptor)
    : TensorKernel(context, "tensor resize"), descriptor_(descriptor) {
  detail::checkTensorResize(descriptor, "TensorResize");
}

namespace {

struct AxisPlan {
  uint32_t in = 1, out = 1;
  float scale = 1, roiStart = 0, roiEnd = 1;
  // The resized length before flooring (ONNX's align_corners divides by it): out when sizes were
  // given, in * scale otherwise.
  double length = 1;
};

std::vector<AxisPlan> plan(const TensorResizeDescriptor& d, const Tensor& source,
                           const std::string& what) {
  if (!source.valid()) throw Error(ErrorCode::invalidArgument, what + ": the source is empty");
  const uint32_t rank = source.rank();
  auto requireCount = [&](size_t n, const char* name, size_t expected) {
    if (n && n != expected)
      throw Error(ErrorCode::invalidArgument,
                  what + ": " + std::to_string(n) + " " + name + " for a rank-" +
                      std::to_string(rank) + " source (" + std::to_string(expected) + " needed)");
  };
  requireCount(d.sizes.size(), "sizes", rank);
  requireCount(d.scales.size(), "scales", rank);
  const bool crop = d.coordinateTransformation == TensorCoordinateTransformation::tfCropAndResize;
  requireCount(crop ? d.roi.size() : 0, "roi values", 2 * size_t(rank));
  std::vector<AxisPlan> axes(rank);
  for (uint32_t i = 0; i < rank; ++i) {
    AxisPlan& a = axes[i];
    a.in = source.shape()[i];
    if (crop && !d.roi.empty()) a.roiStart = d.roi[i], a.roiEnd = d.roi[rank + i];
    if (!d.sizes.empty()) {
      a.out = d.sizes[i];
      a.scale = d.scales.empty() ? float(a.out) / float(a.in) : d.scales[i];
      a.length = a.out;
    } else {
      a.scale = d.scales[i];
      const double extent = double(a.in) * (crop ? double(a.roiEnd - a.roiStart) : 1.0) * a.scale;
      if (!(extent >= 1) || extent > double(INT32_MAX))
        throw Error(ErrorCode::invalidArgument,
                    what + ": axis " + std::to_string(i) + " of extent " + std::to_string(a.in) +
                        " scaled by " + std::to_string(a.scale) + " gives " +
                        std::to_string(extent) + " elements (at least 1, at most 2^31 - 1)");
      a.out = uint32_t(std::floor(extent));
      a.length = double(a.in) * double(a.scale);
    }
  }
  return axes;
}

// ONNX's x_original for output position x, in double precision.
double originalCoordinate(TensorCoordinateTransformation mode, double x, const AxisPlan& a) {
  const double in = a.in, out = a.out, s = a.scale, start = a.roiStart, end = a.roiEnd;
  switch (mode) {
    case TensorCoordinateTransformation::halfPixelSymmetric: {
      const double adjustment = out / (s * in);
      return in / 2 * (1 - adjustment) + (x + 0.5) / s - 0.5;
    }
    case TensorCoordinateTransformation::pytorchHalfPixel:
      return out > 1 ? (x + 0.5) / s - 0.5 : 0;
    case TensorCoordinateTransformation::alignCorners:
      return a.length == 1 ? 0 : x * (in - 1) / (a.length - 1);
    case TensorCoordinateTransformation::asymmetric:
      return x / s;
    case TensorCoordinateTransformation::tfCropAndResize:
      return out > 1 ? start * (in - 1) + x * (end - start) * (in - 1) / (out - 1)
                     : 0.5 * (start + end) * (in - 1);
    case TensorCoordinateTransformation::tfHalfPixelForNN:
      return (x + 0.5) / s;
    case TensorCoordinateTransformation::halfPixel:
      break;
  }
  return (x + 0.5) / s - 0.5;
}

// Per output position: the source index and the fraction's bits (tensor_resize.comp's table).
std::vector<int32_t> coordinateTable(const TensorResizeDescriptor& d, const AxisPlan& a) {
  std::vector<int32_t> table(2 * size_t(a.out));
  for (uint32_t x = 0; x < a.out; ++x) {
    const double xo = originalCoordinate(d.coordinateTransformation, x, a);
    double index = std::floor(xo);
    float t = float(xo - index);
    if (d.coordinateTransformation == TensorCoordinateTransformation::tfCropAndResize &&
        (xo < 0 || xo > double(a.in) - 1)) {
      table[2 * x] = INT32_MIN;
      continue;
    }
    if (d.interpolation == TensorInterpolation::nearest) {
      index = d.nearestMode == 1   ? std::floor(xo + 0.5)
              : d.nearestMode == 2 ? std::floor(xo)
              : d.nearestMode == 3 ? std::ceil(xo)
                                   : std::ceil(xo - 0.5);
      t = 0;
    }
    // The shader clamps taps to the input: anything further out is as good as just outside.
    table[2 * x] = int32_t(std::clamp(index, -4.0, double(a.in) + 4));
    std::memcpy(&table[2 * x + 1], &t, 4);
  }
  return table;
}

bool resizes(const TensorResizeDescriptor& d, const AxisPlan& a) {
  return a.out != a.in || a.scale != 1.0f ||
         d.coordinateTransformation == TensorCoordinateTransformation::tfCropAndResize ||
         d.coordinateTransformation == TensorCoordinateTransformation::tfHalfPixelForNN;
}

}  // namespace

std::vector<uint32_t> TensorResize::destinationShape(const Tensor& source) const {
  std::vector<uint32_t> shape;
  for (const AxisPlan& a : plan(descriptor_, source, "TensorResize '" + label + "'"))
    shape.push_back(a.out);
  return shape;
}

void TensorResize::encode(CommandBuffer& commandBuffer, const Tensor& source,
                          const Tensor& destination) {
  const std::string what = "TensorResize '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  const std::vector<AxisPlan> axes = plan(descriptor_, source, what);
  detail::checkSourceAndDestination(cb, source, destination, destinationShape(source), what);
  std::vector<uint32_t> passes;
  for (uint32_t i = 0; i < axes.size(); ++i)
    if (resizes(descriptor_, axes[i])) passes.push_back(i);
  if (passes.empty()) {
    detail::encodeUnary(commandBuffer, what, VKCNN_TENSOR_UNARY_COPY, {}, source, destination,
                        true);
    return;
  }
  Tensor current = source;
  std::vector<uint32_t> shape = source.shape();
  for (size_t k = 0; k < passes.size(); ++k) {
    const uint32_t axis = passes[k];
    const AxisPlan& a = axes[axis];
    shape[axis] = a.out;
    const bool last = k + 1 == passes.size();
    const Tensor out =
        last ? destination
             : TemporaryTensor(commandBuffer,
                               {shape, source.dataType(), label + " pass " + std::to_string(k)});
    // The other axes, unchanged by this pass: current's shape there is the output's.
    const detail::IndexSpace outer =
        detail::keptSpace(current, out, detail::onlyAxis(current.rank(), axis), true);
    detail::DispatchRecorder d(cb, detail::ShaderId::tensor_resize,
                               detail::variantFor(source.dataType()), what);
    detail::shader::TensorParams p = detail::bindOperands(d, cb, {current}, out);
    detail::setOuter(p, outer);
    p.op = int32_t(descriptor_.interpolation);
    p.i0 = int32_t(a.in);
    p.i1 = int32_t(a.out);
    p.i4 = int32_t(current.strides()[axis]);
    p.i5 = int32_t(out.strides()[axis]);
    p.b = descriptor_.cubicCoefficient;
    p.c = descriptor_.extrapolationValue;
    p.innerCount = descriptor_.excludeOutside ? 1 : 0;
    d.bindParameters(0, &p, sizeof p);
    const std::vector<int32_t> table = coordinateTable(descriptor_, a);
    d.bindParameterTable(3, table.data(), table.size() * sizeof(int32_t));
    detail::dispatchFlat(d, (outer.count() * a.out + 255) / 256);
    detail::markWritten(out);
    detail::consumeRead(current);
    current = out;
  }
}

TemporaryTensor TensorResize::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryTensor t(commandBuffer,
                    {destinationShape(source), source.dataType(), label + " output"});
  encode(commandBuffer, source, t);
  return t;
}

}  // namespace vkcnn
