// ONNX Pad, Resize and Upsample in every opset's attribute and input form, onto the Pad and
// Resize kernels (H and W of an Image) or the Tensor kernels (any axes, cubic, crop-and-resize,
// scales that are not output / input).
#include <cmath>
#include <cstdio>

#include "onnx/importer.h"
#include "vkcnn/error.h"
#include "vkcnn/padding.h"
#include "vkcnn/resize.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn::detail::onnx_import {
namespace {

// Pad, Resize and Upsample parameters in every opset's form, validated.
struct PadParameters {
  int64_t top = 0, left = 0, bottom = 0, right = 0;  // negative: cropping
  std::string mode = "constant";                     // constant, reflect, edge
  float value = 0;
};
struct ResizeParameters {
  uint32_t outputHeight = 0, outputWidth = 0;
  float scaleY = 1, scaleX = 1;  // given, or output / input when sizes were given
  std::string mode = "nearest";  // nearest, linear, cubic
  // half_pixel, asymmetric, align_corners, pytorch_half_pixel, tf_half_pixel_for_nn,
  // tf_crop_and_resize (Resize 10 and Upsample behave as asymmetric).
  std::string coordinateTransformation = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  float cubicCoefficientA = -0.75f, extrapolationValue = 0;
  bool excludeOutside = false;
  std::vector<float> roi;        // tf_crop_and_resize only
  bool batchOrChannels = false;  // resizes N or C (a Tensor resize)
};

PadParameters padParameters(Importer& im, const Shape4& s, size_t rank) {
  PadParameters p;
  std::vector<int64_t> pads;
  if (im.opset() < 11) {
    auto a = im.attrInts(im.opset() < 2 ? "paddings" : "pads");
    if (!a) invalidModel("Pad without pads");
    pads = *a;
    p.value = im.attrFloat("value", 0.f);
  } else {
    pads = toInt64s(im.constantInput(1, "pads"));
    if (im.hasInput(2)) {
      const HostTensor& v = im.constantInput(2, "constant_value");
      if (v.size() != 1) invalidModel("Pad constant_value must be a scalar");
      p.value = float(v.at(0));
    }
  }
  p.mode = im.attrString("mode", "constant");
  if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge")
    invalidModel("Pad mode '" + p.mode + "' is not constant, reflect or edge");
  if (pads.size() != 2 * rank)
    invalidModel("Pad has " + std::to_string(pads.size()) + " pads for rank " +
                 std::to_string(rank));
  for (int64_t v : pads)
    if (v < -kMaxInputDimension || v > kMaxInputDimension)
      invalidModel("Pad value " + std::to_string(v) + " is out of range");
  // [x1_begin, x2_begin, ..., x1_end, x2_end]: N and C unpadded; rank 3 pads H.
  if (pads[0] || pads[1] || pads[rank] || pads[rank + 1])
    unsupported("Pad along the batch or channel axes");
  p.top = pads[2];
  p.bottom = pads[rank + 2];
  if (rank == 4) {
    p.left = pads[3];
    p.right = pads[rank + 3];
  }
  if (s.h + p.top + p.bottom < 1 || s.w + p.left + p.right < 1)
    invalidModel("Pad crops the image away");
  return p;
}

ResizeParameters resizeParameters(Importer& im, const Shape4& s, size_t rank) {
  ResizeParameters p;
  const std::string& op = im.opType();
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (op == "Upsample") {
    if (im.opset() < 9) {
      auto a = im.attrFloats("scales");
      if (!a) invalidModel("Upsample without scales");
      scales = *a;
    } else {
      scales = toFloats(im.constantInput(1, "scales"));
    }
    p.coordinateTransformation = "asymmetric";
    p.nearestMode = "floor";
  } else if (im.opset() < 11) {
    scales = toFloats(im.constantInput(1, "scales"));
    p.coordinateTransformation = "asymmetric";
    p.nearestMode = "floor";
  } else {
    if (im.hasInput(1)) p.roi = toFloats(im.constantInput(1, "roi"));
    if (im.hasInput(2)) scales = toFloats(im.constantInput(2, "scales"));
    if (im.hasInput(3)) sizes = toInt64s(im.constantInput(3, "sizes"));
    p.coordinateTransformation = im.attrString("coordinate_transformation_mode", "half_pixel");
    p.nearestMode = im.attrString("nearest_mode", "round_prefer_floor");
    p.cubicCoefficientA = im.attrFloat("cubic_coeff_a", -0.75f);
    p.excludeOutside = im.attrInt("exclude_outside", 0) != 0;
    p.extrapolationValue = im.attrFloat("extrapolation_value", 0.f);
  }
  p.mode = im.attrString("mode", "nearest");
  if (p.mode == "bilinear") p.mode = "linear";  // Upsample 7's name
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
    invalidModel("mode '" + p.mode + "' is not nearest, linear or cubic");
  const int64_t inH = s.h, inW = rank == 4 ? s.w : 1;
  if (!sizes.empty()) {
    if (!scales.empty()) invalidModel("both scales and sizes are given");
    if (sizes.size() != rank) invalidModel("sizes needs one value per axis");
    p.batchOrChannels = sizes[0] != s.n || sizes[1] != s.c;
    const int64_t outW = rank == 4 ? sizes[3] : 1;
    if (sizes[2] < 1 || sizes[2] > kMaxInputDimension || outW < 1 || outW > kMaxInputDimension)
      invalidModel("sizes " + dimsToString(sizes) + " are out of range");
    p.outputHeight = uint32_t(sizes[2]);
    p.outputWidth = uint32_t(outW);
    p.scaleY = float(double(sizes[2]) / double(inH));
    p.scaleX = float(double(outW) / double(inW));
  } else {
    if (scales.size() != rank) invalidModel("scales needs one value per axis");
    p.batchOrChannels = scales[0] != 1.f || scales[1] != 1.f;
    for (float v : scales)
      if (!(v > 0) || !std::isfinite(v)) invalidModel("a scale is not positive and finite");
    p.scaleY = scales[2];
    p.scaleX = rank == 4 ? scales[3] : 1.f;
    const double outH = std::floor(double(inH) * p.scaleY),
                 outW = std::floor(double(inW) * p.scaleX);
    if (outH < 1 || outH > double(kMaxInputDimension) || outW < 1 ||
        outW > double(kMaxInputDimension)) {
      // Printed as doubles: a huge scale gives sizes no integer type holds.
      char size[96];
      std::snprintf(size, sizeof(size), "%.0fx%.0f", outH, outW);
      invalidModel(std::string("the resized image would be ") + size);
    }
    p.outputHeight = uint32_t(outH);
    p.outputWidth = uint32_t(outW);
  }
  return p;
}

// Pad on any axes with the Tensor kernel: the batch or channels, reflections longer than the
// axis, a Tensor or a view.
void tensorPad(Importer& im, const ImageValue& x) {
  std::vector<int64_t> pads;
  float value = 0;
  if (im.opset() < 11) {
    auto a = im.attrInts(im.opset() < 2 ? "paddings" : "pads");
    if (!a) invalidModel("Pad without pads");
    pads = *a;
    value = im.attrFloat("value", 0.f);
  } else {
    pads = toInt64s(im.constantInput(1, "pads"));
    if (im.hasInput(2)) {
      const HostTensor& v = im.constantInput(2, "constant_value");
      if (v.size() != 1) invalidModel("Pad constant_value must be a scalar");
      value = float(v.at(0));
    }
  }
  const std::string mode = im.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    invalidModel("Pad mode '" + mode + "' is not constant, reflect or edge");
  const size_t rank = x.dims.size();
  if (pads.size() != 2 * rank)
    invalidModel("Pad has " + std::to_string(pads.size()) + " pads for rank " +
                 std::to_string(rank));
  std::vector<int64_t> dims = x.dims;
  for (size_t k = 0; k < rank; ++k) {
    for (int64_t v : {pads[k], pads[k + rank]})
      if (v < -kMaxInputDimension || v > kMaxInputDimension)
        invalidModel("Pad value " + std::to_string(v) + " is out of range");
    dims[k] += pads[k] + pads[k + rank];
    if (dims[k] < 1) invalidModel("Pad crops axis " + std::to_string(k) + " away");
  }
  const TensorPaddingMode m = mode == "edge"      ? TensorPaddingMode::edge
                              : mode == "reflect" ? TensorPaddingMode::reflect
                                                  : TensorPaddingMode::constant;
  im.setImage(0, im.graph().pad(im.tensorOf(x), m, pads, value, im.nodeName()), dims);
}

void pad(Importer& im) {
  const ImageValue& v = im.valueInput(0);
  if (im.isTensor(v) || v.dims.size() < 3 || v.dims.size() > 4 || !im.canonical(v))
    return tensorPad(im, v);
  // Along the batch or channels: the Tensor kernel.
  {
    std::vector<int64_t> pads;
    if (im.opset() < 11) {
      if (auto a = im.attrInts(im.opset() < 2 ? "paddings" : "pads")) pads = *a;
    } else {
      pads = toInt64s(im.constantInput(1, "pads"));
    }
    const size_t rank = v.dims.size();
    if (pads.size() == 2 * rank && (pads[0] || pads[1] || pads[rank] || pads[rank + 1]))
      return tensorPad(im, v);
  }
  const ImageValue& x = im.imageInput(0);
  const Shape4 s = im.requireCanonical(x, 3);
  const PadParameters p = padParameters(im, s, x.dims.size());
  PadDescriptor d;
  d.mode = p.mode == "edge"      ? PadMode::edge
           : p.mode == "reflect" ? PadMode::reflect
                                 : PadMode::constant;
  d.top = int32_t(p.top);
  d.left = int32_t(p.left);
  d.bottom = int32_t(p.bottom);
  d.right = int32_t(p.right);
  d.value = p.value;
  // The kernel reflects once; ONNX (numpy) reflects again for larger amounts: the Tensor kernel.
  if (d.mode == PadMode::reflect &&
      (p.top >= s.h || p.bottom >= s.h || p.left >= s.w || p.right >= s.w))
    return tensorPad(im, x);
  GraphTensor out = im.graph().padImage(x.tensor, d, im.nodeName());
  im.setImage(0, out, im.dimsLike(x, im.graph().shape(out)));
}

TensorCoordinateTransformation coordinateTransformation(const std::string& ct) {
  if (ct == "half_pixel") return TensorCoordinateTransformation::halfPixel;
  if (ct == "pytorch_half_pixel") return TensorCoordinateTransformation::pytorchHalfPixel;
  if (ct == "align_corners") return TensorCoordinateTransformation::alignCorners;
  if (ct == "asymmetric") return TensorCoordinateTransformation::asymmetric;
  if (ct == "tf_half_pixel_for_nn") return TensorCoordinateTransformation::tfHalfPixelForNN;
  if (ct == "tf_crop_and_resize") return TensorCoordinateTransformation::tfCropAndResize;
  invalidModel("coordinate_transformation_mode '" + ct + "' is not an ONNX value");
}

uint32_t nearestMode(const std::string& nm) {
  if (nm == "round_prefer_floor") return 0;
  if (nm == "round_prefer_ceil") return 1;
  if (nm == "floor") return 2;
  if (nm == "ceil") return 3;
  invalidModel("nearest_mode '" + nm + "' is not an ONNX value");
}

// Resize on any axes with the Tensor kernel: cubic, crop-and-resize, scales that are not output
// size / input size, the batch or channels resized, a Tensor or a view.
void tensorResize(Importer& im, const ImageValue& x) {
  const std::string& op = im.opType();
  const size_t rank = x.dims.size();
  TensorResizeDescriptor d;
  std::vector<float> scales, roi;
  std::vector<int64_t> sizes;
  std::string ct = "asymmetric", nm = "floor";
  if (op == "Upsample" && im.opset() < 9) {
    auto a = im.attrFloats("scales");
    if (!a) invalidModel("Upsample without scales");
    scales = *a;
  } else if (op == "Upsample" || im.opset() < 11) {
    scales = toFloats(im.constantInput(1, "scales"));
  } else {
    if (im.hasInput(1)) roi = toFloats(im.constantInput(1, "roi"));
    if (im.hasInput(2)) scales = toFloats(im.constantInput(2, "scales"));
    if (im.hasInput(3)) sizes = toInt64s(im.constantInput(3, "sizes"));
    ct = im.attrString("coordinate_transformation_mode", "half_pixel");
    nm = im.attrString("nearest_mode", "round_prefer_floor");
    d.cubicCoefficient = im.attrFloat("cubic_coeff_a", -0.75f);
    d.excludeOutside = im.attrInt("exclude_outside", 0) != 0;
    d.extrapolationValue = im.attrFloat("extrapolation_value", 0.f);
  }
  std::string mode = im.attrString("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  d.interpolation = mode == "nearest"  ? TensorInterpolation::nearest
                    : mode == "linear" ? TensorInterpolation::linear
                    : mode == "cubic"
                        ? TensorInterpolation::cubic
                        : (invalidModel("mode '" + mode + "' is not nearest, linear or cubic"),
                           TensorInterpolation::nearest);
  d.coordinateTransformation = coordinateTransformation(ct);
  d.nearestMode = nearestMode(nm);
  if (!sizes.empty()) {
    if (!scales.empty()) invalidModel("both scales and sizes are given");
    if (sizes.size() != rank) invalidModel("sizes needs one value per axis");
    for (int64_t v : sizes) {
      if (v < 1 || v > kMaxInputDimension)
        invalidModel("sizes " + dimsToString(sizes) + " are out of range");
      d.sizes.push_back(uint32_t(v));
    }
  } else {
    if (scales.size() != rank) invalidModel("scales needs one value per axis");
    for (float v : scales)
      if (!(v > 0) || !std::isfinite(v) || v > float(kMaxInputDimension))
        invalidModel("a scale is not positive and finite");
    d.scales = scales;
  }
  if (d.coordinateTransformation == TensorCoordinateTransformation::tfCropAndResize) {
    if (roi.size() != 2 * rank) invalidModel("tf_crop_and_resize needs 2 roi values per axis");
    d.roi = roi;
  }
  const GraphTensor out = im.graph().resize(im.tensorOf(x), d, im.nodeName());
  std::vector<int64_t> dims;
  for (uint32_t e : im.graph().tensorShape(out)) dims.push_back(e);
  im.setImage(0, out, dims);
}

void resize(Importer& im) {
  const ImageValue& v = im.valueInput(0);
  const std::string& op = im.opType();
  if (im.attrInt("antialias", 0) != 0) unsupported(op + " with antialias");
  if (im.isTensor(v) || v.dims.size() < 3 || v.dims.size() > 4 || !im.canonical(v))
    return tensorResize(im, v);
  const ImageValue& x = im.imageInput(0);
  const Shape4 s = im.requireCanonical(x, 3);
  const ResizeParameters p = resizeParameters(im, s, x.dims.size());
  const std::string& ct = p.coordinateTransformation;
  if (p.mode == "cubic" || ct == "tf_crop_and_resize" || p.batchOrChannels)
    return tensorResize(im, x);
  // The kernel maps coordinates with the sizes (scale = output / input); ONNX with the given
  // scale, and align_corners with the unfloored resized length input * scale. Both differ when
  // input * scale is not whole (the output size is floored then): the Tensor kernel takes scales.
  const auto exact = [&](float scale, int64_t in, uint32_t outSize) {
    const double e = double(outSize) / double(in);
    return std::fabs(double(scale) - e) <= 1e-6 * e;
  };
  if (!exact(p.scaleY, s.h, p.outputHeight) ||
      !exact(p.scaleX, x.dims.size() == 4 ? s.w : 1, p.outputWidth))
    return tensorResize(im, x);
  ResizeDescriptor d;
  d.width = p.outputWidth;
  d.height = p.outputHeight;
  d.mode = p.mode == "linear" ? ResizeMode::bilinear : ResizeMode::nearest;
  if (ct == "half_pixel")
    d.coordinateTransformationMode = CoordinateTransformationMode::halfPixel;
  else if (ct == "pytorch_half_pixel")
    d.coordinateTransformationMode = CoordinateTransformationMode::pytorchHalfPixel;
  else if (ct == "align_corners")
    d.coordinateTransformationMode = CoordinateTransformationMode::alignCorners;
  else if (ct == "asymmetric")
    d.coordinateTransformationMode = CoordinateTransformationMode::asymmetric;
  else if (ct == "tf_half_pixel_for_nn")
    d.coordinateTransformationMode = CoordinateTransformationMode::tfHalfPixelForNN;
  else
    invalidModel("coordinate_transformation_mode '" + ct + "' is not an ONNX value");
  d.nearestMode = NearestMode(nearestMode(p.nearestMode));
  GraphTensor out = im.graph().resizeImage(x.tensor, d, im.nodeName());
  im.setImage(0, out, im.dimsLike(x, im.graph().shape(out)));
}

constexpr int64_t kLast = kNewestOpset;

}  // namespace

std::span<const OpEntry> resizeOps() {
  static const OpEntry ops[] = {
      {"Pad", 1, kLast, nullptr, pad},
      {"Resize", 10, kLast, nullptr, resize},
      {"Upsample", 1, kLast, nullptr, resize},
  };
  return ops;
}

}  // namespace vkcnn::detail::onnx_import
