// Spatial resize (ONNX Resize / Upsample, MPSNNResizeBilinear) to a given output size, nearest or
// bilinear, with ONNX's coordinate transformation and nearest rounding modes.
//
// Scales come from the sizes: scale = outputSize / inputSize per axis. Output coordinate x maps to
// the input coordinate
//   halfPixel         (x + 0.5) / scale - 0.5
//   pytorchHalfPixel  (x + 0.5) / scale - 0.5, or 0 when outputSize is 1
//   alignCorners      x * (inputSize - 1) / (outputSize - 1), or 0 when outputSize is 1
//   asymmetric        x / scale
//   tfHalfPixelForNN  (x + 0.5) / scale
// computed as an exact fraction of integers, so that ties (x.5) round as the nearest mode says
// rather than as float rounding falls. Nearest takes the input pixel
//   roundPreferFloor  ceil(x_in - 0.5)     (2.5 -> 2)
//   roundPreferCeil   floor(x_in + 0.5)    (2.5 -> 3)
//   floor / ceil      floor(x_in) / ceil(x_in)
// clamped to [0, inputSize - 1]. Bilinear: with i = floor(x_in) and t = x_in - i along each axis,
//   v = (1 - t) * in[clamp(i)] + t * in[clamp(i + 1)]
// (then the same along y), clamping indices to the edge: resize never reads zero padding. This is
// what ONNX's reference (edge-padded neighbours) and PyTorch (clamped indices) compute.
//
// Geometry: destination pixel p computes output coordinate (p - clipRect.origin) + offset.xy, so
// offset.xy places a tile of the output; coordinates beyond the output size extrapolate by the
// same formulas. Batch and channel windows follow the UnaryKernel contract.
#pragma once

#include <cstdint>

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"

namespace vkcnn {

enum class ResizeMode : uint32_t { nearest = 0, bilinear = 1 };

enum class CoordinateTransformationMode : uint32_t {
  halfPixel = 0,
  pytorchHalfPixel = 1,
  alignCorners = 2,
  asymmetric = 3,
  tfHalfPixelForNN = 4,
};

enum class NearestMode : uint32_t {
  roundPreferFloor = 0,
  roundPreferCeil = 1,
  floor = 2,
  ceil = 3
};

VKCNN_API const char* toString(ResizeMode mode);
VKCNN_API const char* toString(CoordinateTransformationMode mode);
VKCNN_API const char* toString(NearestMode mode);

// ONNX's defaults: nearest, half_pixel, round_prefer_floor.
struct ResizeDescriptor {
  uint32_t width = 1;  // output size
  uint32_t height = 1;
  ResizeMode mode = ResizeMode::nearest;
  CoordinateTransformationMode coordinateTransformationMode =
      CoordinateTransformationMode::halfPixel;
  NearestMode nearestMode = NearestMode::roundPreferFloor;
};

class VKCNN_API Resize : public UnaryKernel {
 public:
  Resize(const Context& context, const ResizeDescriptor& descriptor);
  const ResizeDescriptor& descriptor() const { return descriptor_; }

  uint32_t destinationWidth(uint32_t) const override { return descriptor_.width; }
  uint32_t destinationHeight(uint32_t) const override { return descriptor_.height; }

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  ResizeDescriptor descriptor_;
};

}  // namespace vkcnn
