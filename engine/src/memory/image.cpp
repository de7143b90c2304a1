#include <algorithm>
#include <cstring>
#include <sstream>

#include "memory/device_buffer.h"
#include "memory/half.h"
#include "memory/temporary_rules.h"
#include "memory/image_storage.h"
#include "vulkan/command_buffer_impl.h"
#include "vulkan/context_impl.h"
#include "vulkan/device_profile.h"

namespace vkcnn {
namespace detail {

namespace {
std::atomic<uint64_t> nextStorageId{1};

constexpr VkImageUsageFlags kImageUsage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
                                          VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                          VK_IMAGE_USAGE_TRANSFER_DST_BIT;

std::string shape(uint32_t w, uint32_t h, uint32_t c, uint32_t n) {
  std::ostringstream s;
  s << w << "x" << h << "x" << c << (n == 1 ? ", 1 image" : ", " + std::to_string(n) + " images");
  return s.str();
}
}  // namespace

VkFormat vkFormatOf(ChannelFormat format) {
  switch (format) {
    case ChannelFormat::float16:
      return VK_FORMAT_R16G16B16A16_SFLOAT;
    case ChannelFormat::float32:
      return VK_FORMAT_R32G32B32A32_SFLOAT;
    case ChannelFormat::unorm8:
      return VK_FORMAT_R8G8B8A8_UNORM;
  }
  return VK_FORMAT_UNDEFINED;
}

// Host transfers move images between their resting layout (GENERAL) and the transfer-optimal
// layouts, so copies run at full speed and the validation layer's advice is followed.
void transitionForTransfer(ContextImpl& context, VkCommandBuffer cb, const ImageStorage& s,
                           VkImageLayout transferLayout, bool toTransfer) {
  VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  const VkAccessFlags transferAccess = transferLayout == VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL
                                           ? VK_ACCESS_TRANSFER_WRITE_BIT
                                           : VK_ACCESS_TRANSFER_READ_BIT;
  b.srcAccessMask = toTransfer ? VkAccessFlags(VK_ACCESS_MEMORY_WRITE_BIT) : transferAccess;
  b.dstAccessMask = toTransfer ? transferAccess : VkAccessFlags(VK_ACCESS_MEMORY_READ_BIT);
  b.oldLayout = toTransfer ? s.layout() : transferLayout;
  b.newLayout = toTransfer ? transferLayout : s.layout();
  b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = s.image;
  b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, s.layers()};
  context.vk().vkCmdPipelineBarrier(
      cb, toTransfer ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT : VK_PIPELINE_STAGE_TRANSFER_BIT,
      toTransfer ? VK_PIPELINE_STAGE_TRANSFER_BIT : VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0,
      nullptr, 0, nullptr, 1, &b);
}

ImageStorage::ImageStorage(std::shared_ptr<ContextImpl> ctx, const ImageDescriptor& d,
                           bool isTemporary)
    : context(std::move(ctx)),
      format(vkFormatOf(d.channelFormat)),
      channelFormat(d.channelFormat),
      width(d.width),
      height(d.height),
      featureChannels(d.featureChannels),
      numberOfImages(d.numberOfImages),
      label(d.label),
      id(nextStorageId++),
      temporary(isTemporary) {
  if (label.empty()) label = context->uniqueName(isTemporary ? "temporary image" : "image");
  const std::string what = (isTemporary ? "temporary image '" : "image '") + label + "' (" +
                           shape(width, height, featureChannels, numberOfImages) + ")";
  if (!width || !height || !featureChannels || !numberOfImages)
    throw Error(ErrorCode::invalidArgument,
                what + ": width, height, featureChannels and numberOfImages must all be positive");
  const auto& caps = context->capabilities();
  if (width > caps.maxImageDimension2D || height > caps.maxImageDimension2D)
    throw Error(ErrorCode::limitExceeded,
                what + ": " + std::to_string(std::max(width, height)) +
                    " pixels exceed this device's maxImageDimension2D of " +
                    std::to_string(caps.maxImageDimension2D) + profileNote(caps));
  const uint64_t layerCount = uint64_t(slicesPerImage()) * numberOfImages;
  if (layerCount > caps.maxImageArrayLayers)
    throw Error(ErrorCode::limitExceeded,
                what + " needs " + std::to_string(layerCount) + " array layers (" +
                    std::to_string(slicesPerImage()) + " per image); this device allows at most " +
                    std::to_string(caps.maxImageArrayLayers) + " (maxImageArrayLayers)" +
                    profileNote(caps) +
                    (slicesPerImage() > caps.maxImageArrayLayers
                         ? ": one image of " + std::to_string(featureChannels) +
                               " channels does not fit (at most " +
                               std::to_string(uint64_t(caps.maxImageArrayLayers) * 4) +
                               " channels an image)"
                         : std::string(": split the batch into an ImageBatch (Image::makeBatch)")));
  usage = kImageUsage;
}

ImageStorage::~ImageStorage() {
  context->settleAfterLoss();
  const auto& vk = context->vk();
  for (auto& [key, view] : views_) vk.vkDestroyImageView(context->device(), view, nullptr);
  if (temporary && bound && !released) {
    if (auto cb = owner.lock()) cb->temporaries.release(slot);
  }
  if (!wrapped && image) vk.vkDestroyImage(context->device(), image, nullptr);
  context->allocator().free(allocation);
}

std::string ImageStorage::describe() const {
  return (temporary ? "temporary image '" : "image '") + label + "' (" +
         shape(width, height, featureChannels, numberOfImages) + ")";
}

void ImageStorage::createImage() {
  if (image) return;
  VkFormatProperties props;
  context->vki().vkGetPhysicalDeviceFormatProperties(context->physicalDevice(), format, &props);
  const VkFormatFeatureFlags needed =
      VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT | VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT;
  if ((props.optimalTilingFeatures & needed) != needed)
    throw Error(ErrorCode::unsupported, describe() + ": the device cannot use " +
                                            toString(channelFormat) +
                                            " images as storage and sampled images");
  VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  bitsViewable_ =
      channelFormat == ChannelFormat::float16 && context->capabilities().float16BitStores;
  if (bitsViewable_) info.flags = VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT;
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = format;
  info.extent = {width, height, 1};
  info.mipLevels = 1;
  info.arrayLayers = layers();
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  context->check(context->vk().vkCreateImage(context->device(), &info, nullptr, &image),
                 "vkCreateImage");
  context->setName(VK_OBJECT_TYPE_IMAGE, image, label);
}

const VkMemoryRequirements& ImageStorage::memoryRequirements() {
  std::lock_guard lock(mutex_);
  if (!requirementsKnown_) {
    createImage();
    context->vk().vkGetImageMemoryRequirements(context->device(), image, &requirements_);
    requirementsKnown_ = true;
  }
  return requirements_;
}

void ImageStorage::materialize() {
  if (materialized || wrapped || temporary) return;  // temporaries are bound to pool memory
  memoryRequirements();
  std::lock_guard lock(mutex_);
  if (materialized) return;
  // A failure below leaves the image as it was or bound and not yet zeroed, and the next call
  // carries on from there (an image can be bound only once).
  if (!allocation) {
    Allocation a = context->allocator().allocate(requirements_, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                                 0, describe().c_str());
    VkResult bound = context->vk().vkBindImageMemory(context->device(), image, a.memory, a.offset);
    if (bound != VK_SUCCESS) context->allocator().free(a);
    context->check(bound, "vkBindImageMemory");
    allocation = a;
  }
  // Zero-fill so padding channels never hold NaN or Inf, and leave the image in GENERAL for good.
  context->submitAndWait(
      [&](VkCommandBuffer cb) {
        const auto& vk = context->vk();
        transferPrologue(*context, cb);
        VkImageMemoryBarrier toGeneral{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        toGeneral.srcAccessMask = 0;
        toGeneral.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        toGeneral.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        toGeneral.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
        toGeneral.srcQueueFamilyIndex = toGeneral.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        toGeneral.image = image;
        toGeneral.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers()};
        vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                                VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr, 1,
                                &toGeneral);
        VkClearColorValue zero{};
        VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers()};
        vk.vkCmdClearColorImage(cb, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &zero, 1, &range);
        transitionForTransfer(*context, cb, *this, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, false);
        transferEpilogue(*context, cb);
      },
      "image initialisation");
  materialized = true;
}

