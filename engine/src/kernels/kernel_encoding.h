// What a kernel's host class needs to encode its dispatches: the resolved and checked geometry,
// and a recorder that binds images and buffers (checked against the shader's SPIR-V reflection),
// places barriers and dispatches.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "interface.h"
#include "memory/device_buffer.h"
#include "vkcnn/error.h"
#include "vkcnn/kernel.h"
#include "vkcnn_shader_ids.h"
#include "vulkan/command_buffer_impl.h"
#include "vulkan/shader_module_info.h"

namespace vkcnn::detail {

// Geometry of one encode call, checked against both images before anything is recorded.
struct KernelEncoding {
  CommandBufferImpl& commandBuffer;
  CommandBuffer& handle;  // the public CommandBuffer (to make internal TemporaryImages)
  const Kernel& kernel;
  const Image& source;
  const Image& destination;
  uint32_t imageCount = 0;             // n = clipRect.depth, resolved
  uint32_t sourceFirstImage = 0;       // offset.z
  uint32_t destinationFirstImage = 0;  // clipRect.z
  uint32_t clipX = 0, clipY = 0, clipWidth = 0, clipHeight = 0;
  int32_t offsetX = 0, offsetY = 0;
  uint32_t sourceChannelOffset = 0, sourceChannels = 0;  // the source window
  uint32_t destinationChannelOffset = 0, destinationChannels = 0;
  // Added before the neuron (Convolution::encodeWithResidual); checked to match the destination.
  const Image* residual = nullptr;
  // Convolution::imagesSideBySide: images of the batch encoded side by side with this one.
  uint32_t imagesSideBySide = 0;

  // "kernel 'label'" for messages.
  std::string what() const;
  shader::Geometry geometry(uint32_t slicesPerImage) const;
};

struct BinaryKernelEncoding : KernelEncoding {
  const Image& secondary;
  uint32_t secondaryFirstImage = 0;
  int32_t secondaryOffsetX = 0, secondaryOffsetY = 0;
  uint32_t secondaryChannelOffset = 0, secondaryChannels = 0;
};

// Destination layers a window of `channels` channels starting at `shift` inside a layer touches.
inline uint32_t touchedSlices(uint32_t channelShift, uint32_t channels) {
  return (channelShift + channels + 3) / 4;
}

ShaderVariant variantFor(const Image& destination);

// Throws invalidArgument "<what>: <name> is 0; it must be at least 1".
void requirePositive(uint32_t value, const char* name, const std::string& what);
// invalidArgument "<what>: <name> <value> does not exist" for an enumerator past `last`.
template <typename Enum>
void requireEnumerator(Enum value, Enum last, const std::string& what, const char* name) {
  if (uint32_t(value) > uint32_t(last))
    throw Error(ErrorCode::invalidArgument,
                what + ": " + name + " " + std::to_string(uint32_t(value)) + " does not exist");
}

// requirePositive of a window descriptor's strides and dilation rates (pooling, transposed
// convolution), in that order.
template <typename Descriptor>
void requireStepsPositive(const Descriptor& d, const std::string& what) {
  requirePositive(d.strideInPixelsX, "strideInPixelsX", what);
  requirePositive(d.strideInPixelsY, "strideInPixelsY", what);
  requirePositive(d.dilationRateX, "dilationRateX", what);
  requirePositive(d.dilationRateY, "dilationRateY", what);
}

// A window descriptor's kernel size, strides and dilation rates into its shader parameters.
template <typename Params, typename Descriptor>
void setWindowParams(Params& p, const Descriptor& d) {
  p.kernelX = int32_t(d.kernelWidth);
  p.kernelY = int32_t(d.kernelHeight);
  p.strideX = int32_t(d.strideInPixelsX);
  p.strideY = int32_t(d.strideInPixelsY);
  p.dilationX = int32_t(d.dilationRateX);
  p.dilationY = int32_t(d.dilationRateY);
}

// The shaders address pixels with 32-bit ints. `value` (a window origin or bound worked out in 64
// bits from a 32-bit offset and a padding or window size) as an int32, or limitExceeded naming
// `name`; computing it in int32 would overflow for a large offset and padding.
int32_t shaderCoordinate(int64_t value, const char* name, const KernelEncoding& e);

// Output size of a windowed kernel along one axis (Padding in kernel.h): ceil(size / stride) for
// mpsDefault, floor (or ceil with ceilMode) of (size + padding - dilatedKernel) / stride + 1 for
// explicit padding, which throws when the padded size is smaller than the window.
uint32_t windowedOutputSize(uint32_t size, uint32_t stride, uint32_t dilatedKernel,
                            const Padding& padding, bool horizontal, const std::string& what);

// Throws misuse unless `image` may be read (or written) by a kernel in `commandBuffer` now:
// temporaries must belong to it, still have readCount > 0, and (for reads) have been written.
void checkUsable(const CommandBufferImpl& commandBuffer, const Image& image, bool write,
                 const std::string& what);
// A temporary source has been read by one more kernel.
void consumeRead(const Image& image);

// Binds pool memory to temporary `storage` if it has none and returns its UNDEFINED -> GENERAL
// transition.
VkImageMemoryBarrier bindTemporary(CommandBufferImpl& commandBuffer, ImageStorage& storage);
// Binds memory to the temporaries among `images` (destinations of kernels about to be encoded)
// and lays them out in one barrier, which also orders everything recorded before it: kernels that
// write them then need no barrier of their own for that, and several can share this one (the
// graph encodes a level of independent kernels after one such barrier). No barrier if none needs
// laying out.
void prepareDestinations(CommandBufferImpl& commandBuffer, const std::vector<Image>& images);

class DispatchRecorder {
 public:
  // `specialization`: the shader's specialization constants (PipelineRegistry::get).
  DispatchRecorder(CommandBufferImpl& commandBuffer, ShaderId shader, ShaderVariant variant,
                   std::string what, std::span<const int32_t> specialization = {});

