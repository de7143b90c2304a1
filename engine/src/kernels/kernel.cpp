#include <algorithm>
#include <limits>

#include "kernels/kernel_encoding.h"
#include "memory/image_storage.h"
#include "vulkan/context_impl.h"
#include "vulkan/device_profile.h"
#include "vulkan/pipelines.h"
#include "memory/temporary_rules.h"

namespace vkcnn {
namespace detail {

std::string KernelEncoding::what() const {
  return "kernel '" + kernel.label + "'";
}

shader::Geometry KernelEncoding::geometry(uint32_t slicesPerImage) const {
  shader::Geometry g{};
  g.clipX = int32_t(clipX);
  g.clipY = int32_t(clipY);
  g.clipWidth = int32_t(clipWidth);
  g.clipHeight = int32_t(clipHeight);
  g.offsetX = offsetX;
  g.offsetY = offsetY;
  g.imageCount = int32_t(imageCount);
  g.slices = int32_t(slicesPerImage);
  return g;
}

ShaderVariant variantFor(const Image& destination) {
  switch (destination.channelFormat()) {
    case ChannelFormat::float16:
      return ShaderVariant::f16;
    case ChannelFormat::float32:
      return ShaderVariant::f32;
    case ChannelFormat::unorm8:
      return ShaderVariant::u8;
  }
  return ShaderVariant::f32;
}

void checkUsable(const CommandBufferImpl& cb, const Image& image, bool write,
                 const std::string& what) {
  if (!image.valid()) throw Error(ErrorCode::invalidArgument, what + ": an Image handle is empty");
  const ImageStorage& s = *image.storage();
  if (s.context != cb.context)
    throw Error(ErrorCode::invalidArgument,
                what + ": " + s.describe() + " belongs to another Context than command buffer '" +
                    cb.label + "'");
  if (s.wrapped) {
    const VkImageUsageFlags needed =
        write ? VK_IMAGE_USAGE_STORAGE_BIT : VK_IMAGE_USAGE_SAMPLED_BIT;
    if (!(s.usage & needed))
      throw Error(ErrorCode::invalidArgument,
                  what + ": wrapped " + s.describe() + " lacks " +
                      (write ? "VK_IMAGE_USAGE_STORAGE_BIT" : "VK_IMAGE_USAGE_SAMPLED_BIT"));
    if (write && s.wrappedLayout != VK_IMAGE_LAYOUT_GENERAL)
      throw Error(
          ErrorCode::invalidArgument,
          what + ": wrapped " + s.describe() + " must be in VK_IMAGE_LAYOUT_GENERAL to be written");
  }
  requireUsableTemporary(s, cb, what, write);
}

int32_t shaderCoordinate(int64_t value, const char* name, const KernelEncoding& e) {
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max())
    throw Error(ErrorCode::limitExceeded,
                e.what() + ": " + name + " " + std::to_string(value) +
                    " (from the offset and the padding or window) is outside the 32-bit range "
                    "the shaders address pixels with");
  return int32_t(value);
}

void requirePositive(uint32_t value, const char* name, const std::string& what) {
  if (value == 0)
    throw Error(ErrorCode::invalidArgument, what + ": " + name + " is 0; it must be at least 1");
}

uint32_t windowedOutputSize(uint32_t size, uint32_t stride, uint32_t dilatedKernel,
                            const Padding& p, bool horizontal, const std::string& what) {
  if (p.mode == Padding::Mode::mpsDefault) return (size + stride - 1) / stride;
  const uint32_t before = horizontal ? p.left : p.top, after = horizontal ? p.right : p.bottom;
  const uint64_t padded = uint64_t(size) + before + after;
  const char* axis = horizontal ? "width" : "height";
  if (padded < dilatedKernel)
    throw Error(ErrorCode::invalidArgument,
                what + ": explicit padding: the padded source " + axis + " " +
                    std::to_string(padded) + " (" + std::to_string(size) + " + " +
                    std::to_string(before) + " + " + std::to_string(after) +
                    ") is smaller than the dilated kernel " + axis + " " +
                    std::to_string(dilatedKernel));
  const uint64_t span = padded - dilatedKernel;
  return uint32_t((p.ceilMode ? (span + stride - 1) / stride : span / stride) + 1);
}

void consumeRead(const Image& image) {
  if (image.isTemporary()) TemporaryImage(image).decrementReadCount();
}

VkImageMemoryBarrier bindTemporary(CommandBufferImpl& cb, ImageStorage& s) {
  auto& context = *cb.context;
  if (!s.bound) {
    const VkMemoryRequirements& req = s.memoryRequirements();
    TemporaryPool::Slot slot = cb.temporaries.allocate(req);
    VkResult result = context.vk().vkBindImageMemory(context.device(), s.image,
                                                     cb.temporaries.memory(slot), slot.offset);
    if (result != VK_SUCCESS) cb.temporaries.release(slot);
    context.check(result, "vkBindImageMemory (temporary)");
    s.slot = slot;
    s.bound = true;
  }
  // The new image's contents are undefined: it may alias a temporary read earlier.
  VkImageMemoryBarrier transition{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  transition.srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  transition.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  transition.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  transition.newLayout = VK_IMAGE_LAYOUT_GENERAL;
  transition.srcQueueFamilyIndex = transition.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  transition.image = s.image;
  transition.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, s.layers()};
  return transition;
}

void prepareDestinations(CommandBufferImpl& cb, const std::vector<Image>& images) {
  std::vector<VkImageMemoryBarrier> transitions;
  std::vector<ImageStorage*> laidOut;
  bool aliased = false;
  for (const Image& image : images) {
    checkUsable(cb, image, true, "preparing destinations");
    ImageStorage& s = *image.storage();
    if (!s.temporary || s.laidOut || std::find(laidOut.begin(), laidOut.end(), &s) != laidOut.end())
      continue;
    transitions.push_back(bindTemporary(cb, s));
    aliased = aliased || s.slot.reused;
    laidOut.push_back(&s);
    cb.keepAlive(image.storage());
  }
  if (transitions.empty()) return;
  cb.barrier(transitions, aliased);
  for (ImageStorage* s : laidOut) s->laidOut = true;
}

// ---- DispatchRecorder -------------------------------------------------------------------------

DispatchRecorder::DispatchRecorder(CommandBufferImpl& cb, ShaderId shader, ShaderVariant variant,
                                   std::string what, std::span<const int32_t> specialization)
    : commandBuffer_(cb),
      shader_(shader),
      variant_(variant),
      specialization_(specialization.begin(), specialization.end()),
      what_(std::move(what)) {
  // The pipeline is made at dispatch, for the variant the destinations decide (f16 may become
  // f16bits): making the requested one here would compile a pipeline that goes unused. Binding
  // needs only the reflection, the same in both.
  module_ = &shaderModule(shader, variant);
  cb.noteDispatch(uint32_t(shader), uint32_t(variant), specialization);
}

const ShaderBinding& DispatchRecorder::expect(uint32_t binding, BindingType type,
                                              uint32_t element) const {
  static const char* names[] = {"sampled image", "storage image", "storage buffer",
                                "uniform buffer"};
  for (uint32_t i = 0; i < module_->bindingCount; ++i) {
    const ShaderBinding& b = module_->bindings[i];
    if (b.binding != binding) continue;
    if (b.type != type)
      throw Error(ErrorCode::vulkan, what_ + ": host binds a " + names[uint32_t(type)] +
                                         " at binding " + std::to_string(binding) + " but shader " +
                                         module_->name + " declares '" + b.name + "' as a " +
                                         names[uint32_t(b.type)]);
    if ((type == BindingType::sampledImage || type == BindingType::storageImage) &&
        (!b.arrayed || b.dimension != 1))
      throw Error(ErrorCode::vulkan, what_ + ": shader " + module_->name + " binding '" + b.name +
                                         "' is not a 2D array image");
    if (element >= b.arraySize)
      throw Error(ErrorCode::vulkan, what_ + ": host binds element " + std::to_string(element) +
                                         " of binding '" + b.name + "' in shader " + module_->name +
                                         ", which has " + std::to_string(b.arraySize));
    return b;
  }
  throw Error(ErrorCode::vulkan,
              what_ + ": shader " + module_->name + " has no binding " + std::to_string(binding));
}

namespace {

// The array layers an image binding covers ([first, first + count) of its storage) and how its
// channels sit in them.
struct BoundSlices {
  uint32_t slicesPerImage, firstChannel, first, count;
};

BoundSlices boundSlices(const Image& image, const ImageStorage& s, uint32_t firstImage,
                        uint32_t imageCount, uint32_t channelOffset, uint32_t channels) {
  const uint32_t spi = s.slicesPerImage();
  const uint32_t firstChannel = image.storageChannelOffset() + channelOffset;
  const uint32_t first = (image.storageFirstImage() + firstImage) * spi + firstChannel / 4;
  const uint32_t count = (imageCount - 1) * spi + touchedSlices(firstChannel % 4, channels);
  return {spi, firstChannel, first, count};
}

shader::ImageView imageView(const ImageStorage& s, const BoundSlices& b, uint32_t channels) {
  shader::ImageView v{};
  v.layersPerImage = int32_t(b.slicesPerImage);
  v.featureChannels = int32_t(channels);
  v.channelShift = int32_t(b.firstChannel % 4);
  v.paddingFrom = int32_t(s.featureChannels - (b.firstChannel / 4) * 4);
  return v;
}

}  // namespace

shader::ImageView DispatchRecorder::bindSource(uint32_t binding, const Image& image,
                                               uint32_t firstImage, uint32_t imageCount,
                                               uint32_t channelOffset, uint32_t channels,
                                               uint32_t element) {
  expect(binding, BindingType::sampledImage, element);
  ImageStorage& s = *image.storage();
  s.materialize();
  const BoundSlices b = boundSlices(image, s, firstImage, imageCount, channelOffset, channels);
  const uint32_t spi = b.slicesPerImage, first = b.first, count = b.count;
  VkDescriptorImageInfo info{commandBuffer_.context->nearestSampler(), s.view(first, count),
                             s.layout()};
  writes_.push_back(
      {binding, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, imageInfos_.size(), element});
  imageInfos_.push_back(info);
  accesses_.push_back({&s, first, count, false});
  windows_.push_back(
      {&s, first / spi, imageCount, first % spi, count - (imageCount - 1) * spi, false});
  commandBuffer_.keepAlive(image.storage());
  return imageView(s, b, channels);
}

shader::ImageView DispatchRecorder::bindDestination(uint32_t binding, const Image& image,
                                                    uint32_t firstImage, uint32_t imageCount,
                                                    uint32_t channelOffset, uint32_t channels,
                                                    uint32_t element) {
  expect(binding, BindingType::storageImage, element);
  ImageStorage& s = *image.storage();
  // Until a dispatch that writes it is recorded, the temporary needs its UNDEFINED -> GENERAL
  // transition: a dispatch that failed after binding it (an allocation for another binding, say)
  // recorded nothing, so the next one must not assume the layout changed.
  const bool pendingHere =
      std::any_of(written_.begin(), written_.end(), [&](const auto& w) { return w.get() == &s; });
  if (s.temporary && !s.laidOut && !pendingHere) {
    transitions_.push_back(bindTemporary(commandBuffer_, s));
    aliased_ = aliased_ || s.slot.reused;
  }
  s.materialize();
  const BoundSlices b = boundSlices(image, s, firstImage, imageCount, channelOffset, channels);
  const uint32_t spi = b.slicesPerImage, first = b.first, count = b.count;
  destinations_.push_back({imageInfos_.size(), binding, first, count, &s});
  writes_.push_back({binding, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, imageInfos_.size(), element});
  imageInfos_.push_back({VK_NULL_HANDLE, VK_NULL_HANDLE, s.layout()});
  accesses_.push_back({&s, first, count, true});
  windows_.push_back(
      {&s, first / spi, imageCount, first % spi, count - (imageCount - 1) * spi, true});
  written_.push_back(image.storage());
  commandBuffer_.keepAlive(image.storage());
  return imageView(s, b, channels);
}

void DispatchRecorder::resolvePipeline() {
  const bool bits = variant_ == ShaderVariant::f16 && !destinations_.empty() &&
                    std::all_of(destinations_.begin(), destinations_.end(),
                                [](const Destination& d) { return d.storage->float16Bits(); });
  try {
    pipeline_ = &commandBuffer_.context->pipelines().get(
        shader_, bits ? ShaderVariant::f16bits : variant_, specialization_);
  } catch (const Error& e) {
    // A shader beyond the device's limits (PipelineRegistry::checkLimits): say which kernel, a
    // Graph's node by its name, needed it.
    if (e.code() != ErrorCode::unsupported) throw;
    std::string message = e.what();
    if (message.rfind("vkcnn: ", 0) == 0) message.erase(0, 7);
    throw Error(e.code(), what_ + ": " + message);
  }
  module_ = pipeline_->module;
  for (const Destination& d : destinations_) {
    const VkFormat viewFormat = bits ? VK_FORMAT_R32G32_UINT : d.storage->format;
    const ShaderBinding& b = expect(d.binding, BindingType::storageImage);
    if (b.imageFormat != uint32_t(viewFormat))
      throw Error(ErrorCode::vulkan, what_ + ": shader " + module_->name + " writes format " +
                                         std::to_string(b.imageFormat) + " but " +
                                         d.storage->describe() + " is written as format " +
                                         std::to_string(int(viewFormat)));
    imageInfos_[d.infoIndex].imageView = d.storage->view(d.firstLayer, d.layerCount, viewFormat);
  }
}

void DispatchRecorder::bindBuffer(uint32_t binding, const std::shared_ptr<DeviceBuffer>& buffer) {
  expect(binding, BindingType::storageBuffer);
  writes_.push_back({binding, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, bufferInfos_.size()});
  bufferInfos_.push_back({buffer->buffer(), 0, VK_WHOLE_SIZE});
  commandBuffer_.keepAlive(buffer);
}

uint32_t DispatchRecorder::bindStorageBuffer(uint32_t binding, VkBuffer buffer, VkDeviceSize offset,
                                             VkDeviceSize size, bool write,
                                             std::shared_ptr<const void> owner) {
  expect(binding, BindingType::storageBuffer);
  const auto& context = *commandBuffer_.context;
  VkPhysicalDeviceProperties properties;
  context.vki().vkGetPhysicalDeviceProperties(context.physicalDevice(), &properties);
  const VkDeviceSize alignment =
      std::max<VkDeviceSize>(properties.limits.minStorageBufferOffsetAlignment, 4);
  const VkDeviceSize start = offset / alignment * alignment;
  const VkDeviceSize range = offset + size - start;
  const DeviceCapabilities& caps = context.capabilities();
  if (range > caps.maxStorageBufferRange)
    throw Error(ErrorCode::limitExceeded,
                what_ + ": binds " + std::to_string(range) +
                    " bytes of a storage buffer; this device allows at most " +
                    std::to_string(caps.maxStorageBufferRange) + " (maxStorageBufferRange)" +
                    profileNote(caps));
  writes_.push_back({binding, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, bufferInfos_.size()});
  bufferInfos_.push_back({buffer, start, range});
  // The whole bound range: synchronization validation sees the descriptor's range as accessed.
  LayerAccess access;
  access.write = write;
  access.buffer = buffer;
  access.firstByte = start;
  access.byteCount = range;
  accesses_.push_back(access);
  commandBuffer_.keepAlive(std::move(owner));
  return uint32_t((offset - start) / 4);
}

void DispatchRecorder::bindParameters(uint32_t binding, const void* data, size_t size) {
  expect(binding, BindingType::uniformBuffer);
  const ParameterArena::Range r = commandBuffer_.parameters.upload(commandBuffer_, data, size);
  writes_.push_back({binding, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, bufferInfos_.size()});
  bufferInfos_.push_back({r.buffer, r.offset, r.size});
}

void DispatchRecorder::bindParameterTable(uint32_t binding, const void* data, size_t size) {
  expect(binding, BindingType::storageBuffer);
  const ParameterArena::Range r = commandBuffer_.parameters.upload(commandBuffer_, data, size);
  writes_.push_back({binding, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, bufferInfos_.size()});
  bufferInfos_.push_back({r.buffer, r.offset, r.size});
}

void DispatchRecorder::dispatchGroups(const void* push, size_t pushSize, uint32_t gx, uint32_t gy,
                                      uint32_t gz) {
  if (pushSize != module_->pushConstantSize)
    throw Error(ErrorCode::vulkan, what_ + ": host push constants are " + std::to_string(pushSize) +
                                       " bytes, shader " + module_->name + " declares " +
                                       std::to_string(module_->pushConstantSize));
  for (uint32_t i = 0; i < module_->bindingCount; ++i) {
    const ShaderBinding& b = module_->bindings[i];
    for (uint32_t element = 0; element < b.arraySize; ++element)
      if (std::none_of(writes_.begin(), writes_.end(),
                       [&](auto& w) { return w.binding == b.binding && w.element == element; }))
        throw Error(ErrorCode::vulkan,
                    what_ + ": shader " + module_->name + " binding '" + b.name + "'" +
                        (b.arraySize > 1 ? " element " + std::to_string(element) : "") +
                        " was not bound");
  }
  if (!gx || !gy || !gz) return;
  resolvePipeline();
  // In-place use (reading and writing the same layers in one dispatch) is not supported. Other
  // layers of the same images are (a residual beside the destination in one concatenation).
  auto overlap = [](uint32_t a, uint32_t aCount, uint32_t b, uint32_t bCount) {
    return a < b + bCount && b < a + aCount;
  };
  for (auto& a : windows_)
    for (auto& b : windows_)
      if (&a != &b && a.write && !b.write && a.storage == b.storage &&
          overlap(a.firstImage, a.imageCount, b.firstImage, b.imageCount) &&
          overlap(a.layerInImage, a.layerCount, b.layerInImage, b.layerCount))
        throw Error(ErrorCode::invalidArgument,
                    what_ + ": the source and destination share layers of " +
                        a.storage->describe() + "; in-place kernels are not supported");
  const auto& context = *commandBuffer_.context;
  const auto& vk = context.vk();
  VkDescriptorSet set = commandBuffer_.allocateDescriptorSet(pipeline_->setLayout);
  std::vector<VkWriteDescriptorSet> writes;
  for (auto& w : writes_) {
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set;
    write.dstBinding = w.binding;
    write.dstArrayElement = w.element;
    write.descriptorCount = 1;
    write.descriptorType = w.type;
    if (w.type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER || w.type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)
      write.pBufferInfo = &bufferInfos_[w.infoIndex];
    else
      write.pImageInfo = &imageInfos_[w.infoIndex];
    writes.push_back(write);
  }
  vk.vkUpdateDescriptorSets(context.device(), uint32_t(writes.size()), writes.data(), 0, nullptr);
  commandBuffer_.barrierBefore(accesses_, transitions_, aliased_);
  VkCommandBuffer cb = commandBuffer_.commandBuffer;
  vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_->pipeline);
  vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_->layout, 0, 1, &set, 0,
                             nullptr);
  if (pushSize)
    vk.vkCmdPushConstants(cb, pipeline_->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(pushSize),
                          push);
  commandBuffer_.timestampBefore(what_);
  vk.vkCmdDispatch(cb, gx, gy, gz);
  commandBuffer_.timestampAfter();
  commandBuffer_.statistics.dispatches++;
  for (auto& s : written_) s->written = s->laidOut = true;
  transitions_.clear();
  aliased_ = false;
}

}  // namespace detail

