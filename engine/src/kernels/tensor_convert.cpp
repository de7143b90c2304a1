// ImageToTensor and TensorToImage: the boundary between the sliced image layout and tensors.
#include "kernels/tensor_encoding.h"
#include "memory/image_storage.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn {

TensorKernel::TensorKernel(const Context& context, std::string defaultLabel)
    : label(std::move(defaultLabel)), context_(context) {}
TensorKernel::~TensorKernel() = default;

namespace {

std::vector<uint32_t> imageTensorShape(const Image& image, TensorLayout layout) {
  const uint32_t n = image.numberOfImages(), c = image.featureChannels(), h = image.height(),
                 w = image.width();
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

// The parameters both directions share: image geometry, the tensor's strides and offset.
detail::shader::TensorParams conversionParams(const Image& image, const Tensor& tensor,
                                              TensorLayout layout, int32_t offset) {
  detail::shader::TensorParams p{};
  p.i0 = int32_t(image.width());
  p.i1 = int32_t(image.height());
  p.i2 = int32_t(image.numberOfImages());
  p.innerCount = int32_t(image.featureChannels());
  const std::vector<int64_t> s = nchwStrides(tensor, layout);
  for (int j = 0; j < 4; ++j) p.args[0].strides[0][j] = int32_t(s[size_t(j)]);
  p.args[0].offset = offset;
  return p;
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
  return imageTensorShape(source, dataLayout);
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
  detail::DispatchRecorder d(cb, detail::ShaderId::image_to_tensor,
                             detail::variantFor(destination.dataType()), what);
  const auto view =
      d.bindSource(1, source, 0, source.numberOfImages(), 0, source.featureChannels());
  const int32_t offset = detail::bindTensor(d, cb, 2, destination, true);
  auto p = conversionParams(source, destination, dataLayout, offset);
  p.i3 = int32_t(detail::touchedSlices(uint32_t(view.channelShift), source.featureChannels()));
  p.op = view.channelShift;
  p.flags = view.layersPerImage;
  d.bindParameters(0, &p, sizeof p);
  d.dispatchGroups(nullptr, 0, (source.width() + 7) / 8, (source.height() + 7) / 8,
                   uint32_t(p.i2 * p.i3));
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
      destination.featureChannels() != expected.featureChannels ||
      destination.numberOfImages() != expected.numberOfImages)
    throw Error(ErrorCode::invalidArgument,
                what + ": destination '" + destination.label() + "' is " +
                    std::to_string(destination.width()) + "x" +
                    std::to_string(destination.height()) + "x" +
                    std::to_string(destination.featureChannels()) + ", " +
                    std::to_string(destination.numberOfImages()) + " images; source " +
                    detail::shapeText(source.shape()) + " (" + toString(dataLayout) + ") needs " +
                    std::to_string(expected.width) + "x" + std::to_string(expected.height) + "x" +
                    std::to_string(expected.featureChannels) + ", " +
                    std::to_string(expected.numberOfImages) + " images");
  const detail::ShaderId shader = source.dataType() == TensorDataType::float16
                                      ? detail::ShaderId::tensor16_to_image
                                      : detail::ShaderId::tensor_to_image;
  detail::DispatchRecorder d(cb, shader, detail::variantFor(destination), what);
  const int32_t offset = detail::bindTensor(d, cb, 1, source, false);
  const auto view = d.bindDestination(2, destination, 0, destination.numberOfImages(), 0,
                                      destination.featureChannels());
  auto p = conversionParams(destination, source, dataLayout, offset);
  p.i3 = int32_t(detail::touchedSlices(uint32_t(view.channelShift), destination.featureChannels()));
  p.i4 = view.channelShift;
  p.i5 = view.layersPerImage;
  p.flags = view.paddingFrom;
  d.bindParameters(0, &p, sizeof p);
  d.dispatchGroups(nullptr, 0, (destination.width() + 7) / 8, (destination.height() + 7) / 8,
                   uint32_t(p.i2 * p.i3));
  detail::consumeRead(source);
}

TemporaryImage TensorToImage::encode(CommandBuffer& commandBuffer, const Tensor& source) {
  TemporaryImage image(commandBuffer, destinationImageDescriptor(source));
  encode(commandBuffer, source, image);
  return image;
}

}  // namespace vkcnn
