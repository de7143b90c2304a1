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

// How an output pixel is interpolated (the formulas above).
enum class ResizeMode : uint32_t {
  nearest = 0,   // the input pixel NearestMode picks
  bilinear = 1,  // the four around the coordinate, weighted
};

// ONNX Resize's coordinate_transformation_mode: where output coordinate x lies in the input (the
// formulas above).
enum class CoordinateTransformationMode : uint32_t {
  halfPixel = 0,         // half_pixel (ONNX's default)
  pytorchHalfPixel = 1,  // pytorch_half_pixel
  alignCorners = 2,      // align_corners
  asymmetric = 3,        // asymmetric
  tfHalfPixelForNN = 4,  // tf_half_pixel_for_nn
};

// ONNX Resize's nearest_mode: how nearest rounds an input coordinate (the formulas above).
enum class NearestMode : uint32_t {
  roundPreferFloor = 0,  // round_prefer_floor (ONNX's default): 2.5 -> 2
  roundPreferCeil = 1,   // round_prefer_ceil: 2.5 -> 3
  floor = 2,             // floor
  ceil = 3               // ceil
};

// The modes' names as the enums spell them.
VKCNN_API const char* toString(ResizeMode mode);
VKCNN_API const char* toString(CoordinateTransformationMode mode);
VKCNN_API const char* toString(NearestMode mode);

// ONNX's defaults: nearest, half_pixel, round_prefer_floor.
struct ResizeDescriptor {
  uint32_t width = 1;                     // output size
  uint32_t height = 1;                    // output size
  ResizeMode mode = ResizeMode::nearest;  // nearest or bilinear
  // Where an output coordinate lies in the input.
  CoordinateTransformationMode coordinateTransformationMode =
      CoordinateTransformationMode::halfPixel;
  NearestMode nearestMode = NearestMode::roundPreferFloor;  // how nearest rounds
};

// The resize layer: the source scaled to the descriptor's width x height.
class VKCNN_API Resize : public UnaryKernel {
 public:
  // An empty output size or a mode that does not exist is an invalidArgument Error.
  Resize(const Context& context, const ResizeDescriptor& descriptor);
  // As given at construction.
  const ResizeDescriptor& descriptor() const { return descriptor_; }

  // The descriptor's output size, whatever the source's.
  uint32_t destinationWidth(uint32_t) const override { return descriptor_.width; }
  uint32_t destinationHeight(uint32_t) const override { return descriptor_.height; }

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  ResizeDescriptor descriptor_;
};

}  // namespace vkcnn
