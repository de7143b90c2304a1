// ONNX Pad, Resize and Upsample in every opset's attribute and input form, onto the Pad and
// Resize kernels (H and W only).
#include <cmath>
#include <cstdio>

#include "onnx/importer.h"
#include "vkcnn/error.h"
#include "vkcnn/padding.h"
#include "vkcnn/resize.h"

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
  std::vector<float> roi;  // tf_crop_and_resize only
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
    if (sizes[0] != s.n || sizes[1] != s.c) unsupported("resizing the batch or channel axes");
    const int64_t outW = rank == 4 ? sizes[3] : 1;
    if (sizes[2] < 1 || sizes[2] > kMaxInputDimension || outW < 1 || outW > kMaxInputDimension)
      invalidModel("sizes " + dimsToString(sizes) + " are out of range");
    p.outputHeight = uint32_t(sizes[2]);
    p.outputWidth = uint32_t(outW);
    p.scaleY = float(double(sizes[2]) / double(inH));
    p.scaleX = float(double(outW) / double(inW));
  } else {
    if (scales.size() != rank) invalidModel("scales needs one value per axis");
    if (scales[0] != 1.f || scales[1] != 1.f) unsupported("resizing the batch or channel axes");
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

void pad(Importer& im) {
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
  if (d.mode == PadMode::reflect) {
    // The kernel reflects once; ONNX (numpy) would reflect again for larger amounts.
    const auto once = [&](int64_t amount, int64_t extent, const char* side) {
      if (amount >= extent)
        unsupported("reflect padding of " + std::to_string(amount) + " pixels at the " + side +
                    " of an extent of " + std::to_string(extent) + " (more than one reflection)");
    };
    once(p.top, s.h, "top");
    once(p.bottom, s.h, "bottom");
    once(p.left, s.w, "left");
    once(p.right, s.w, "right");
  }
  GraphTensor out =
      im.graph().unary(x.tensor, std::make_shared<Pad>(im.context(), d), im.nodeName());
  im.setImage(0, out, im.dimsLike(x, im.graph().shape(out)));
}

void resize(Importer& im) {
  const ImageValue& x = im.imageInput(0);
  const Shape4 s = im.requireCanonical(x, 3);
  const std::string& op = im.opType();
  const ResizeParameters p = resizeParameters(im, s, x.dims.size());
  if (im.attrInt("antialias", 0) != 0) unsupported(op + " with antialias");
  ResizeDescriptor d;
  d.width = p.outputWidth;
  d.height = p.outputHeight;
  if (p.mode == "cubic") unsupported(op + " in cubic mode");
  d.mode = p.mode == "linear" ? ResizeMode::bilinear : ResizeMode::nearest;
  const std::string& ct = p.coordinateTransformation;
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
  else if (ct == "tf_crop_and_resize")
    unsupported(op + " with coordinate_transformation_mode tf_crop_and_resize");
  else
    invalidModel("coordinate_transformation_mode '" + ct + "' is not an ONNX value");
  const std::string& nm = p.nearestMode;
  if (nm == "round_prefer_floor")
    d.nearestMode = NearestMode::roundPreferFloor;
  else if (nm == "round_prefer_ceil")
    d.nearestMode = NearestMode::roundPreferCeil;
  else if (nm == "floor")
    d.nearestMode = NearestMode::floor;
  else if (nm == "ceil")
    d.nearestMode = NearestMode::ceil;
  else
    invalidModel("nearest_mode '" + nm + "' is not an ONNX value");
  // The kernel maps coordinates with the sizes (scale = output / input); ONNX with the given
  // scale, and align_corners with the unfloored resized length input * scale. Both differ when
  // input * scale is not whole (the output size is floored then).
  const auto check = [&](float scale, int64_t in, uint32_t outSize, const char* axis) {
    const double exact = double(outSize) / double(in);
    if (std::fabs(double(scale) - exact) > 1e-6 * exact)
      unsupported(op + " scale " + std::to_string(scale) + " along " + axis + " (size " +
                  std::to_string(in) + " -> " + std::to_string(outSize) +
                  ") that is not output size / input size (the kernel resizes to whole sizes)");
  };
  check(p.scaleY, s.h, p.outputHeight, "the height");
  check(p.scaleX, x.dims.size() == 4 ? s.w : 1, p.outputWidth, "the width");
  GraphTensor out =
      im.graph().unary(x.tensor, std::make_shared<Resize>(im.context(), d), im.nodeName());
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