VkImageView ImageStorage::view(uint32_t baseLayer, uint32_t layerCount, VkFormat viewFormat) {
  if (viewFormat == VK_FORMAT_UNDEFINED) viewFormat = format;
  std::lock_guard lock(mutex_);
  auto key = std::make_tuple(baseLayer, layerCount, viewFormat);
  auto it = views_.find(key);
  if (it != views_.end()) return it->second;
  VkImageViewCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  info.image = image;
  info.viewType = VK_IMAGE_VIEW_TYPE_2D_ARRAY;
  info.format = viewFormat;
  info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, baseLayer, layerCount};
  VkImageView view = VK_NULL_HANDLE;
  context->check(context->vk().vkCreateImageView(context->device(), &info, nullptr, &view),
                 "vkCreateImageView");
  context->setName(VK_OBJECT_TYPE_IMAGE_VIEW, view,
                   label + " layers " + std::to_string(baseLayer) + "+" +
                       std::to_string(layerCount) + (viewFormat == format ? "" : " as bits"));
  views_.emplace(key, view);
  return view;
}

// ---- host transfers ---------------------------------------------------------------------------

namespace {

size_t hostElementSize(HostDataType t) {
  switch (t) {
    case HostDataType::float32:
      return 4;
    case HostDataType::float16:
      return 2;
    case HostDataType::uint8:
      return 1;
  }
  return 4;
}

float readHost(const uint8_t* p, HostDataType t) {
  switch (t) {
    case HostDataType::float32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case HostDataType::float16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return halfToFloat(h);
    }
    case HostDataType::uint8:
      return float(*p) / 255.0f;
  }
  return 0;
}

