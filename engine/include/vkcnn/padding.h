// Spatial padding (ONNX Pad on H and W): the output is the source grown by top/left/bottom/right
// pixels, filled by
//   constant  `value`                                  (...0 0 | a b c d | 0 0...)
//   edge      the nearest edge pixel                   (...a a | a b c d | d d...)
//   reflect   mirrored about the edge pixel, no repeat (...c b | a b c d | c b...)
//   wrap      the other side, periodically             (...c d | a b c d | a b...)
// Negative amounts crop, as in ONNX. Reflect needs each positive amount below the source's extent
// along that axis (one reflection), an Error otherwise; the output must not be empty.
//
// Geometry: destination pixel p shows source pixel (p - clipRect.origin) + offset.xy - (left, top),
// padded as above; batch and channel windows follow the UnaryKernel contract.
#pragma once

#include <cstdint>

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"

namespace vkcnn {

// How the grown border is filled (the file's top comment draws each).
enum class PadMode : uint32_t { constant = 0, edge = 1, reflect = 2, wrap = 3 };

// The mode's name: "constant", "edge", "reflect" or "wrap".
VKCNN_API const char* toString(PadMode mode);

// What Pad adds on each side and how it fills it.
struct PadDescriptor {
  PadMode mode = PadMode::constant;                  // how the border is filled
  int32_t top = 0, left = 0, bottom = 0, right = 0;  // pixels added (negative: cropped)
  float value = 0;                                   // constant mode
};

// The padding layer (ONNX Pad over H and W).
class VKCNN_API Pad : public UnaryKernel {
 public:
  // A mode that does not exist is an invalidArgument Error; the amounts are checked when
  // encoding (the source's size decides what is valid).
  Pad(const Context& context, const PadDescriptor& descriptor);
  // As given at construction.
  const PadDescriptor& descriptor() const { return descriptor_; }

  // Source size plus the amounts (0 where that is not positive; encoding then fails).
  uint32_t destinationWidth(uint32_t sourceWidth) const override;
  uint32_t destinationHeight(uint32_t sourceHeight) const override;
  ImageDescriptor destinationImageDescriptor(const Image& source) const override;

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  PadDescriptor descriptor_;
};

}  // namespace vkcnn
