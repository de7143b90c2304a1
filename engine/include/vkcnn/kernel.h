// Kernel geometry shared by every CNN kernel (MPSCNNKernel).
//
// A kernel processes n = clipRect.depth images independently: source images [offset.z, +n) go to
// destination images [clipRect.z, +n). In x and y it writes the destination pixels inside clipRect;
// destination pixel p reads the source around (p - clipRect.origin) * stride + offset. Reads
// outside the source are zero. Channel windows: sourceFeatureChannelOffset /
// sourceFeatureChannelMaxCount select the source channels read, destinationFeatureChannelOffset
// where the result's channels go (concatenation by writing into a larger destination). Anything
// that does not fit is an Error before a single command is recorded.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/export.h"
#include "vkcnn/image.h"

namespace vkcnn {

namespace detail {
struct KernelEncoding;
struct BinaryKernelEncoding;
}  // namespace detail

// An extent that reaches to the edge (of a clipRect, of a channel window).
inline constexpr uint32_t kWholeExtent = std::numeric_limits<uint32_t>::max();

// Where a kernel reads its source from (the file's top comment): x and y in source pixels,
// z the first source image.
struct Offset {
  int32_t x = 0, y = 0, z = 0;  // may be negative: reads outside the source are zero
};

// Destination region written. An extent of kWholeExtent reaches to the destination's edge (in z,
// to its last image), which is the default: the whole destination.
struct ClipRect {
  uint32_t x = 0, y = 0, z = 0;  // its origin: pixel, and first destination image
  uint32_t width = kWholeExtent, height = kWholeExtent, depth = kWholeExtent;  // depth: images
};

// How a windowed kernel (convolution, pooling) places its window. mpsDefault: the window's left
// edge at offset.x - (kernelWidth >> 1) (dilated kernel width), and a temporary destination of
// ceil(size / stride). explicitPadding: the window's left edge at x * stride - left (plus
// offset.x), and a destination of floor((size + left + right - window) / stride) + 1, or ceil with
// ceilMode.
struct Padding {
  // MPS's centred window, or ONNX's explicit pads (the comment above).
  enum class Mode {
    mpsDefault,       // the window centred on offset; ceil(size / stride) outputs
    explicitPadding,  // top/left/bottom/right pads, as ONNX's pads attribute
  };
  Mode mode = Mode::mpsDefault;                       // which of the two
  uint32_t top = 0, left = 0, bottom = 0, right = 0;  // pixels, explicitPadding only
  bool ceilMode = false;                              // ONNX ceil_mode: round the output up

  // Explicit pads in ONNX's order for 2D (top, left, bottom, right), without ceilMode.
  static Padding explicitPadding(uint32_t top, uint32_t left, uint32_t bottom, uint32_t right) {
    return Padding{Mode::explicitPadding, top, left, bottom, right, false};
  }
};

// What every kernel has: its geometry (the file's top comment) and its Context. Copies share the
// kernel's weights.
class VKCNN_API Kernel {
 public:
  virtual ~Kernel();
  Kernel(const Kernel&) = default;
  Kernel& operator=(const Kernel&) = default;

  Offset offset;                                         // where the source is read from
  ClipRect clipRect;                                     // the destination region written
  uint32_t sourceFeatureChannelOffset = 0;               // the first source channel read
  uint32_t sourceFeatureChannelMaxCount = kWholeExtent;  // source channels read, at most
  uint32_t destinationFeatureChannelOffset = 0;          // where the result's channels go
  std::string label;  // names its dispatches in errors, profiles and validation messages

  // The Context it was made on; it encodes only into that Context's command buffers.
  const Context& context() const { return context_; }

 protected:
  explicit Kernel(const Context& context, std::string defaultLabel);
  Context context_;
};

// A kernel with one source (MPSCNNKernel).
class VKCNN_API UnaryKernel : public Kernel {
 public:
  // Records the kernel from `source` into `destination`; each temporary source has its readCount
  // lowered by one.
  void encode(CommandBuffer& commandBuffer, const Image& source, const Image& destination);
  // Encodes into a new TemporaryImage shaped by destinationImageDescriptor(source).
  TemporaryImage encode(CommandBuffer& commandBuffer, const Image& source);

  // The destination a temporary would get for this source: the output size for the source's
  // size, destinationFeatureChannels(window) channels, the source's format and clipRect depth.
  virtual ImageDescriptor destinationImageDescriptor(const Image& source) const;

  // Output size of the whole source (before clipping).
  virtual uint32_t destinationWidth(uint32_t sourceWidth) const { return sourceWidth; }
  virtual uint32_t destinationHeight(uint32_t sourceHeight) const { return sourceHeight; }
  // Channels the kernel writes for a source window of this many channels.
  virtual uint32_t destinationFeatureChannels(uint32_t sourceChannels) const {
    return sourceChannels;
  }

 protected:
  using Kernel::Kernel;
  // encode() with a residual image for kernels that add one before their neuron (Convolution):
  // it must have the destination's size, numberOfImages and the channels the kernel writes, and
  // reaches encodeKernel as KernelEncoding::residual (null without one).
  void encodeChecked(CommandBuffer& commandBuffer, const Image& source, const Image* residual,
                     const Image& destination);
  // encodeChecked in two halves, for a kernel that encodes several (source, destination) pairs
  // at once (Convolution::encodeBatch): the checked, resolved and validated encoding, and after
  // it is encoded, the reads of its source and residual counted.
  detail::KernelEncoding checkedEncoding(CommandBuffer& commandBuffer, const Image& source,
                                         const Image* residual, const Image& destination);
  static void countReads(const Image& source, const Image* residual);
  // Checks that need the resolved geometry (channel counts a descriptor fixes, say); throw Error.
  virtual void validate(const detail::KernelEncoding& encoding) const;
  virtual void encodeKernel(detail::KernelEncoding& encoding) = 0;
};

// A kernel with two sources (MPSCNNBinaryKernel): element-wise arithmetic. `offset` and the source
// channel window apply to the primary source; secondaryOffset to the secondary one.
class VKCNN_API BinaryKernel : public Kernel {
 public:
  Offset secondaryOffset;                      // where the secondary source is read from
  uint32_t secondaryFeatureChannelOffset = 0;  // its first channel read

  // Records the kernel from both sources into `destination` (temporary sources' readCounts
  // lowered by one), or into a new TemporaryImage shaped by destinationImageDescriptor.
  void encode(CommandBuffer& commandBuffer, const Image& primary, const Image& secondary,
              const Image& destination);
  TemporaryImage encode(CommandBuffer& commandBuffer, const Image& primary, const Image& secondary);
  // The destination a temporary would get for these sources.
  virtual ImageDescriptor destinationImageDescriptor(const Image& primary,
                                                     const Image& secondary) const;

 protected:
  using Kernel::Kernel;
  virtual void validate(const detail::BinaryKernelEncoding& encoding) const;
  virtual void encodeKernel(detail::BinaryKernelEncoding& encoding) = 0;
};

}  // namespace vkcnn