void writeHost(uint8_t* p, HostDataType t, float v) {
  switch (t) {
    case HostDataType::float32:
      std::memcpy(p, &v, 4);
      break;
    case HostDataType::float16: {
      uint16_t h = floatToHalf(v);
      std::memcpy(p, &h, 2);
      break;
    }
    case HostDataType::uint8:
      *p = uint8_t(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f);
      break;
  }
}

float readStorage(const uint8_t* p, ChannelFormat f) {
  switch (f) {
    case ChannelFormat::float16:
      return readHost(p, HostDataType::float16);
    case ChannelFormat::float32:
      return readHost(p, HostDataType::float32);
    case ChannelFormat::unorm8:
      return readHost(p, HostDataType::uint8);
  }
  return 0;
}

void writeStorage(uint8_t* p, ChannelFormat f, float v) {
  switch (f) {
    case ChannelFormat::float16:
      writeHost(p, HostDataType::float16, v);
      break;
    case ChannelFormat::float32:
      writeHost(p, HostDataType::float32, v);
      break;
    case ChannelFormat::unorm8:
      writeHost(p, HostDataType::uint8, v);
      break;
  }
}

// Everything one readBytes/writeBytes call touches, resolved and checked.
struct Transfer {
  ImageStorage* storage;
  uint32_t x, y, width, height;
  uint32_t firstChannel;  // storage channel of host channel 0
  uint32_t channels;      // host channels moved
  uint32_t firstLayer;    // storage layer of the first touched slice
  uint32_t slices;        // layers touched
  size_t elementSize, bytesPerRow, bytesPerImage;
  size_t texelSize;

  size_t stagingSize() const { return size_t(width) * height * slices * texelSize; }
  uint8_t* stagingTexel(uint8_t* base, uint32_t slice, uint32_t px, uint32_t py) const {
    return base + ((size_t(slice) * height + py) * width + px) * texelSize;
  }
};

