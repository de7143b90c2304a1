// Concatenation along feature channels. MPS has no concat kernel: each producer writes into a
// larger destination at destinationFeatureChannelOffset. Concat does that for sources that already
// exist, with one copy (a Neuron of type none) per source: source k's channels go to destination
// channels [destinationFeatureChannelOffset + channels of sources 0..k-1, +its channels).
//
// Any offset works. A source landing on a multiple of 4 is written in place; one sharing a layer
// with its neighbour read-modify-writes that layer, and the command buffer places a barrier
// between the two writes (it sees their layer ranges overlap). Producers that can write at the
// offset directly (convolutions, arithmetic) save the copy; Concat is for the rest.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/export.h"
#include "vkcnn/image.h"

namespace vkcnn {

// Copies sources side by side along the destination's feature channels.
class VKCNN_API Concat {
 public:
  // A kernel on `context` (it holds no weights).
  explicit Concat(const Context& context);

  // Where the first source's channels go.
  uint32_t destinationFeatureChannelOffset = 0;
  std::string label = "concat";  // names its dispatches in profiles and validation messages

  // Every source must have the destination's width, height and numberOfImages; the destination
  // needs destinationFeatureChannelOffset + featureChannels(sources) channels. All checked before
  // anything is encoded. Each temporary source has its readCount lowered by one.
  void encode(CommandBuffer& commandBuffer, std::span<const Image> sources,
              const Image& destination);
  // Encodes into a new TemporaryImage shaped by destinationImageDescriptor(sources).
  TemporaryImage encode(CommandBuffer& commandBuffer, std::span<const Image> sources);

  // The sum of the sources' feature channels.
  static uint32_t featureChannels(std::span<const Image> sources);
  // The first source's size, batch and format (float16 for unorm8: a temporary cannot be unorm8),
  // destinationFeatureChannelOffset + featureChannels(sources) channels.
  ImageDescriptor destinationImageDescriptor(std::span<const Image> sources) const;
  // A (non-temporary) Image shaped by destinationImageDescriptor(sources), e.g. a network output.
  Image makeDestination(std::span<const Image> sources) const;

  // The Context it encodes for.
  const Context& context() const { return context_; }

 private:
  void check(std::span<const Image> sources, const Image& destination) const;
  Context context_;
};

}  // namespace vkcnn
