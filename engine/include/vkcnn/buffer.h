// Buffer: a storage buffer of float32 tensors (MTLBuffer): device-local memory the host writes and
// reads by copies, host-visible memory mapped for its lifetime (contents()), or an application's
// VkBuffer range; and the kernels that move tensors between Buffers and Images (MACE's
// buffer-to-image transform, adapted to vkcnn's sliced array images).
//
// One inference in one submission: memcpy the input into a shared Buffer's contents(), encode
// BufferToImage, the network and ImageToBuffer into one CommandBuffer (reusable: record it once),
// commit, wait, read the output from the other shared Buffer's contents().
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/export.h"
#include "vkcnn/image.h"

namespace vkcnn {

namespace detail {
class BufferStorage;
}

// Where a Buffer's memory lives (MTLStorageMode).
enum class BufferStorageMode {
  // Device-local memory (MTLStorageModePrivate): the host reaches it only through write() and
  // read(), each a copy through a staging buffer and a submission of its own.
  device,
  // Host-visible, host-coherent memory, mapped while the Buffer lives (MTLStorageModeShared):
  // contents() is its address. The host writes it before commit() and reads it after
  // waitUntilCompleted() with no copy or submission of vkcnn's own. A CommandBuffer in which
  // ImageToBuffer writes a shared Buffer ends with the barrier that makes those writes visible
  // to the host once the command buffer completed.
  shared,
};

// How the host uses a shared Buffer (MTLCPUCacheMode); it only chooses the memory type.
enum class BufferCpuCacheMode {
  // The host reads it (outputs): host-cached memory where the device has it.
  defaultCache,
  // The host only writes it, front to back (inputs): device-local memory that the host maps where
  // the device offers it in a large heap (resizable BAR), so kernels read it at device speed.
  // Host reads of such memory are uncached and slow.
  writeCombined,
};

// "device" or "shared".
VKCNN_API const char* toString(BufferStorageMode mode);

// How a Buffer is made.
struct BufferOptions {
  BufferStorageMode storageMode = BufferStorageMode::device;           // where its memory is
  BufferCpuCacheMode cpuCacheMode = BufferCpuCacheMode::defaultCache;  // of shared buffers
  std::string label;  // names it in messages and validation output
};

// A Buffer is a handle: copies share the same storage. Sizes and offsets are in bytes, multiples
// of 4 (float32 elements).
class VKCNN_API Buffer {
 public:
  Buffer() = default;  // an empty handle; valid() is false
  // A device-local buffer of `size` bytes, zero-filled.
  Buffer(const Context& context, size_t size, const std::string& label = {});
  // A buffer of `size` bytes in the storage mode `options` asks for, zero-filled.
  Buffer(const Context& context, size_t size, const BufferOptions& options);

  // Wraps bytes [offset, +size) of an application's VkBuffer, which must have
  // VK_BUFFER_USAGE_STORAGE_BUFFER_BIT; write() needs TRANSFER_DST and read() TRANSFER_SRC.
  // vkcnn never destroys it; the application keeps it alive while vkcnn uses it.
  static Buffer wrap(const Context& context, VkBuffer buffer, VkDeviceSize offset,
                     VkDeviceSize size, VkBufferUsageFlags usage, const std::string& label = {});

  // Whether it refers to a buffer; its size in bytes and in float32 elements.
  bool valid() const { return storage_ != nullptr; }
  size_t size() const;
  size_t floatCount() const { return size() / 4; }
  const std::string& label() const;  // as given at creation
  // Whether it wraps an application's VkBuffer (wrap()), and the VkBuffer behind it.
  bool isWrapped() const;
  VkBuffer vkBuffer() const;
  // Where the buffer's byte 0 lies in vkBuffer() (0 unless wrapped).
  VkDeviceSize vkOffset() const;
  const Context& context() const;
  BufferStorageMode storageMode() const;  // device for a wrapped buffer

  // The host address of byte 0 of a shared buffer, valid while any handle to it lives (the
  // memory is host-coherent: no flush or invalidate is needed). The host must not touch bytes
  // that a committed, not yet completed CommandBuffer reads or writes. Throws
  // Error(invalidArgument) for a device-local or wrapped buffer.
  void* contents();
  const void* contents() const;