Transfer resolve(const Image& image, const ImageReadWriteParams& p, bool writing) {
  ImageStorage& s = *image.storage();
  const std::string what = (writing ? "writeBytes to " : "readBytes from ") + s.describe();
  if (s.temporary)
    throw Error(ErrorCode::misuse, what + ": the host cannot read or write a temporary image");
  if (s.wrapped && s.wrappedLayout != VK_IMAGE_LAYOUT_GENERAL)
    throw Error(ErrorCode::unsupported, what +
                                            ": host transfers need a wrapped image in "
                                            "VK_IMAGE_LAYOUT_GENERAL");
  if (p.imageIndex >= image.numberOfImages())
    throw Error(ErrorCode::invalidArgument, what + ": imageIndex " + std::to_string(p.imageIndex) +
                                                " is outside its " +
                                                std::to_string(image.numberOfImages()) + " images");
  Transfer t{};
  t.storage = &s;
  t.x = p.region.x;
  t.y = p.region.y;
  t.width = p.region.width ? p.region.width : (s.width > t.x ? s.width - t.x : 0);
  t.height = p.region.height ? p.region.height : (s.height > t.y ? s.height - t.y : 0);
  if (uint64_t(t.x) + t.width > s.width || uint64_t(t.y) + t.height > s.height || !t.width ||
      !t.height)
    throw Error(ErrorCode::invalidArgument,
                what + ": region (" + std::to_string(t.x) + ", " + std::to_string(t.y) + ") " +
                    std::to_string(t.width) + "x" + std::to_string(t.height) +
                    " is empty or outside the image");
  if (p.featureChannelOffset >= image.featureChannels())
    throw Error(ErrorCode::invalidArgument,
                what + ": featureChannelOffset " + std::to_string(p.featureChannelOffset) +
                    " is not below featureChannels " + std::to_string(image.featureChannels()));
  t.channels = p.numberOfFeatureChannels ? p.numberOfFeatureChannels
                                         : image.featureChannels() - p.featureChannelOffset;
  if (uint64_t(p.featureChannelOffset) + t.channels > image.featureChannels())
    throw Error(ErrorCode::invalidArgument,
                what + ": channels " + std::to_string(p.featureChannelOffset) + "+" +
                    std::to_string(t.channels) + " exceed featureChannels " +
                    std::to_string(image.featureChannels()));
  if (p.dataType == HostDataType::uint8 && s.channelFormat != ChannelFormat::unorm8)
    throw Error(ErrorCode::invalidArgument, what + ": uint8 host data needs a unorm8 image");
  t.firstChannel = image.storageChannelOffset() + p.featureChannelOffset;
  const uint32_t lastChannel = t.firstChannel + t.channels - 1;
  const uint32_t storageImage = image.storageFirstImage() + p.imageIndex;
  t.firstLayer = storageImage * s.slicesPerImage() + t.firstChannel / 4;
  t.slices = lastChannel / 4 - t.firstChannel / 4 + 1;
  t.elementSize = hostElementSize(p.dataType);
  t.texelSize = 4 * bytesPerChannel(s.channelFormat);
  const bool hwc = p.dataLayout == DataLayout::HeightxWidthxFeatureChannels;
  const size_t tightRow = size_t(t.width) * (hwc ? t.channels : 1) * t.elementSize;
  t.bytesPerRow = p.bytesPerRow ? p.bytesPerRow : tightRow;
  if (t.bytesPerRow < tightRow)
    throw Error(ErrorCode::invalidArgument,
                what + ": bytesPerRow " + std::to_string(p.bytesPerRow) +
                    " is less than a row of " + std::to_string(tightRow) + " bytes");
  const size_t tightImage = t.bytesPerRow * t.height;
  t.bytesPerImage = p.bytesPerImage ? p.bytesPerImage : tightImage;
  if (!hwc && t.bytesPerImage < tightImage)
    throw Error(ErrorCode::invalidArgument,
                what + ": bytesPerImage " + std::to_string(p.bytesPerImage) +
                    " is less than one channel plane of " + std::to_string(tightImage) + " bytes");
  return t;
}

