// FullyConnected against the CPU reference: over whole sources, the batched shader forced over
// swept shapes and batches, and encodeBatch over a batch held in several Images (on tensors, on
// the matrix units, forced).
#include <unistd.h>
#include <vkcnn/convolution.h>
#include <vkcnn/convolution_tuning.h>
#include <vkcnn/neuron.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <type_traits>

#include "convolution_tiles.h"
#include "kernels/weights.h"
#include "convolution_case.h"
#include "scoped_choice.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

TEST_CASE("convolution: fully connected over whole sources") {
  uint32_t seed = 800;
  for (auto [w, h, in, out] : {std::tuple{1u, 1u, 13u, 17u},
                               {3u, 3u, 4u, 5u},
                               {4u, 3u, 17u, 8u},
                               {2u, 5u, 32u, 3u},
                               {7u, 7u, 8u, 16u},
                               {1u, 1u, 64u, 10u},
                               {3u, 2u, 1u, 5u}}) {  // one input channel: the depthwise shader
    Case c;
    c.seed = seed++;
    c.fullyConnected = true;
    c.descriptor = ConvolutionDescriptor::make(w, h, in, out, NeuronDescriptor::relu());
    c.width = w;
    c.height = h;
    c.sourceImages = 3;
    c.offset.z = 1;
    c.clip.z = 0;
    c.clip.depth = 2;
    c.destinationImages = 3;
    c.destinationChannelOffset = out % 5;
    CAPTURE(w);
    CAPTURE(h);
    CAPTURE(in);
    CAPTURE(out);
    run(c);
  }
  // Grouped fully connected (in groups of 2).
  Case grouped;
  grouped.fullyConnected = true;
  grouped.descriptor = ConvolutionDescriptor::make(3, 2, 10, 6);
  grouped.descriptor.groups = 2;
  grouped.width = 3;
  grouped.height = 2;
  run(grouped);
}

TEST_CASE("fully connected: the batched shader, forced, over swept shapes and batches") {
  // VKCNN_FULLY_CONNECTED forces fully_connected_batched (convolution.cpp) with the host's row
  // count or 1, 2, 4 or 8 rows of invocations per slice; "legacy" the convolution path. Batches of
  // 1, 2, 5 and 33 images (two workgroups of 32 along the batch), windows inside larger sources
  // (unaligned starts read two layers), partial last slices, neurons, batch normalization. The two
  // last shapes have longer reductions (280 and 1176 weight blocks a slice), several steps of one
  // image's loop with 1 and 8 rows.
  struct Shape {
    uint32_t w, h, in, out;
  };
  const Shape shapes[] = {{1, 1, 13, 10}, {3, 2, 5, 17},  {2, 2, 17, 9},
                          {4, 3, 32, 64}, {5, 4, 56, 24}, {7, 7, 96, 8}};
  const char* modes[] = {"batched", "batched1", "batched2", "batched4", "batched8", "legacy"};
  uint32_t seed = 1900, index = 0;
  for (const char* mode : modes) {
    forceChoice(&detail::ChoiceOverrides::fullyConnected, mode);
    for (const Shape& s : shapes)
      for (uint32_t batch : {1u, 2u, 5u, 33u}) {
        ++index;
        // The full sweep with the host's rows; a rotating sample of it for the others.
        if (std::string(mode) != "batched" && index % 3 != 0) continue;
        Case c;
        c.seed = seed++;
        c.fullyConnected = true;
        const NeuronType neurons[] = {NeuronType::none, NeuronType::relu, NeuronType::sigmoid};
        c.descriptor = ConvolutionDescriptor::make(s.w, s.h, s.in, s.out,
                                                   NeuronDescriptor::of(neurons[index % 3]));
        if (index % 4 == 1) sampleBatchNormalization(c.descriptor, seed);
        c.withBias = index % 5 != 0;
        c.width = s.w;
        c.height = s.h;
        c.sourceImages = batch + (index % 2);
        c.offset.z = int32_t(index % 2);
        c.clip.depth = batch;
        c.destinationImages = batch + 1;
        c.clip.z = 1;
        // Windows: at a layer, one channel in (two layers per slice), or after 4 channels.
        c.extraSourceChannels = index % 3 == 0 ? 0 : 5;
        c.sourceChannelOffset = index % 3 == 1 ? 1 : index % 3 == 2 ? 4 : 0;
        c.destinationChannelOffset = index % 2 ? 4 : 0;
        c.extraDestinationChannels = index % 3;
        // float16 on the small shapes only (lavapipe is slow there).
        c.format =
            s.in * s.out <= 200 && index % 2 ? ChannelFormat::float16 : ChannelFormat::float32;
        const std::string forced = mode;
        CAPTURE(forced);
        CAPTURE(batch);
        INFO(describe(c));
        run(c);
      }
  }
  forceChoice(&detail::ChoiceOverrides::fullyConnected, "");
}

