// ImageToTensor and TensorToImage: the boundary between the sliced image layout and tensors.
#include <algorithm>

#include "kernels/tensor_encoding.h"
#include "memory/image_storage.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn {

TensorKernel::TensorKernel(const Context& context, std::string defaultLabel)
    : label(std::move(defaultLabel)), context_(context) {}
TensorKernel::~TensorKernel() = default;

namespace {

std::vector<uint32_t> imageTensorShape(const Image& image, uint32_t c, TensorLayout layout) {
  const uint32_t n = image.numberOfImages(), h = image.height(), w = image.width();
  if (layout == TensorLayout::NHWC) return {n, h, w, c};
  return {n, c, h, w};
}

// The tensor's strides in (n, c, y, x) order.
std::vector<int64_t> nchwStrides(const Tensor& t, TensorLayout layout) {
  const auto& s = t.strides();
  if (layout == TensorLayout::NHWC) return {s[0], s[3], s[1], s[2]};
  return {s[0], s[1], s[2], s[3]};
}

void checkLayout(TensorLayout layout, const std::string& what) {
  if (layout != TensorLayout::NCHW && layout != TensorLayout::NHWC)
    throw Error(ErrorCode::invalidArgument,
                what + ": data layout " + std::to_string(int(layout)) + " does not exist");
}

// The push constants both directions share: image geometry, the tensor's strides and offset.
detail::shader::TensorConversionPush conversionPush(const Image& image, uint32_t channels,
                                                    const Tensor& tensor, TensorLayout layout,
                                                    int32_t offset) {
  detail::shader::TensorConversionPush p{};
  p.width = int32_t(image.width());
  p.pixels = int32_t(image.width() * image.height());
  p.channels = int32_t(channels);
  const std::vector<int64_t> s = nchwStrides(tensor, layout);
  for (int j = 0; j < 4; ++j) p.strides[j] = int32_t(s[size_t(j)]);
  p.offset = offset;
  return p;
}

// Workgroups of 64 texels (glsl/image_to_tensor.comp, tensor_to_image.glsl): x along the
// flattened pixels of a layer, at most 4096 of them (262144 invocations a slice; the shader loops
// over the rest), y the slice, z the image.
void dispatchTexels(detail::DispatchRecorder& d, const detail::shader::TensorConversionPush& push,
                    const Image& image, uint32_t slices, const std::string& what) {
  constexpr uint64_t kMaxPixelGroups = 4096;
  const uint64_t pixels = uint64_t(image.width()) * image.height();
  if (image.numberOfImages() > 65535 || slices > 65535)
    throw Error(ErrorCode::limitExceeded, what + ": " + std::to_string(image.numberOfImages()) +
                                              " images of " + std::to_string(slices) +
                                              " layers exceed one dispatch");
  d.dispatchGroups(&push, sizeof push, uint32_t(std::min((pixels + 63) / 64, kMaxPixelGroups)),
                   slices, image.numberOfImages());
}

}  // namespace

// ---- ImageToTensor ----------------------------------------------------------------------------

ImageToTensor::ImageToTensor(const Context& context, TensorLayout layout)
    : TensorKernel(context, std::string("image to tensor ") + toString(layout)),
      dataLayout(layout) {}

std::vector<uint32_t> ImageToTensor::destinationShape(const Image& source) const {
  const std::string what = "ImageToTensor '" + label + "'";
  checkLayout(dataLayout, what);
  if (!source.valid())
    throw Error(ErrorCode::invalidArgument, what + ": the source Image is empty");
  return imageTensorShape(source, windowChannels(source, what), dataLayout);
}

uint32_t ImageToTensor::windowChannels(const Image& source, const std::string& what) const {
  const uint32_t total = source.featureChannels();
  if (sourceFeatureChannelOffset >= total)
    throw Error(ErrorCode::invalidArgument, what + ": sourceFeatureChannelOffset " +
                                                std::to_string(sourceFeatureChannelOffset) +
                                                " is not below source '" + source.label() +
                                                "' featureChannels " + std::to_string(total));
  const uint32_t c = featureChannels ? featureChannels : total - sourceFeatureChannelOffset;
  if (uint64_t(sourceFeatureChannelOffset) + c > total)
    throw Error(ErrorCode::invalidArgument,
                what + ": channels [" + std::to_string(sourceFeatureChannelOffset) + ", " +
                    std::to_string(uint64_t(sourceFeatureChannelOffset) + c) + ") exceed source '" +
                    source.label() + "' with " + std::to_string(total) + " feature channels");
  return c;
}

void ImageToTensor::encode(CommandBuffer& commandBuffer, const Image& source,
                           const Tensor& destination) {
  const std::string what = "ImageToTensor '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  const std::vector<uint32_t> shape = destinationShape(source);
  detail::checkUsable(cb, source, false, what + " source");
  detail::checkUsable(cb, destination, true, what + " destination");
  detail::requireShape(destination, shape, "destination", what);
  const uint32_t channels = windowChannels(source, what);
  detail::DispatchRecorder d(cb, detail::ShaderId::image_to_tensor,
                             detail::variantFor(destination.dataType()), what);
  const auto view =
      d.bindSource(1, source, 0, source.numberOfImages(), sourceFeatureChannelOffset, channels);
  const int32_t offset = detail::bindTensor(d, cb, 2, destination, true);
  auto p = conversionPush(source, channels, destination, dataLayout, offset);
  p.channelShift = view.channelShift;
  p.layersPerImage = view.layersPerImage;
  dispatchTexels(d, p, source, detail::touchedSlices(uint32_t(view.channelShift), channels), what);
  detail::markWritten(destination);
  detail::consumeRead(source);
}