size_t hostOffset(const Transfer& t, DataLayout layout, uint32_t px, uint32_t py, uint32_t c) {
  if (layout == DataLayout::HeightxWidthxFeatureChannels)
    return py * t.bytesPerRow + (size_t(px) * t.channels + c) * t.elementSize;
  return c * t.bytesPerImage + py * t.bytesPerRow + px * t.elementSize;
}

VkBufferImageCopy copyRegion(const Transfer& t) {
  VkBufferImageCopy region{};
  region.bufferOffset = 0;
  region.bufferRowLength = t.width;
  region.bufferImageHeight = t.height;
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, t.firstLayer, t.slices};
  region.imageOffset = {int32_t(t.x), int32_t(t.y), 0};
  region.imageExtent = {t.width, t.height, 1};
  return region;
}

void download(ContextImpl& context, const Transfer& t, StagingBuffer& staging) {
  VkBufferImageCopy region = copyRegion(t);
  context.submitAndWait(
      [&](VkCommandBuffer cb) {
        transferPrologue(context, cb);
        transitionForTransfer(context, cb, *t.storage, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, true);
        context.vk().vkCmdCopyImageToBuffer(cb, t.storage->image,
                                            VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging.buffer(),
                                            1, &region);
        transitionForTransfer(context, cb, *t.storage, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, false);
        transferEpilogue(context, cb);
      },
      "image download");
  staging.invalidate();
}

}  // namespace
}  // namespace detail

// ---- public Image -----------------------------------------------------------------------------

using detail::ImageStorage;

const char* toString(ChannelFormat format) {
  switch (format) {
    case ChannelFormat::float16:
      return "float16";
    case ChannelFormat::float32:
      return "float32";
    case ChannelFormat::unorm8:
      return "unorm8";
  }
  return "unknown";
}

uint32_t bytesPerChannel(ChannelFormat format) {
  switch (format) {
    case ChannelFormat::float16:
      return 2;
    case ChannelFormat::float32:
      return 4;
    case ChannelFormat::unorm8:
      return 1;
  }
  return 4;
}

Image::Image(const Context& context, const ImageDescriptor& descriptor)
    : storage_(std::make_shared<ImageStorage>(context.impl(), descriptor, false)),
      featureChannels_(descriptor.featureChannels),
      numberOfImages_(descriptor.numberOfImages) {}

Image::Image(std::shared_ptr<ImageStorage> storage, uint32_t featureChannels,
             uint32_t numberOfImages, uint32_t firstImage, uint32_t channelOffset,
             std::shared_ptr<const Image> parent)
    : storage_(std::move(storage)),
      featureChannels_(featureChannels),
      numberOfImages_(numberOfImages),
      firstImage_(firstImage),
      channelOffset_(channelOffset),
      parent_(std::move(parent)) {}