  // Binds images [firstImage, +imageCount) of `image`, window channels [channelOffset, +channels)
  // of the view, as a sampled source or a storage destination, and returns what the shader needs
  // to address them. The bound view covers exactly the layers the dispatch reads or writes.
  // `element`: the element of an array binding (every element must be bound).
  shader::ImageView bindSource(uint32_t binding, const Image& image, uint32_t firstImage,
                               uint32_t imageCount, uint32_t channelOffset, uint32_t channels,
                               uint32_t element = 0);
  shader::ImageView bindDestination(uint32_t binding, const Image& image, uint32_t firstImage,
                                    uint32_t imageCount, uint32_t channelOffset, uint32_t channels,
                                    uint32_t element = 0);
  void bindBuffer(uint32_t binding, const std::shared_ptr<DeviceBuffer>& buffer);
  // Binds bytes [offset, +size) of `buffer` as a storage buffer the dispatch reads or writes,
  // tracked for hazards like image layers (`owner` is kept alive until the GPU is done). The
  // descriptor starts at `offset` rounded down to minStorageBufferOffsetAlignment; returns the
  // float index of `offset` inside the bound range.
  uint32_t bindStorageBuffer(uint32_t binding, VkBuffer buffer, VkDeviceSize offset,
                             VkDeviceSize size, bool write, std::shared_ptr<const void> owner);

  // The usual layout: the source window at binding 0, the destination window at binding 1. Fills
  // push.source, push.destination and push.geometry; returns the destination layers per image.
  template <typename Push>
  uint32_t bindWindows(Push& push, const KernelEncoding& e) {
    push.source = bindSource(0, e.source, e.sourceFirstImage, e.imageCount, e.sourceChannelOffset,
                             e.sourceChannels);
    push.destination = bindDestination(1, e.destination, e.destinationFirstImage, e.imageCount,
                                       e.destinationChannelOffset, e.destinationChannels);
    const uint32_t slices =
        touchedSlices(uint32_t(push.destination.channelShift), e.destinationChannels);
    push.geometry = e.geometry(slices);
    return slices;
  }

  uint32_t localSize(uint32_t axis) const { return module_->localSize[axis]; }

  // Dispatches enough workgroups to cover x*y*z invocations.
  template <typename Push>
  void dispatch(const Push& push, uint32_t x, uint32_t y, uint32_t z) {
    dispatchGroups(&push, sizeof(Push), (x + localSize(0) - 1) / localSize(0),
                   (y + localSize(1) - 1) / localSize(1), (z + localSize(2) - 1) / localSize(2));
  }
  void dispatchGroups(const void* push, size_t pushSize, uint32_t groupsX, uint32_t groupsY,
                      uint32_t groupsZ);

  // Binds `size` bytes of host-written parameters as a uniform buffer (the command buffer's
  // ParameterArena holds them).
  void bindParameters(uint32_t binding, const void* data, size_t size);
  // The same for a larger table the shader reads as a storage buffer (only the host writes it, so
  // it takes no part in hazard tracking).
  void bindParameterTable(uint32_t binding, const void* data, size_t size);
  // A bound temporary buffer (TemporaryTensor) sits in pool memory an earlier temporary used:
  // the dispatch waits for everything before it, as for an aliased temporary image.
  void requireAliasingBarrier() { aliased_ = true; }

 private:
  const ShaderBinding& expect(uint32_t binding, BindingType type, uint32_t element = 0) const;
  // Makes the pipeline, taking f16bits for f16 where every destination can be written as bits,
  // and creates the destinations' views in the format it writes, checked against the shader's.
  void resolvePipeline();

  CommandBufferImpl& commandBuffer_;
  ShaderId shader_;
  ShaderVariant variant_;
  std::vector<int32_t> specialization_;
  const struct Pipeline* pipeline_ = nullptr;  // made by resolvePipeline()
  const ShaderModuleInfo* module_;
  std::string what_;
  std::vector<VkDescriptorImageInfo> imageInfos_;
  std::vector<VkDescriptorBufferInfo> bufferInfos_;
  struct PendingWrite {
    uint32_t binding;
    VkDescriptorType type;
    size_t infoIndex;
    uint32_t element = 0;
  };
  std::vector<PendingWrite> writes_;
  // Destination descriptors, whose views resolvePipeline() creates.
  struct Destination {
    size_t infoIndex;
    uint32_t binding, firstLayer, layerCount;
    ImageStorage* storage;
  };
  std::vector<Destination> destinations_;
  std::vector<LayerAccess> accesses_;
  // The bound image windows: layers [layerInImage, +layerCount) of images [firstImage,
  // +imageCount), for the exact in-place check (accesses_ span whole ranges of layers).
  struct Window {
    const ImageStorage* storage;
    uint32_t firstImage, imageCount, layerInImage, layerCount;
    bool write;
  };
  std::vector<Window> windows_;
  std::vector<VkImageMemoryBarrier> transitions_;
  std::vector<std::shared_ptr<ImageStorage>> written_;
  bool aliased_ = false;
};

}  // namespace vkcnn::detail