// ---- Kernel base classes ------------------------------------------------------------------------

Kernel::Kernel(const Context& context, std::string defaultLabel)
    : label(std::move(defaultLabel)), context_(context) {}
Kernel::~Kernel() = default;

namespace {

std::string range(uint64_t start, uint64_t count) {
  return "[" + std::to_string(start) + ", " + std::to_string(start + count) + ")";
}

// The parts of the geometry both kernel kinds share: clip, depth, destination channels.
void resolveCommon(detail::KernelEncoding& e, const Kernel& k, const Image& source,
                   const Image& destination) {
  const std::string what = e.what();
  const ClipRect& clip = k.clipRect;
  if (clip.x >= destination.width() || clip.y >= destination.height() ||
      clip.z >= destination.numberOfImages())
    throw Error(ErrorCode::invalidArgument,
                what + ": clipRect origin (" + std::to_string(clip.x) + ", " +
                    std::to_string(clip.y) + ", " + std::to_string(clip.z) +
                    ") is outside destination '" + destination.label() + "' (" +
                    std::to_string(destination.width()) + "x" +
                    std::to_string(destination.height()) + ", " +
                    std::to_string(destination.numberOfImages()) + " images)");
  e.clipX = clip.x;
  e.clipY = clip.y;
  e.clipWidth = clip.width == kWholeExtent ? destination.width() - clip.x : clip.width;
  e.clipHeight = clip.height == kWholeExtent ? destination.height() - clip.y : clip.height;
  e.imageCount = clip.depth == kWholeExtent ? destination.numberOfImages() - clip.z : clip.depth;
  if (!e.clipWidth || !e.clipHeight || !e.imageCount ||
      uint64_t(clip.x) + e.clipWidth > destination.width() ||
      uint64_t(clip.y) + e.clipHeight > destination.height() ||
      uint64_t(clip.z) + e.imageCount > destination.numberOfImages())
    throw Error(ErrorCode::invalidArgument,
                what + ": clipRect x " + range(clip.x, e.clipWidth) + ", y " +
                    range(clip.y, e.clipHeight) + ", images " + range(clip.z, e.imageCount) +
                    " is empty or outside destination '" + destination.label() + "' (" +
                    std::to_string(destination.width()) + "x" +
                    std::to_string(destination.height()) + ", " +
                    std::to_string(destination.numberOfImages()) + " images)");
  e.destinationFirstImage = clip.z;
  if (k.offset.z < 0 || uint64_t(k.offset.z) + e.imageCount > source.numberOfImages())
    throw Error(ErrorCode::invalidArgument,
                what + ": source images " + range(uint64_t(std::max(k.offset.z, 0)), e.imageCount) +
                    " (offset.z " + std::to_string(k.offset.z) + ", clipRect depth " +
                    std::to_string(e.imageCount) + ") exceed source '" + source.label() +
                    "' with " + std::to_string(source.numberOfImages()) + " images");
  e.sourceFirstImage = uint32_t(k.offset.z);
  e.offsetX = k.offset.x;
  e.offsetY = k.offset.y;
  if (k.sourceFeatureChannelOffset >= source.featureChannels())
    throw Error(ErrorCode::invalidArgument, what + ": sourceFeatureChannelOffset " +
                                                std::to_string(k.sourceFeatureChannelOffset) +
                                                " is not below source '" + source.label() +
                                                "' featureChannels " +
                                                std::to_string(source.featureChannels()));
  e.sourceChannelOffset = k.sourceFeatureChannelOffset;
  e.sourceChannels = std::min(k.sourceFeatureChannelMaxCount,
                              source.featureChannels() - k.sourceFeatureChannelOffset);
  if (!e.sourceChannels)
    throw Error(ErrorCode::invalidArgument, what + ": sourceFeatureChannelMaxCount is 0");
}

void checkDestinationChannels(detail::KernelEncoding& e, const Kernel& k,
                              const Image& destination) {
  e.destinationChannelOffset = k.destinationFeatureChannelOffset;
  if (uint64_t(e.destinationChannelOffset) + e.destinationChannels > destination.featureChannels())
    throw Error(
        ErrorCode::invalidArgument,
        e.what() + ": writes channels " + range(e.destinationChannelOffset, e.destinationChannels) +
            " (destinationFeatureChannelOffset " + std::to_string(e.destinationChannelOffset) +
            ") but destination '" + destination.label() + "' has " +
            std::to_string(destination.featureChannels()) + " feature channels");
}

ChannelFormat temporaryFormat(const Image& source) {
  return source.channelFormat() == ChannelFormat::unorm8 ? ChannelFormat::float16
                                                         : source.channelFormat();
}

// The source channels a kernel reads of source: its window, at least one.
uint32_t sourceWindow(const Kernel& k, const Image& source) {
  return source.featureChannels() > k.sourceFeatureChannelOffset
             ? std::min(k.sourceFeatureChannelMaxCount,
                        source.featureChannels() - k.sourceFeatureChannelOffset)
             : 1;
}

// The temporary a kernel writes from source: `channels` past its channel offset, the images its
// clip rectangle and z offset leave, a format a temporary can hold.
ImageDescriptor temporaryDescriptor(const Kernel& k, const Image& source, uint32_t width,
                                    uint32_t height, uint32_t channels) {
  ImageDescriptor d;
  d.width = width;
  d.height = height;
  d.featureChannels = k.destinationFeatureChannelOffset + channels;
  d.numberOfImages = k.clipRect.depth == kWholeExtent
                         ? source.numberOfImages() - uint32_t(std::max(k.offset.z, 0))
                         : k.clipRect.z + k.clipRect.depth;
  d.channelFormat = temporaryFormat(source);
  d.label = k.label + " output";
  return d;
}

}  // namespace