Image Image::wrap(const Context& context, VkImage image, VkFormat format, uint32_t width,
                  uint32_t height, uint32_t arrayLayers, uint32_t featureChannels,
                  VkImageUsageFlags usage, VkImageLayout layout, const std::string& label) {
  ChannelFormat channelFormat;
  switch (format) {
    case VK_FORMAT_R16G16B16A16_SFLOAT:
      channelFormat = ChannelFormat::float16;
      break;
    case VK_FORMAT_R32G32B32A32_SFLOAT:
      channelFormat = ChannelFormat::float32;
      break;
    case VK_FORMAT_R8G8B8A8_UNORM:
      channelFormat = ChannelFormat::unorm8;
      break;
    default:
      throw Error(ErrorCode::unsupported,
                  "Image::wrap: VkFormat " + std::to_string(int(format)) +
                      " is not one vkcnn stores (rgba16f, rgba32f or rgba8 unorm)");
  }
  if (!image) throw Error(ErrorCode::invalidArgument, "Image::wrap: the VkImage is null");
  if (!featureChannels || !arrayLayers)
    throw Error(ErrorCode::invalidArgument,
                "Image::wrap: featureChannels and arrayLayers must be positive");
  const uint32_t slices = (featureChannels + 3) / 4;
  if (arrayLayers % slices)
    throw Error(ErrorCode::invalidArgument,
                "Image::wrap: " + std::to_string(arrayLayers) + " array layers do not hold whole " +
                    std::to_string(featureChannels) + "-channel images (" + std::to_string(slices) +
                    " layers each)");
  if (!(usage & VK_IMAGE_USAGE_SAMPLED_BIT) && !(usage & VK_IMAGE_USAGE_STORAGE_BIT))
    throw Error(ErrorCode::invalidArgument,
                "Image::wrap: the image needs VK_IMAGE_USAGE_SAMPLED_BIT or STORAGE_BIT");
  ImageDescriptor d;
  d.width = width;
  d.height = height;
  d.featureChannels = featureChannels;
  d.numberOfImages = arrayLayers / slices;
  d.channelFormat = channelFormat;
  d.label = label;
  auto storage = std::make_shared<ImageStorage>(context.impl(), d, false);
  storage->image = image;
  storage->wrapped = true;
  storage->wrappedLayout = layout;
  storage->usage = usage;
  storage->materialized = true;
  return Image(storage, featureChannels, d.numberOfImages, 0, 0, nullptr);
}

uint32_t Image::width() const {
  return storage_->width;
}
uint32_t Image::height() const {
  return storage_->height;
}
ChannelFormat Image::channelFormat() const {
  return storage_->channelFormat;
}
VkFormat Image::vkFormat() const {
  return storage_->format;
}
uint32_t Image::precision() const {
  switch (storage_->channelFormat) {
    case ChannelFormat::float16:
      return 11;
    case ChannelFormat::float32:
      return 24;
    case ChannelFormat::unorm8:
      return 8;
  }
  return 0;
}
size_t Image::resourceSize() const {
  if (parent_ || storage_->wrapped) return 0;
  if (storage_->temporary) return size_t(storage_->slot.size);
  return size_t(storage_->memoryRequirements().size);
}
VkImage Image::vkImage() const {
  if (storage_->temporary) {
    if (!storage_->bound)
      throw Error(ErrorCode::misuse, storage_->describe() + ": no memory yet (nothing wrote it)");
  } else {
    storage_->materialize();
  }
  return storage_->image;
}
const std::string& Image::label() const {
  return storage_->label;
}
void Image::setLabel(const std::string& label) {
  storage_->label = label;
  if (storage_->image) storage_->context->setName(VK_OBJECT_TYPE_IMAGE, storage_->image, label);
}
bool Image::isTemporary() const {
  return storage_ && storage_->temporary;
}
Image Image::parent() const {
  return parent_ ? *parent_ : Image();
}

Image Image::subImage(ChannelRange range) const {
  if (range.location % 4)
    throw Error(ErrorCode::invalidArgument,
                "subImage of " + storage_->describe() + ": channel start " +
                    std::to_string(range.location) +
                    " is not a multiple of 4 (views must start at an array layer)");
  if (!range.length || uint64_t(range.location) + range.length > featureChannels_)
    throw Error(ErrorCode::invalidArgument,
                "subImage of " + storage_->describe() + ": channels " +
                    std::to_string(range.location) + "+" + std::to_string(range.length) +
                    " are empty or exceed its " + std::to_string(featureChannels_) + " channels");
  return Image(storage_, range.length, numberOfImages_, firstImage_,
               channelOffset_ + range.location, std::make_shared<const Image>(*this));
}

Image Image::batchRepresentation(BatchRange range) const {
  if (!range.length || uint64_t(range.location) + range.length > numberOfImages_)
    throw Error(ErrorCode::invalidArgument,
                "batchRepresentation of " + storage_->describe() + ": images " +
                    std::to_string(range.location) + "+" + std::to_string(range.length) +
                    " are empty or exceed its " + std::to_string(numberOfImages_) + " images");
  return Image(storage_, featureChannels_, range.length, firstImage_ + range.location,
               channelOffset_, std::make_shared<const Image>(*this));
}