// FullyConnected::encodeBatch of case `c` (its window w x h) over pieces of `split` images, each
// destination poisoned and compared with the reference of its own piece; the dispatches encoded.
uint32_t fullyConnectedBatch(const Case& c, const std::vector<uint32_t>& split) {
  const ConvolutionDescriptor& d = c.descriptor;
  const uint32_t in = d.inputFeatureChannels, out = d.outputFeatureChannels;
  const std::vector<float> w = randomWeights(d, c.seed + 1);
  const std::vector<float> bias = c.withBias ? randomFloats(out, c.seed + 2) : std::vector<float>{};
  FullyConnected kernel(context(), d, w, bias);
  applyGeometry(kernel, c);
  const uint32_t dstC = c.destinationChannelOffset + out + c.extraDestinationChannels;
  std::vector<Tensor> xs;
  std::vector<Image> sources, destinations;
  for (size_t k = 0; k < split.size(); ++k) {
    xs.push_back(roundedTo(randomTensor(split[k], in + c.extraSourceChannels, c.height, c.width,
                                        c.seed + 5 + uint32_t(k), -1, 1),
                           c.format));
    sources.push_back(makeImage(xs.back(), c.format, "x" + std::to_string(k)));
    destinations.push_back(makePoisoned(
        context(), {1, 1, dstC, split[k], c.format, ImageUsage::all, "y" + std::to_string(k)}));
  }
  EncodingStatistics statistics;
  runOnce([&](CommandBuffer& cb) {
    kernel.encodeBatch(cb, sources, destinations);
    statistics = cb.encodingStatistics();
  });
  INFO(describe(c));
  for (size_t k = 0; k < split.size(); ++k) {
    Case piece = c;
    piece.sourceImages = split[k];
    CAPTURE(k);
    compare(download(destinations[k]), reference(piece, xs[k], w, bias, 1, 1, split[k], dstC),
            tolerance(c.format));
  }
  return statistics.dispatches;
}

// Whether a float16 batch of fully connected layers runs on the matrix units here
// (fully_connected_matrix.comp and fully_connected_reduce.comp: one dispatch more).
bool fullyConnectedOnMatrixUnits(const Case& c) {
  const DeviceCapabilities& caps = context().capabilities();
  return caps.matrixUnits && caps.subgroupSize == 32 && c.format == ChannelFormat::float16 &&
         c.descriptor.destinationFormat != ChannelFormat::float32;
}

