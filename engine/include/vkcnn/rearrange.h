// Channel rearrangement: channel shuffle (ShuffleNet) and the ONNX depth/space moves.
//
// All three are UnaryKernels: they read the source channel window [sourceFeatureChannelOffset,
// +window) and write their channels at destinationFeatureChannelOffset (any offset, aligned or
// not), for images [offset.z, +clipRect.depth) into [clipRect.z, +clipRect.depth). Channel
// indices below are relative to those windows, and n, c, y, x name image, channel, row, column.
// Reads outside the source are zero.
#pragma once

#include <cstdint>

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"

namespace vkcnn {

// ShuffleNet's channel shuffle, as torch.nn.ChannelShuffle: the C window channels are viewed as a
// [groups, C/groups] matrix, transposed to [C/groups, groups] and flattened, so
//   destination channel o = source channel (o % groups) * (C / groups) + o / groups.
// With 2 groups of 3: source 0 1 2 | 3 4 5 becomes 0 3 1 4 2 5. C must be a multiple of groups.
// Destination pixel p reads source pixel (p - clipRect.origin) + offset.
class VKCNN_API ChannelShuffle : public UnaryKernel {
 public:
  // groups 0 is an invalidArgument Error.
  ChannelShuffle(const Context& context, uint32_t groups);
  // As given at construction.
  uint32_t groups() const { return groups_; }

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  uint32_t groups_;
};

// ONNX DepthToSpace with block size b: a source of W x H x C (C a multiple of b*b) becomes
// W*b x H*b x C/(b*b). For the whole image (offset and clip origin zero), with C' = C/(b*b):
//   DCR (depth-column-row, ONNX's default and TensorFlow's order):
//     y[n, c, yy*b + by, xx*b + bx] = x[n, (by*b + bx) * C' + c, yy, xx]
//   CRD (column-row-depth, PyTorch's PixelShuffle):
//     y[n, c, yy*b + by, xx*b + bx] = x[n, c * b*b + by*b + bx, yy, xx]
// In general destination pixel p takes the block position q = p - clipRect.origin: source pixel
// floor(q / b) + offset (offset counts source pixels) and in-block position q mod b.
class VKCNN_API DepthToSpace : public UnaryKernel {
 public:
  // The order of the block's channels (the formulas above).
  enum class Mode : uint32_t {
    DCR = 0,  // depth-column-row: ONNX's default, TensorFlow's
    CRD = 1,  // column-row-depth: PyTorch's PixelShuffle
  };
  // A kernel moving b x b blocks of channels into space; b outside [1, 4096] is an
  // invalidArgument Error.
  DepthToSpace(const Context& context, uint32_t blockSize, Mode mode = Mode::DCR);
  // As given at construction.
  uint32_t blockSize() const { return blockSize_; }
  Mode mode() const { return mode_; }

  // The source's size times b.
  uint32_t destinationWidth(uint32_t sourceWidth) const override;
  uint32_t destinationHeight(uint32_t sourceHeight) const override;
  // Throws invalidArgument unless sourceChannels is a multiple of b*b.
  uint32_t destinationFeatureChannels(uint32_t sourceChannels) const override;

 protected:
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  uint32_t blockSize_;
  Mode mode_;
};

// ONNX SpaceToDepth with block size b (the inverse of DCR DepthToSpace): a source of W x H x C
// (W and H multiples of b) becomes W/b x H/b x C*b*b with
//   y[n, (by*b + bx) * C + c, yy, xx] = x[n, c, yy*b + by, xx*b + bx]
// where source position (xx*b + bx, yy*b + by) is taken relative to offset: destination pixel p
// reads the b x b block at (p - clipRect.origin) * b + offset.
class VKCNN_API SpaceToDepth : public UnaryKernel {
 public:
  // A kernel moving b x b blocks of pixels into channels; b outside [1, 4096] is an
  // invalidArgument Error.
  SpaceToDepth(const Context& context, uint32_t blockSize);
  // As given at construction.
  uint32_t blockSize() const { return blockSize_; }

  // Throw invalidArgument unless the size is a multiple of b.
  uint32_t destinationWidth(uint32_t sourceWidth) const override;
  uint32_t destinationHeight(uint32_t sourceHeight) const override;
  uint32_t destinationFeatureChannels(uint32_t sourceChannels) const override;

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  uint32_t blockSize_;
};

// "DCR" or "CRD".
VKCNN_API const char* toString(DepthToSpace::Mode mode);

}  // namespace vkcnn