ImageBatch Image::batchRepresentation() const {
  ImageBatch batch;
  for (uint32_t i = 0; i < numberOfImages_; ++i) batch.push_back(batchRepresentation({i, 1}));
  return batch;
}

uint32_t Image::maxNumberOfImages(const Context& context, uint32_t featureChannels) {
  if (!featureChannels) throw Error(ErrorCode::invalidArgument, "featureChannels must be positive");
  return context.capabilities().maxImageArrayLayers / ((featureChannels + 3) / 4);
}

ImageBatch Image::makeBatch(const Context& context, const ImageDescriptor& descriptor) {
  const uint32_t perImage = maxNumberOfImages(context, descriptor.featureChannels);
  if (perImage == 0)
    throw Error(ErrorCode::limitExceeded,
                std::to_string(descriptor.featureChannels) +
                    " feature channels need more array layers than this device allows (" +
                    std::to_string(context.capabilities().maxImageArrayLayers) +
                    ", maxImageArrayLayers)" + detail::profileNote(context.capabilities()));
  ImageBatch batch;
  for (uint32_t done = 0; done < descriptor.numberOfImages; done += perImage) {
    ImageDescriptor d = descriptor;
    d.numberOfImages = std::min(perImage, descriptor.numberOfImages - done);
    if (!descriptor.label.empty())
      d.label = descriptor.label + "[" + std::to_string(batch.size()) + "]";
    batch.emplace_back(context, d);
  }
  return batch;
}