void UnaryKernel::validate(const detail::KernelEncoding&) const {}

ImageDescriptor UnaryKernel::destinationImageDescriptor(const Image& source) const {
  const uint32_t width = destinationWidth(source.width());
  const uint32_t height = destinationHeight(source.height());
  const uint32_t channels = destinationFeatureChannels(sourceWindow(*this, source));
  return temporaryDescriptor(*this, source, width, height, channels);
}

void UnaryKernel::encode(CommandBuffer& commandBuffer, const Image& source,
                         const Image& destination) {
  encodeChecked(commandBuffer, source, nullptr, destination);
}

void UnaryKernel::encodeChecked(CommandBuffer& commandBuffer, const Image& source,
                                const Image* residual, const Image& destination) {
  detail::KernelEncoding e = checkedEncoding(commandBuffer, source, residual, destination);
  encodeKernel(e);
  countReads(source, residual);
}

detail::KernelEncoding UnaryKernel::checkedEncoding(CommandBuffer& commandBuffer,
                                                    const Image& source, const Image* residual,
                                                    const Image& destination) {
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  detail::KernelEncoding e{cb, commandBuffer, *this, source, destination};
  cb.requireEncoding(e.what());
  detail::checkUsable(cb, source, false, e.what() + " source");
  if (residual) detail::checkUsable(cb, *residual, false, e.what() + " residual");
  detail::checkUsable(cb, destination, true, e.what() + " destination");
  resolveCommon(e, *this, source, destination);
  e.destinationChannels = destinationFeatureChannels(e.sourceChannels);
  checkDestinationChannels(e, *this, destination);
  if (residual) {
    if (residual->width() != destination.width() || residual->height() != destination.height() ||
        residual->numberOfImages() != destination.numberOfImages() ||
        residual->featureChannels() != e.destinationChannels)
      throw Error(ErrorCode::invalidArgument,
                  e.what() + ": residual '" + residual->label() + "' is " +
                      std::to_string(residual->width()) + "x" + std::to_string(residual->height()) +
                      "x" + std::to_string(residual->featureChannels()) + " with " +
                      std::to_string(residual->numberOfImages()) + " images but must be " +
                      std::to_string(destination.width()) + "x" +
                      std::to_string(destination.height()) + "x" +
                      std::to_string(e.destinationChannels) + " with " +
                      std::to_string(destination.numberOfImages()) +
                      " images (the destination's size and images, the channels the kernel "
                      "writes)");
    e.residual = residual;
  }
  validate(e);
  return e;
}

