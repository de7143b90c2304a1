#include "vkcnn/concat.h"

#include "kernels/kernel_encoding.h"
#include "vkcnn/error.h"
#include "vkcnn/neuron.h"

namespace vkcnn {

Concat::Concat(const Context& context) : context_(context) {}

uint32_t Concat::featureChannels(std::span<const Image> sources) {
  uint32_t channels = 0;
  for (const Image& s : sources) channels += s.valid() ? s.featureChannels() : 0;
  return channels;
}

namespace {

std::string shape(const Image& image) {
  return "'" + image.label() + "' (" + std::to_string(image.width()) + "x" +
         std::to_string(image.height()) + "x" + std::to_string(image.featureChannels()) + ", " +
         std::to_string(image.numberOfImages()) + " images)";
}

}  // namespace

ImageDescriptor Concat::destinationImageDescriptor(std::span<const Image> sources) const {
  const std::string what = "Concat '" + label + "'";
  if (sources.empty()) throw Error(ErrorCode::invalidArgument, what + ": no sources");
  for (const Image& s : sources)
    if (!s.valid()) throw Error(ErrorCode::invalidArgument, what + ": a source is empty");
  const Image& first = sources.front();
  ImageDescriptor d;
  d.width = first.width();
  d.height = first.height();
  d.featureChannels = destinationFeatureChannelOffset + featureChannels(sources);
  d.numberOfImages = first.numberOfImages();
  d.channelFormat = first.channelFormat() == ChannelFormat::unorm8 ? ChannelFormat::float16
                                                                   : first.channelFormat();
  d.label = label + " output";
  return d;
}

Image Concat::makeDestination(std::span<const Image> sources) const {
  return Image(context_, destinationImageDescriptor(sources));
}

void Concat::check(std::span<const Image> sources, const Image& destination) const {
  const std::string what = "Concat '" + label + "'";
  if (sources.empty()) throw Error(ErrorCode::invalidArgument, what + ": no sources");
  if (!destination.valid())
    throw Error(ErrorCode::invalidArgument, what + ": the destination is empty");
  for (size_t k = 0; k < sources.size(); ++k) {
    const Image& s = sources[k];
    if (!s.valid())
      throw Error(ErrorCode::invalidArgument, what + ": source " + std::to_string(k) + " is empty");
    if (s.width() != destination.width() || s.height() != destination.height() ||
        s.numberOfImages() != destination.numberOfImages())
      throw Error(ErrorCode::invalidArgument,
                  what + ": source " + std::to_string(k) + " " + shape(s) +
                      " differs in size or batch from destination " + shape(destination));
    if (s.storage() == destination.storage())
      throw Error(ErrorCode::invalidArgument,
                  what + ": source " + std::to_string(k) + " " + shape(s) +
                      " shares storage with the destination; in-place concatenation is not "
                      "supported");
  }
  const uint64_t end = uint64_t(destinationFeatureChannelOffset) + featureChannels(sources);
  if (end > destination.featureChannels())
    throw Error(ErrorCode::invalidArgument,
                what + ": writes channels [" + std::to_string(destinationFeatureChannelOffset) +
                    ", " + std::to_string(end) + ") (destinationFeatureChannelOffset " +
                    std::to_string(destinationFeatureChannelOffset) + ") but destination " +
                    shape(destination) + " has " + std::to_string(destination.featureChannels()) +
                    " feature channels");
}

void Concat::encode(CommandBuffer& commandBuffer, std::span<const Image> sources,
                    const Image& destination) {
  const std::string what = "Concat '" + label + "'";
  detail::CommandBufferImpl& cb = *commandBuffer.impl();
  cb.requireEncoding(what);
  check(sources, destination);
  // Temporaries are checked up front too, so that a bad one fails before the first copy.
  for (const Image& s : sources) detail::checkUsable(cb, s, false, what + " source");
  detail::checkUsable(cb, destination, true, what + " destination");
  Neuron copy(context_, NeuronDescriptor::of(NeuronType::none));
  uint32_t offset = destinationFeatureChannelOffset;
  for (size_t k = 0; k < sources.size(); ++k) {
    copy.label = label + " source " + std::to_string(k);
    copy.destinationFeatureChannelOffset = offset;
    copy.encode(commandBuffer, sources[k], destination);
    offset += sources[k].featureChannels();
  }
}

TemporaryImage Concat::encode(CommandBuffer& commandBuffer, std::span<const Image> sources) {
  TemporaryImage destination(commandBuffer, destinationImageDescriptor(sources));
  encode(commandBuffer, sources, destination);
  return destination;
}

}  // namespace vkcnn