  // Host transfers of `bytes` bytes at byte `offset`; they wait for the device (for all work
  // submitted to the Context's queue before them). A shared buffer is copied through contents()
  // once that work is done; the others through a staging buffer.
  void write(const void* data, size_t bytes, size_t offset = 0);
  void read(void* data, size_t bytes, size_t offset = 0) const;
  void writeFloats(std::span<const float> data, size_t firstFloat = 0);
  // `count` floats from `firstFloat`; by default all of them.
  std::vector<float> readFloats(size_t firstFloat = 0, size_t count = SIZE_MAX) const;

  // The implementation, for vkcnn's own kernels (not a stable interface).
  const std::shared_ptr<detail::BufferStorage>& storage() const { return storage_; }

 private:
  std::shared_ptr<detail::BufferStorage> storage_;
};

// Order of a float32 tensor's elements in a Buffer: NCHW is [image][channel][row][column], NHWC
// is [image][row][column][channel] (MACE's and TensorFlow's).
enum class TensorLayout {
  NCHW,  // [image][channel][row][column]: ONNX's and PyTorch's
  NHWC,  // [image][row][column][channel]
};

// "NCHW" or "NHWC".
VKCNN_API const char* toString(TensorLayout layout);

// Writes a float32 tensor [N, C, H, W] held in a Buffer into an Image: N = the destination's
// numberOfImages (use batchRepresentation for a part of a batch), H and W its height and width,
// C = featureChannels (0: every destination channel from destinationFeatureChannelOffset on).
// The tensor's channels land at destinationFeatureChannelOffset (any offset, as concatenation);
// the destination's other channels keep their contents and its padding channels end as zero.
// The tensor starts at byte bufferOffset. Finite values beyond +-65504 saturate when stored into
// a float16 image, as with Image::writeBytes (rounding is the device's image-store conversion).
class VKCNN_API BufferToImage {
 public:
  // A copy kernel for tensors in `dataLayout`.
  BufferToImage(const Context& context, TensorLayout dataLayout = TensorLayout::NCHW);

  TensorLayout dataLayout;                       // of the tensor in the Buffer
  uint32_t featureChannels = 0;                  // C (0: the rest of the destination's)
  uint32_t destinationFeatureChannelOffset = 0;  // where the tensor's channels land
  size_t bufferOffset = 0;                       // the tensor's first byte
  std::string label;                             // names it in messages and profiles

  // Bytes the tensor occupies for this destination.
  size_t tensorBytes(const Image& destination) const;
  // Records the copy; a buffer too small for the tensor is an Error.
  void encode(CommandBuffer& commandBuffer, const Buffer& source, const Image& destination);

  // The Context it was made on.
  const Context& context() const { return context_; }

 private:
  Context context_;
};

// Reads channels [sourceFeatureChannelOffset, +C) of every image of an Image into a float32 tensor
// [N, C, H, W] in a Buffer starting at byte bufferOffset; C = featureChannels (0: to the source's
// last channel). Writes exactly N*C*H*W floats and no other byte of the buffer.
class VKCNN_API ImageToBuffer {
 public:
  // A copy kernel for tensors in `dataLayout`.
  ImageToBuffer(const Context& context, TensorLayout dataLayout = TensorLayout::NCHW);

  TensorLayout dataLayout;                  // of the tensor in the Buffer
  uint32_t featureChannels = 0;             // C (0: to the source's last channel)
  uint32_t sourceFeatureChannelOffset = 0;  // the first channel read
  size_t bufferOffset = 0;                  // where the tensor starts
  std::string label;                        // names it in messages and profiles

  // Bytes the tensor occupies for this source.
  size_t tensorBytes(const Image& source) const;
  // Records the copy; a buffer too small for the tensor is an Error.
  void encode(CommandBuffer& commandBuffer, const Image& source, Buffer& destination);

  // The Context it was made on.
  const Context& context() const { return context_; }

 private:
  Context context_;
};

}  // namespace vkcnn
