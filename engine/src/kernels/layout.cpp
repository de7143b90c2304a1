// BufferToImage and ImageToBuffer: float32 tensors between storage buffers and sliced images.
#include "kernels/kernel_encoding.h"
#include "layout_interface.h"
#include "vkcnn/buffer.h"
#include "vkcnn/error.h"

namespace vkcnn {

const char* toString(TensorLayout layout) {
  switch (layout) {
    case TensorLayout::NCHW:
      return "NCHW";
    case TensorLayout::NHWC:
      return "NHWC";
  }
  return "unknown";
}

namespace {

// The tensor one encode call moves, resolved and checked against the image and the buffer.
struct LayoutEncoding {
  std::string what;
  uint32_t channelOffset = 0, channels = 0;
  uint64_t bytes = 0;
};

std::string range(uint64_t start, uint64_t count) {
  return "[" + std::to_string(start) + ", " + std::to_string(start + count) + ")";
}

LayoutEncoding resolve(const std::string& kind, const std::string& label, TensorLayout layout,
                       const Image& image, const char* imageRole, uint32_t channelOffset,
                       const char* offsetName, uint32_t featureChannels, size_t bufferOffset) {
  LayoutEncoding r;
  r.what = kind + " '" + label + "'";
  if (!image.valid())
    throw Error(ErrorCode::invalidArgument, r.what + ": the " + imageRole + " Image is empty");
  if (layout != TensorLayout::NCHW && layout != TensorLayout::NHWC)
    throw Error(ErrorCode::invalidArgument,
                r.what + ": data layout " + std::to_string(int(layout)) + " does not exist");
  if (channelOffset >= image.featureChannels())
    throw Error(ErrorCode::invalidArgument,
                r.what + ": " + offsetName + " " + std::to_string(channelOffset) +
                    " is not below " + imageRole + " '" + image.label() + "' featureChannels " +
                    std::to_string(image.featureChannels()));
  r.channelOffset = channelOffset;
  r.channels = featureChannels ? featureChannels : image.featureChannels() - channelOffset;
  if (uint64_t(channelOffset) + r.channels > image.featureChannels())
    throw Error(ErrorCode::invalidArgument,
                r.what + ": channels " + range(channelOffset, r.channels) + " (" + offsetName +
                    " " + std::to_string(channelOffset) + ", featureChannels " +
                    std::to_string(featureChannels) + ") exceed " + imageRole + " '" +
                    image.label() + "' with " + std::to_string(image.featureChannels()) +
                    " feature channels");
  if (bufferOffset % 4)
    throw Error(ErrorCode::invalidArgument, r.what + ": bufferOffset " +
                                                std::to_string(bufferOffset) +
                                                " is not a multiple of 4 bytes (float32)");
  r.bytes = uint64_t(image.numberOfImages()) * r.channels * image.height() * image.width() * 4;
  return r;
}

void checkBuffer(const LayoutEncoding& r, const detail::CommandBufferImpl& cb, const Buffer& buffer,
                 size_t bufferOffset, const char* role) {
  if (!buffer.valid())
    throw Error(ErrorCode::invalidArgument,
                r.what + ": the " + std::string(role) + " Buffer is empty");
  if (buffer.context().impl() != cb.context)
    throw Error(ErrorCode::invalidArgument,
                r.what + ": " + role + " buffer '" + buffer.label() +
                    "' belongs to another Context than command buffer '" + cb.label + "'");
  if (bufferOffset > buffer.size() || r.bytes > buffer.size() - bufferOffset)
    throw Error(ErrorCode::invalidArgument,
                r.what + ": the tensor needs bytes " + range(bufferOffset, r.bytes) + " of " +
                    role + " buffer '" + buffer.label() + "' but it holds only " +
                    std::to_string(buffer.size()) + " bytes: the buffer is too small");
  // Shader element indices are 32-bit.
  if (r.bytes / 4 + bufferOffset / 4 > UINT32_MAX)
    throw Error(ErrorCode::limitExceeded, r.what + ": a tensor of " + std::to_string(r.bytes / 4) +
                                              " floats at bufferOffset " +
                                              std::to_string(bufferOffset) +
                                              " exceeds 2^32 elements");
}

detail::shader::LayoutPush layoutPush(const Image& image, TensorLayout layout, uint32_t channels,
                                      const detail::shader::ImageView& view,
                                      uint32_t firstElement) {
  detail::shader::LayoutPush push{};
  push.image = view;
  push.width = int32_t(image.width());
  push.height = int32_t(image.height());
  push.imageCount = int32_t(image.numberOfImages());
  push.slices = int32_t(detail::touchedSlices(uint32_t(view.channelShift), channels));
  push.channels = int32_t(channels);
  push.dataLayout = layout == TensorLayout::NHWC ? VKCNN_LAYOUT_NHWC : VKCNN_LAYOUT_NCHW;
  push.firstElement = firstElement;
  return push;
}

}  // namespace

// ---- BufferToImage ----------------------------------------------------------------------------

BufferToImage::BufferToImage(const Context& context, TensorLayout layout)
    : dataLayout(layout),
      label(std::string("buffer to image ") + toString(layout)),
      context_(context) {}

size_t BufferToImage::tensorBytes(const Image& destination) const {
  return size_t(resolve("BufferToImage", label, dataLayout, destination, "destination",
                        destinationFeatureChannelOffset, "destinationFeatureChannelOffset",
                        featureChannels, bufferOffset)
                    .bytes);
}

void BufferToImage::encode(CommandBuffer& commandBuffer, const Buffer& source,
                           const Image& destination) {
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  const LayoutEncoding r =
      resolve("BufferToImage", label, dataLayout, destination, "destination",
              destinationFeatureChannelOffset, "destinationFeatureChannelOffset", featureChannels,
              bufferOffset);
  cb.requireEncoding(r.what);
  detail::checkUsable(cb, destination, true, r.what + " destination");
  checkBuffer(r, cb, source, bufferOffset, "source");
  detail::DispatchRecorder d(cb, detail::ShaderId::buffer_to_image, detail::variantFor(destination),
                             r.what);
  const VkDeviceSize start = source.vkOffset() + bufferOffset;
  const uint32_t firstElement =
      d.bindStorageBuffer(0, source.vkBuffer(), start, r.bytes, false, source.storage());
  const auto view = d.bindDestination(1, destination, 0, destination.numberOfImages(),
                                      r.channelOffset, r.channels);
  const auto push = layoutPush(destination, dataLayout, r.channels, view, firstElement);
  d.dispatch(push, uint32_t(push.width), uint32_t(push.height),
             uint32_t(push.imageCount * push.slices));
}

// ---- ImageToBuffer ----------------------------------------------------------------------------

ImageToBuffer::ImageToBuffer(const Context& context, TensorLayout layout)
    : dataLayout(layout),
      label(std::string("image to buffer ") + toString(layout)),
      context_(context) {}

size_t ImageToBuffer::tensorBytes(const Image& source) const {
  return size_t(resolve("ImageToBuffer", label, dataLayout, source, "source",
                        sourceFeatureChannelOffset, "sourceFeatureChannelOffset", featureChannels,
                        bufferOffset)
                    .bytes);
}

void ImageToBuffer::encode(CommandBuffer& commandBuffer, const Image& source, Buffer& destination) {
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  const LayoutEncoding r =
      resolve("ImageToBuffer", label, dataLayout, source, "source", sourceFeatureChannelOffset,
              "sourceFeatureChannelOffset", featureChannels, bufferOffset);
  cb.requireEncoding(r.what);
  detail::checkUsable(cb, source, false, r.what + " source");
  checkBuffer(r, cb, destination, bufferOffset, "destination");
  // The shader writes no image: any variant will do.
  detail::DispatchRecorder d(cb, detail::ShaderId::image_to_buffer, detail::ShaderVariant::f32,
                             r.what);
  const auto view =
      d.bindSource(0, source, 0, source.numberOfImages(), r.channelOffset, r.channels);
  const VkDeviceSize start = destination.vkOffset() + bufferOffset;
  const uint32_t firstElement =
      d.bindStorageBuffer(1, destination.vkBuffer(), start, r.bytes, true, destination.storage());
  const auto push = layoutPush(source, dataLayout, r.channels, view, firstElement);
  d.dispatch(push, uint32_t(push.width), uint32_t(push.height),
             uint32_t(push.imageCount * push.slices));
  if (destination.storageMode() == BufferStorageMode::shared) cb.publishToHost();
  detail::consumeRead(source);
}

}  // namespace vkcnn
