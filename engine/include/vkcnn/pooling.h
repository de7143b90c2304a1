// Pooling (MPSCNNPoolingMax, MPSCNNPoolingAverage) and global pooling (ONNX GlobalMaxPool,
// GlobalAveragePool). Pooling works per channel: destination channel c of the kernel's output is
// pooled from source window channel c, so a kernel writes as many channels as its source window
// holds (at destinationFeatureChannelOffset, aligned or not).
#pragma once

#include <cstdint>

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"

namespace vkcnn {

// Window of a pooling kernel. Destination pixel p (inside clipRect) pools the source window whose
// top-left corner is at (p - clipRect.origin) * stride + offset, moved by the padding:
// - Padding::Mode::mpsDefault: by -(dilated kernel >> 1) (dilated size (k - 1) * dilation + 1,
//   even kernels too); a temporary destination gets ceil(size / stride) pixels.
// - Padding::Mode::explicitPadding: by -left / -top; a temporary destination gets
//   floor((size + left + right - dilatedKernel) / stride) + 1 pixels, or with ceilMode the ceiling,
//   less one where the last window would start beyond the image and its left padding (as PyTorch
//   and ONNX do: every window then starts inside the image or its leading padding). Each padding
//   must be smaller than the dilated kernel (as in ONNX Runtime), so no window of the natural
//   output lies wholly in padding. ceilMode with mpsDefault is an error.
//
// Max pooling ignores positions outside the image (they are -inf, not zero). Average pooling sums
// the positions inside the image and divides by
// - countIncludePad false (ONNX's default): the number of window positions inside the image;
// - countIncludePad true: the number of window positions inside the padded image
//   [-left, width + right) x [-top, height + bottom): positions that ceilMode lets a window run
//   past the padded edge never count (PyTorch's rule). With mpsDefault every window position
//   counts (kernelWidth * kernelHeight).
// A window with no position inside the image (possible only through offset, clipRect or a
// destination larger than the natural output) yields 0.
struct PoolingDescriptor {
  uint32_t kernelWidth = 1, kernelHeight = 1;         // the window, before dilation
  uint32_t strideInPixelsX = 1, strideInPixelsY = 1;  // between windows
  uint32_t dilationRateX = 1, dilationRateY = 1;      // between a window's positions
  Padding padding;                                    // ONNX pads, or MPS's default
  bool countIncludePad = false;                       // average pooling only

  // A window of kernelWidth x kernelHeight moved by (strideX, strideY), undilated.
  static PoolingDescriptor of(uint32_t kernelWidth, uint32_t kernelHeight, uint32_t strideX,
                              uint32_t strideY, Padding padding = {}) {
    PoolingDescriptor d;
    d.kernelWidth = kernelWidth;
    d.kernelHeight = kernelHeight;
    d.strideInPixelsX = strideX;
    d.strideInPixelsY = strideY;
    d.padding = padding;
    return d;
  }
};

// Windowed pooling (MPSCNNPooling); use PoolingMax or PoolingAverage.
class VKCNN_API Pooling : public UnaryKernel {
 public:
  // As given at construction.
  const PoolingDescriptor& descriptor() const { return descriptor_; }
  // The output size of the padded source (Padding's formula).
  uint32_t destinationWidth(uint32_t sourceWidth) const override;
  uint32_t destinationHeight(uint32_t sourceHeight) const override;

 protected:
  Pooling(const Context& context, const PoolingDescriptor& descriptor, bool average,
          std::string defaultLabel);
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  PoolingDescriptor descriptor_;
  bool average_;
};

// Maximum over the window (MPSCNNPoolingMax, ONNX MaxPool); countIncludePad is ignored.
class VKCNN_API PoolingMax : public Pooling {
 public:
  // A zero size, stride or dilation is an invalidArgument Error.
  PoolingMax(const Context& context, const PoolingDescriptor& descriptor);
};

// Mean over the window (MPSCNNPoolingAverage, ONNX AveragePool).
class VKCNN_API PoolingAverage : public Pooling {
 public:
  // A zero size, stride or dilation is an invalidArgument Error.
  PoolingAverage(const Context& context, const PoolingDescriptor& descriptor);
};

// Reduces each source image's whole width x height to one value per channel and writes it to
// every destination pixel of clipRect (a temporary destination is 1x1). offset.x and offset.y must
// be 0: the whole image is always reduced. Use GlobalPoolingMax or GlobalPoolingAverage.
class VKCNN_API GlobalPooling : public UnaryKernel {
 public:
  // One pixel.
  uint32_t destinationWidth(uint32_t) const override { return 1; }
  uint32_t destinationHeight(uint32_t) const override { return 1; }

 protected:
  GlobalPooling(const Context& context, bool average, std::string defaultLabel);
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  bool average_;
};

// ONNX GlobalMaxPool.
class VKCNN_API GlobalPoolingMax : public GlobalPooling {
 public:
  // A kernel on `context` (it holds no weights).
  explicit GlobalPoolingMax(const Context& context);
};

// ONNX GlobalAveragePool.
class VKCNN_API GlobalPoolingAverage : public GlobalPooling {
 public:
  // A kernel on `context` (it holds no weights).
  explicit GlobalPoolingAverage(const Context& context);
};

}  // namespace vkcnn
