// A small network for the hardening tests (faults, threads, soak, lost device): a few Neuron
// kernels, weights (PReLU slopes), temporaries with readCount 2, an unaligned concatenation and
// host transfers, with its double-precision reference. Free of doctest macros, so worker threads
// may use it; callers check the results.
#pragma once

#include <vkcnn/vkcnn.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace vkcnn::test {

// Host data of one run: [numberOfImages][channels][height][width] float32.
struct SmallTensor {
  uint32_t n = 1, c = 1, h = 1, w = 1;
  std::vector<float> data;
  float at(uint32_t i, uint32_t ch, uint32_t y, uint32_t x) const {
    return data[((size_t(i) * c + ch) * h + y) * w + x];
  }
};

inline SmallTensor smallRandomInput(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t seed) {
  SmallTensor t{n, c, h, w, std::vector<float>(size_t(n) * c * h * w)};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (float& v : t.data) v = dist(rng);
  return t;
}

// The network, for `channels` input channels; output has 2*channels channels:
//   a = prelu(x) (readCount 2), b = tanh(a);
//   out[0, C) = clamp(b, -0.5, 0.5); out[C, 2C) = sigmoid(a) (concatenated at channel C).
class SmallNetwork {
 public:
  SmallNetwork(const Context& context, uint32_t channels)
      : channels_(channels),
        prelu_(context, preluDescriptor(channels)),
        tanh_(context, NeuronDescriptor::of(NeuronType::tanh, 1.0f, 0.8f)),
        sigmoid_(context, NeuronDescriptor::of(NeuronType::sigmoid)),
        clamp_(context, NeuronDescriptor::of(NeuronType::clamp, -0.5f, 0.5f)) {
    sigmoid_.destinationFeatureChannelOffset = channels;
  }

  uint32_t channels() const { return channels_; }
  uint32_t outputChannels() const { return 2 * channels_; }

  void encode(CommandBuffer& commandBuffer, const Image& input, const Image& output) {
    TemporaryImage a = prelu_.encode(commandBuffer, input);
    a.setReadCount(2);
    TemporaryImage b = tanh_.encode(commandBuffer, a);
    sigmoid_.encode(commandBuffer, a, output);
    clamp_.encode(commandBuffer, b, output);
  }

  static NeuronDescriptor preluDescriptor(uint32_t channels) {
    NeuronDescriptor d{NeuronType::prelu};
    for (uint32_t c = 0; c < channels; ++c) d.preluSlopes.push_back(0.05f + 0.02f * float(c));
    return d;
  }

  // Double-precision reference (no intermediate rounding).
  static std::vector<double> reference(const SmallTensor& x) {
    const NeuronDescriptor prelu = preluDescriptor(x.c);
    const NeuronDescriptor tanh = NeuronDescriptor::of(NeuronType::tanh, 1.0f, 0.8f);
    const NeuronDescriptor sigmoid = NeuronDescriptor::of(NeuronType::sigmoid);
    const NeuronDescriptor clamp = NeuronDescriptor::of(NeuronType::clamp, -0.5f, 0.5f);
    std::vector<double> out(size_t(x.n) * 2 * x.c * x.h * x.w);
    for (uint32_t i = 0; i < x.n; ++i)
      for (uint32_t c = 0; c < x.c; ++c)
        for (uint32_t y = 0; y < x.h; ++y)
          for (uint32_t xx = 0; xx < x.w; ++xx) {
            const double a = applyNeuron(prelu, x.at(i, c, y, xx), c);
            const size_t plane = size_t(x.h) * x.w, pixel = size_t(y) * x.w + xx;
            const size_t image = size_t(i) * 2 * x.c * plane;
            out[image + c * plane + pixel] = applyNeuron(clamp, applyNeuron(tanh, a, c), c);
            out[image + (x.c + c) * plane + pixel] = applyNeuron(sigmoid, a, c);
          }
    return out;
  }

 private:
  uint32_t channels_;
  Neuron prelu_, tanh_, sigmoid_, clamp_;
};

// ||actual - expected|| / ||expected||; infinite if sizes differ or anything is NaN.
inline double smallRelativeL2(const std::vector<float>& actual,
                              const std::vector<double>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isnan(actual[i])) return INFINITY;
    diff += (actual[i] - expected[i]) * (actual[i] - expected[i]);
    norm += expected[i] * expected[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

inline void writeSmallTensor(Image& image, const SmallTensor& t) {
  const size_t plane = size_t(t.c) * t.h * t.w;
  for (uint32_t i = 0; i < t.n; ++i)
    image.writeFloats(std::span<const float>(t.data.data() + i * plane, plane),
                      DataLayout::FeatureChannelsxHeightxWidth, i);
}

inline std::vector<float> readAllImages(const Image& image) {
  std::vector<float> all;
  for (uint32_t i = 0; i < image.numberOfImages(); ++i) {
    std::vector<float> one = image.readFloats(DataLayout::FeatureChannelsxHeightxWidth, i);
    all.insert(all.end(), one.begin(), one.end());
  }
  return all;
}

// One inference from scratch: input and output images, one command buffer, upload, encode,
// commit, wait, download. `network` may be shared by calls on one thread.
inline std::vector<float> runSmallNetwork(const Context& context, SmallNetwork& network,
                                          const SmallTensor& x, ChannelFormat format,
                                          const std::string& label = "small") {
  Image input(context, {x.w, x.h, x.c, x.n, format, ImageUsage::all, label + " input"});
  writeSmallTensor(input, x);
  Image output(context, {x.w, x.h, network.outputChannels(), x.n, format, ImageUsage::all,
                         label + " output"});
  CommandBuffer commandBuffer(context, label + " commands");
  network.encode(commandBuffer, input, output);
  commandBuffer.commit();
  commandBuffer.waitUntilCompleted();
  return readAllImages(output);
}

}  // namespace vkcnn::test