void UnaryKernel::countReads(const Image& source, const Image* residual) {
  detail::consumeRead(source);
  // One kernel reading a temporary as source and residual counts as one read.
  if (residual && residual->storage() != source.storage()) detail::consumeRead(*residual);
}

TemporaryImage UnaryKernel::encode(CommandBuffer& commandBuffer, const Image& source) {
  if (!source.valid())
    throw Error(ErrorCode::invalidArgument, "kernel '" + label + "': the source is empty");
  TemporaryImage destination(commandBuffer, destinationImageDescriptor(source));
  encode(commandBuffer, source, destination);
  return destination;
}

void BinaryKernel::validate(const detail::BinaryKernelEncoding&) const {}

ImageDescriptor BinaryKernel::destinationImageDescriptor(const Image& primary, const Image&) const {
  return temporaryDescriptor(*this, primary, primary.width(), primary.height(),
                             sourceWindow(*this, primary));
}

void BinaryKernel::encode(CommandBuffer& commandBuffer, const Image& primary,
                          const Image& secondary, const Image& destination) {
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  detail::BinaryKernelEncoding e{{cb, commandBuffer, *this, primary, destination}, secondary};
  cb.requireEncoding(e.what());
  detail::checkUsable(cb, primary, false, e.what() + " primary source");
  detail::checkUsable(cb, secondary, false, e.what() + " secondary source");
  detail::checkUsable(cb, destination, true, e.what() + " destination");
  resolveCommon(e, *this, primary, destination);
  // A one-image secondary is let through for any n: element-wise arithmetic broadcasts it over
  // the batch (ONNX); a kernel that cannot must reject it in validate().
  const bool batchBroadcast = secondary.numberOfImages() == 1 && secondaryOffset.z == 0;
  if (!batchBroadcast && (secondaryOffset.z < 0 ||
                          uint64_t(secondaryOffset.z) + e.imageCount > secondary.numberOfImages()))
    throw Error(ErrorCode::invalidArgument,
                e.what() + ": secondary images " +
                    range(uint64_t(std::max(secondaryOffset.z, 0)), e.imageCount) + " exceed '" +
                    secondary.label() + "' with " + std::to_string(secondary.numberOfImages()) +
                    " images");
  if (secondaryFeatureChannelOffset >= secondary.featureChannels())
    throw Error(ErrorCode::invalidArgument, e.what() + ": secondaryFeatureChannelOffset " +
                                                std::to_string(secondaryFeatureChannelOffset) +
                                                " is not below '" + secondary.label() +
                                                "' featureChannels " +
                                                std::to_string(secondary.featureChannels()));
  e.secondaryFirstImage = uint32_t(secondaryOffset.z);
  e.secondaryOffsetX = secondaryOffset.x;
  e.secondaryOffsetY = secondaryOffset.y;
  e.secondaryChannelOffset = secondaryFeatureChannelOffset;
  e.secondaryChannels = std::min(sourceFeatureChannelMaxCount,
                                 secondary.featureChannels() - secondaryFeatureChannelOffset);
  e.destinationChannels = e.sourceChannels;
  checkDestinationChannels(e, *this, destination);
  validate(e);
  encodeKernel(e);
  detail::consumeRead(primary);
  // One kernel reading a temporary through both sources counts as one read.
  if (secondary.storage() != primary.storage()) detail::consumeRead(secondary);
}

TemporaryImage BinaryKernel::encode(CommandBuffer& commandBuffer, const Image& primary,
                                    const Image& secondary) {
  if (!primary.valid() || !secondary.valid())
    throw Error(ErrorCode::invalidArgument, "kernel '" + label + "': a source is empty");
  TemporaryImage destination(commandBuffer, destinationImageDescriptor(primary, secondary));
  encode(commandBuffer, primary, secondary, destination);
  return destination;
}

}  // namespace vkcnn