void Image::writeBytes(const void* data, const ImageReadWriteParams& params) {
  if (!storage_) throw Error(ErrorCode::invalidArgument, "writeBytes on an empty Image handle");
  if (!data)
    throw Error(ErrorCode::invalidArgument,
                "writeBytes to " + storage_->describe() + ": data is null");
  storage_->context->throwIfLost();  // before any allocation
  detail::Transfer t = detail::resolve(*this, params, true);
  ImageStorage& s = *storage_;
  s.materialize();
  detail::ContextImpl& context = *s.context;
  detail::StagingPool::Lease lease = context.staging().acquire(t.stagingSize(), s.label.c_str());
  detail::StagingBuffer& staging = *lease;
  auto* base = static_cast<uint8_t*>(staging.data());
  // Channels of touched layers that this call does not write but that hold data: read them first.
  const uint32_t sliceStart = (t.firstChannel / 4) * 4;
  bool preserve = false;
  for (uint32_t sc = sliceStart; sc < sliceStart + 4 * t.slices && !preserve; ++sc)
    preserve = sc < s.featureChannels && (sc < t.firstChannel || sc >= t.firstChannel + t.channels);
  if (preserve) detail::download(context, t, staging);
  const auto* host = static_cast<const uint8_t*>(data);
  const uint32_t cs = bytesPerChannel(s.channelFormat);
  for (uint32_t slice = 0; slice < t.slices; ++slice)
    for (uint32_t py = 0; py < t.height; ++py)
      for (uint32_t px = 0; px < t.width; ++px) {
        uint8_t* texel = t.stagingTexel(base, slice, px, py);
        for (uint32_t k = 0; k < 4; ++k) {
          const uint32_t sc = sliceStart + slice * 4 + k;
          if (sc >= s.featureChannels) {
            detail::writeStorage(texel + k * cs, s.channelFormat, 0.0f);  // padding stays zero
          } else if (sc >= t.firstChannel && sc < t.firstChannel + t.channels) {
            const uint32_t c = sc - t.firstChannel;
            float v = detail::readHost(host + detail::hostOffset(t, params.dataLayout, px, py, c),
                                       params.dataType);
            detail::writeStorage(texel + k * cs, s.channelFormat, v);
          }
        }
      }
  staging.flush();
  VkBufferImageCopy region = detail::copyRegion(t);
  context.submitAndWait(
      [&](VkCommandBuffer cb) {
        detail::transferPrologue(context, cb);
        detail::transitionForTransfer(context, cb, s, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, true);
        context.vk().vkCmdCopyBufferToImage(cb, staging.buffer(), s.image,
                                            VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
        detail::transitionForTransfer(context, cb, s, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, false);
        detail::transferEpilogue(context, cb);
      },
      "image upload");
}

void Image::readBytes(void* data, const ImageReadWriteParams& params) const {
  if (!storage_) throw Error(ErrorCode::invalidArgument, "readBytes on an empty Image handle");
  if (!data)
    throw Error(ErrorCode::invalidArgument,
                "readBytes from " + storage_->describe() + ": data is null");
  storage_->context->throwIfLost();  // before any allocation
  detail::Transfer t = detail::resolve(*this, params, false);
  ImageStorage& s = *storage_;
  s.materialize();
  detail::StagingPool::Lease lease = s.context->staging().acquire(t.stagingSize(), s.label.c_str());
  detail::StagingBuffer& staging = *lease;
  detail::download(*s.context, t, staging);
  auto* base = static_cast<uint8_t*>(staging.data());
  auto* host = static_cast<uint8_t*>(data);
  const uint32_t cs = bytesPerChannel(s.channelFormat);
  const uint32_t sliceStart = (t.firstChannel / 4) * 4;
  for (uint32_t c = 0; c < t.channels; ++c) {
    const uint32_t sc = t.firstChannel + c;
    const uint32_t slice = (sc - sliceStart) / 4, k = sc % 4;
    for (uint32_t py = 0; py < t.height; ++py)
      for (uint32_t px = 0; px < t.width; ++px) {
        float v =
            detail::readStorage(t.stagingTexel(base, slice, px, py) + k * cs, s.channelFormat);
        detail::writeHost(host + detail::hostOffset(t, params.dataLayout, px, py, c),
                          params.dataType, v);
      }
  }
}

void Image::writeFloats(std::span<const float> data, DataLayout layout, uint32_t imageIndex) {
  const size_t expected = size_t(width()) * height() * featureChannels_;
  if (data.size() != expected)
    throw Error(ErrorCode::invalidArgument, "writeFloats to " + storage_->describe() + ": " +
                                                std::to_string(data.size()) + " floats given, " +
                                                std::to_string(expected) + " expected");
  ImageReadWriteParams p;
  p.dataLayout = layout;
  p.imageIndex = imageIndex;
  writeBytes(data.data(), p);
}

std::vector<float> Image::readFloats(DataLayout layout, uint32_t imageIndex) const {
  std::vector<float> out(size_t(width()) * height() * featureChannels_);
  ImageReadWriteParams p;
  p.dataLayout = layout;
  p.imageIndex = imageIndex;
  readBytes(out.data(), p);
  return out;
}

// ---- TemporaryImage ---------------------------------------------------------------------------

TemporaryImage::TemporaryImage(const CommandBuffer& commandBuffer, const ImageDescriptor& d) {
  auto cb = commandBuffer.impl();
  cb->requireEncoding("creating temporary image '" + d.label + "'");
  storage_ = std::make_shared<ImageStorage>(cb->context, d, true);
  storage_->owner = cb;
  featureChannels_ = d.featureChannels;
  numberOfImages_ = d.numberOfImages;
  cb->keepAlive(storage_);
}

TemporaryImage::TemporaryImage(const Image& image) : Image(image) {
  if (!image.isTemporary())
    throw Error(ErrorCode::invalidArgument,
                "TemporaryImage(Image): '" +
                    (image.valid() ? image.label() : std::string("empty")) +
                    "' is not a temporary image");
}

uint32_t TemporaryImage::readCount() const {
  return detail::temporaryReadCount(*storage_);
}

void TemporaryImage::setReadCount(uint32_t readCount) {
  detail::setTemporaryReadCount(*storage_, readCount);
}

void TemporaryImage::decrementReadCount() {
  detail::decrementTemporaryReadCount(*storage_);
}

}  // namespace vkcnn