TemporaryTensor ImageToTensor::encode(CommandBuffer& commandBuffer, const Image& source) {
  TemporaryTensor t(commandBuffer, {destinationShape(source), dataType, label + " output"});
  encode(commandBuffer, source, t);
  return t;
}

// ---- TensorToImage ----------------------------------------------------------------------------

TensorToImage::TensorToImage(const Context& context, TensorLayout layout)
    : TensorKernel(context, std::string("tensor to image ") + toString(layout)),
      dataLayout(layout) {}

ImageDescriptor TensorToImage::destinationImageDescriptor(const Tensor& source) const {
  const std::string what = "TensorToImage '" + label + "'";
  checkLayout(dataLayout, what);
  if (!source.valid())
    throw Error(ErrorCode::invalidArgument, what + ": the source Tensor is empty");
  if (source.rank() != 4)
    throw Error(ErrorCode::invalidArgument,
                what + ": source '" + source.label() + "' " + detail::shapeText(source.shape()) +
                    " is not of rank 4 (" + toString(dataLayout) + "); reshape it first");
  const auto& s = source.shape();
  ImageDescriptor d;
  d.numberOfImages = s[0];
  if (dataLayout == TensorLayout::NHWC) {
    d.height = s[1], d.width = s[2], d.featureChannels = s[3];
  } else {
    d.featureChannels = s[1], d.height = s[2], d.width = s[3];
  }
  if (uint64_t(d.featureChannels) + destinationFeatureChannelOffset > UINT32_MAX)
    throw Error(ErrorCode::invalidArgument, what + ": destinationFeatureChannelOffset " +
                                                std::to_string(destinationFeatureChannelOffset) +
                                                " is too large");
  d.featureChannels += destinationFeatureChannelOffset;
  d.channelFormat = channelFormat;
  d.label = label + " output";
  return d;
}

void TensorToImage::encode(CommandBuffer& commandBuffer, const Tensor& source,
                           const Image& destination) {
  const std::string what = "TensorToImage '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  detail::checkUsable(cb, source, false, what + " source");
  const ImageDescriptor expected = destinationImageDescriptor(source);
  detail::checkUsable(cb, destination, true, what + " destination");
  if (destination.width() != expected.width || destination.height() != expected.height ||
      destination.featureChannels() < expected.featureChannels ||
      destination.numberOfImages() != expected.numberOfImages)
    throw Error(ErrorCode::invalidArgument,
                what + ": destination '" + destination.label() + "' is " +
                    std::to_string(destination.width()) + "x" +
                    std::to_string(destination.height()) + "x" +
                    std::to_string(destination.featureChannels()) + ", " +
                    std::to_string(destination.numberOfImages()) + " images; source " +
                    detail::shapeText(source.shape()) + " (" + toString(dataLayout) +
                    ") at destinationFeatureChannelOffset " +
                    std::to_string(destinationFeatureChannelOffset) + " needs " +
                    std::to_string(expected.width) + "x" + std::to_string(expected.height) + "x" +
                    std::to_string(expected.featureChannels) + " (or more channels), " +
                    std::to_string(expected.numberOfImages) + " images");
  const detail::ShaderId shader = source.dataType() == TensorDataType::float16
                                      ? detail::ShaderId::tensor16_to_image
                                      : detail::ShaderId::tensor_to_image;
  detail::DispatchRecorder d(cb, shader, detail::variantFor(destination), what);
  const uint32_t channels = expected.featureChannels - destinationFeatureChannelOffset;
  const int32_t offset = detail::bindTensor(d, cb, 1, source, false);
  const auto view = d.bindDestination(2, destination, 0, destination.numberOfImages(),
                                      destinationFeatureChannelOffset, channels);
  auto p = conversionPush(destination, channels, source, dataLayout, offset);
  p.channelShift = view.channelShift;
  p.layersPerImage = view.layersPerImage;
  p.paddingFrom = view.paddingFrom;
  dispatchTexels(d, p, destination, detail::touchedSlices(uint32_t(view.channelShift), channels),
                 what);
  detail::consumeRead(source);
}

TemporaryImage TensorToImage::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryImage image(commandBuffer, destinationImageDescriptor(source));
  encode(commandBuffer, source, image);
  return image;
}

// ---- TensorCast -------------------------------------------------------------------------------

TensorCast::TensorCast(const Context& context, TensorDataType type)
    : TensorKernel(context, std::string("tensor cast to ") + toString(type)), dataType(type) {}

void TensorCast::encode(CommandBuffer& commandBuffer, const Tensor& source,
                        const Tensor& destination) {
  const std::string what = "TensorCast '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  detail::checkUsable(cb, source, false, what + " source");
  detail::checkUsable(cb, destination, true, what + " destination");
  detail::requireShape(destination, source.shape(), "destination", what);
  detail::requireNotInPlace(source, destination, what);
  detail::IndexSpace space{source.shape(), {source.strides(), destination.strides()}};
  space.simplify();
  const detail::ShaderId shader = source.dataType() == TensorDataType::float16
                                      ? detail::ShaderId::tensor16_cast
                                      : detail::ShaderId::tensor_cast;
  detail::DispatchRecorder d(cb, shader, detail::variantFor(destination.dataType()), what);
  detail::shader::TensorParams p = detail::bindOperands(d, cb, {source}, destination);
  detail::setOuter(p, space);
  d.bindParameters(0, &p, sizeof p);
  detail::dispatchFlat(d, (space.count() + 255) / 256);
  detail::markWritten(destination);
  detail::consumeRead(source);
}

TemporaryTensor TensorCast::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  if (!source.valid())
    throw Error(ErrorCode::invalidArgument, "TensorCast '" + label + "': the source is empty");
  TemporaryTensor t(commandBuffer, {source.shape(), dataType, label + " output"});
  encode(commandBuffer, source, t);
  return t;
}

}  // namespace vkcnn