TEST_CASE("fully connected: encodeBatch over a batch held in several Images") {
  // FullyConnected::encodeBatch gathers the pieces' windows into one Tensor, runs
  // fully_connected_tensor once over the whole batch (float16 on matrix units: the two dispatches
  // of fully_connected_matrix and fully_connected_reduce) and scatters the results into each
  // destination: 2P + 1 (2P + 2) dispatches for P pieces. A layer it does not take (grouped
  // weights, input channels not a multiple of 4) encodes each pair: P dispatches. Pieces of 9
  // images and more take two workgroups along the batch (FC_IMAGES 8).
  struct Shape {
    uint32_t w, h, in, out, groups;
  };
  const Shape shapes[] = {{1, 1, 12, 10, 1}, {3, 2, 8, 17, 1}, {2, 2, 16, 9, 1}, {4, 3, 32, 64, 1},
                          {7, 7, 8, 16, 1},  {2, 2, 13, 9, 1}, {3, 2, 10, 6, 2}};
  const std::vector<uint32_t> splits[] = {{2, 3}, {1, 1, 1, 4}, {9, 1}};
  uint32_t seed = 2300, index = 0;
  for (const Shape& s : shapes)
    for (const std::vector<uint32_t>& split : splits) {
      ++index;
      Case c;
      c.seed = seed;
      seed += 10;
      c.fullyConnected = true;
      const NeuronType neurons[] = {NeuronType::none, NeuronType::relu, NeuronType::sigmoid,
                                    NeuronType::prelu};
      c.descriptor = ConvolutionDescriptor::make(s.w, s.h, s.in, s.out,
                                                 sampleNeuron(neurons[index % 4], s.out));
      c.descriptor.groups = s.groups;
      if (index % 5 == 1) sampleBatchNormalization(c.descriptor, seed);
      c.withBias = index % 3 != 0;
      c.width = s.w;
      c.height = s.h;
      // Windows: at a layer, one channel in, or after 4 channels; destinations at any channel.
      c.extraSourceChannels = index % 3 == 0 ? 0 : 5;
      c.sourceChannelOffset = index % 3 == 1 ? 1 : index % 3 == 2 ? 4 : 0;
      c.destinationChannelOffset = index % 2 ? 3 : 0;
      c.extraDestinationChannels = index % 3;
      // float16 on the small shapes only (lavapipe is slow there); one float16 network whose
      // weights are float32 only (fully_connected_tensor in the float16 variant).
      c.format = s.in * s.out <= 200 && index % 2 ? ChannelFormat::float16 : ChannelFormat::float32;
      if (index == 3) {
        c.format = ChannelFormat::float16;
        c.descriptor.destinationFormat = ChannelFormat::float32;
      }
      CAPTURE(index);
      const uint32_t pieces = uint32_t(split.size());
      const bool onTensors = s.groups == 1 && s.in % 4 == 0;
      const uint32_t dispatches = fullyConnectedBatch(c, split);
      CHECK(dispatches ==
            (onTensors ? 2 * pieces + (fullyConnectedOnMatrixUnits(c) ? 2 : 1) : pieces));
    }
  // Sources and destinations must pair up.
  FullyConnected kernel(context(), ConvolutionDescriptor::make(1, 1, 4, 4), randomFloats(16, 2399),
                        {});
  Image x(context(), {1, 1, 4, 2, ChannelFormat::float32});
  Image y(context(), {1, 1, 4, 2, ChannelFormat::float32});
  CommandBuffer cb(context());
  VKCNN_CHECK_ERROR(kernel.encodeBatch(cb, {x, x}, {y}), ErrorCode::invalidArgument,
                    "as many destination Images as sources");
  VKCNN_CHECK_ERROR(kernel.encodeBatch(cb, {}, {}), ErrorCode::invalidArgument, "at least one");
}

TEST_CASE("fully connected: encodeBatch on the matrix units, and on tensors where forced") {
  // Float16 batches on matrix units: inputs split over workgroups in chunks (partial chunks here),
  // column tiles (partial ones), row tiles of 16 or 32 images (two of them for 37, one with 12
  // rows of padding for 20), the splits added in order. Each shape also runs with 8 workgroups a
  // multiprocessor (more splits) and on fully_connected_tensor (VKCNN_FULLY_CONNECTED); the tile
  // table has one tile. Lavapipe has no matrix units
  // (docs/testing.md names the GPU command).
  if (!context().capabilities().matrixUnits || context().capabilities().subgroupSize != 32) return;
  struct Shape {
    uint32_t w, h, in, out;
    std::vector<uint32_t> split;
    NeuronType neuron;
  };
  const Shape shapes[] = {{2, 2, 36, 130, {3, 2}, NeuronType::prelu},
                          {7, 7, 64, 100, {20, 17}, NeuronType::relu},
                          {1, 1, 512, 1000, {8, 8, 4}, NeuronType::none},
                          {3, 3, 8, 17, {1, 1, 1}, NeuronType::sigmoid}};
  uint32_t seed = 2700;
  for (const char* forced : {"", "matrix8/64x64", "tensor"})
    for (const Shape& s : shapes) {
      forceChoice(&detail::ChoiceOverrides::fullyConnected, forced);
      Case c;
      c.seed = seed;
      seed += 10;
      c.fullyConnected = true;
      c.descriptor =
          ConvolutionDescriptor::make(s.w, s.h, s.in, s.out, sampleNeuron(s.neuron, s.out));
      if (s.out == 100) sampleBatchNormalization(c.descriptor, seed);
      c.withBias = s.out != 1000;
      c.width = s.w;
      c.height = s.h;
      c.format = ChannelFormat::float16;
      c.destinationChannelOffset = s.out == 17 ? 3 : 0;
      CAPTURE(forced);
      const uint32_t pieces = uint32_t(s.split.size());
      CHECK(fullyConnectedBatch(c, s.split) ==
            2 * pieces + (std::string(forced) == "tensor" ? 1 : 2));
    }
  forceChoice(&detail::ChoiceOverrides::fullyConnected, "");
}
