// libFuzzer target: descriptors and kernel geometry from fuzz bytes. A Convolution, FullyConnected,
// PoolingMax/Average or GlobalPooling is built from a fuzzed descriptor, given a fuzzed offset,
// clipRect, channel offsets and padding, and encoded from a small source image (at most 32 x 32
// pixels, 64 feature channels, 2 images) into a fuzzed destination or a temporary; a Convolution
// may add a residual (an image of its own or a channel window of the destination). Only
// vkcnn::Error may come out, and the validation layer (on for this target) must stay silent; when
// the work is small the command buffer is also committed and waited for.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "fuzz_common.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/convolution.h"
#include "vkcnn/error.h"
#include "vkcnn/image.h"
#include "vkcnn/pooling.h"

namespace {

// Small values most of the time, now and then anything (to reach overflow checks).
uint32_t smallOrAny(FuzzedDataProvider& p, uint32_t lo, uint32_t hi) {
  if (p.ConsumeIntegralInRange<uint8_t>(0, 15) == 0) return p.ConsumeIntegral<uint32_t>();
  return p.ConsumeIntegralInRange<uint32_t>(lo, hi);
}
int32_t smallOrAnySigned(FuzzedDataProvider& p, int32_t lo, int32_t hi) {
  if (p.ConsumeIntegralInRange<uint8_t>(0, 15) == 0) return p.ConsumeIntegral<int32_t>();
  return p.ConsumeIntegralInRange<int32_t>(lo, hi);
}

vkcnn::ImageDescriptor imageDescriptor(FuzzedDataProvider& p) {
  vkcnn::ImageDescriptor d;
  d.width = p.ConsumeIntegralInRange<uint32_t>(0, 32);
  d.height = p.ConsumeIntegralInRange<uint32_t>(0, 32);
  d.featureChannels = p.ConsumeIntegralInRange<uint32_t>(0, 64);
  d.numberOfImages = p.ConsumeIntegralInRange<uint32_t>(0, 2);
  d.channelFormat = p.PickValueInArray(
      {vkcnn::ChannelFormat::float16, vkcnn::ChannelFormat::float32, vkcnn::ChannelFormat::unorm8});
  return d;
}

vkcnn::Padding padding(FuzzedDataProvider& p) {
  vkcnn::Padding pad;
  pad.mode =
      p.ConsumeBool() ? vkcnn::Padding::Mode::explicitPadding : vkcnn::Padding::Mode::mpsDefault;
  pad.top = smallOrAny(p, 0, 8);
  pad.left = smallOrAny(p, 0, 8);
  pad.bottom = smallOrAny(p, 0, 8);
  pad.right = smallOrAny(p, 0, 8);
  pad.ceilMode = p.ConsumeBool();
  return pad;
}

void geometry(FuzzedDataProvider& p, vkcnn::Kernel& k) {
  if (!p.ConsumeBool()) return;
  k.offset = {smallOrAnySigned(p, -8, 8), smallOrAnySigned(p, -8, 8), smallOrAnySigned(p, -2, 2)};
  if (p.ConsumeBool()) {
    k.clipRect.x = smallOrAny(p, 0, 32);
    k.clipRect.y = smallOrAny(p, 0, 32);
    k.clipRect.z = smallOrAny(p, 0, 2);
    k.clipRect.width = p.ConsumeBool() ? vkcnn::kWholeExtent : smallOrAny(p, 0, 32);
    k.clipRect.height = p.ConsumeBool() ? vkcnn::kWholeExtent : smallOrAny(p, 0, 32);
    k.clipRect.depth = p.ConsumeBool() ? vkcnn::kWholeExtent : smallOrAny(p, 0, 2);
  }
  k.sourceFeatureChannelOffset = smallOrAny(p, 0, 64);
  k.sourceFeatureChannelMaxCount = p.ConsumeBool() ? vkcnn::kWholeExtent : smallOrAny(p, 0, 64);
  k.destinationFeatureChannelOffset = smallOrAny(p, 0, 64);
}

std::vector<float> floats(uint64_t n) {
  return std::vector<float>(size_t(n), 0.25f);
}

void run(FuzzedDataProvider& p, vkcnn::Context& context, uint64_t& work) {
  const int kind = p.ConsumeIntegralInRange<int>(0, 4);
  std::unique_ptr<vkcnn::UnaryKernel> kernel;
  vkcnn::Convolution* convolution = nullptr;
  uint64_t perPixel = 1;
  if (kind <= 1) {
    vkcnn::ConvolutionDescriptor d;
    d.kernelWidth = smallOrAny(p, 0, 5);
    d.kernelHeight = smallOrAny(p, 0, 5);
    d.inputFeatureChannels = smallOrAny(p, 0, 64);
    d.outputFeatureChannels = smallOrAny(p, 0, 64);
    d.strideInPixelsX = smallOrAny(p, 0, 4);
    d.strideInPixelsY = smallOrAny(p, 0, 4);
    d.dilationRateX = smallOrAny(p, 0, 3);
    d.dilationRateY = smallOrAny(p, 0, 3);
    d.groups = smallOrAny(p, 0, 8);
    d.neuron.type = vkcnn::NeuronType(p.ConsumeIntegralInRange<uint32_t>(0, 19));
    d.neuron.a = p.ConsumeFloatingPoint<float>();
    d.neuron.b = p.ConsumeFloatingPoint<float>();
    d.neuron.c = p.ConsumeFloatingPoint<float>();
    if (p.ConsumeBool()) d.neuron.preluSlopes = floats(p.ConsumeIntegralInRange<uint32_t>(0, 65));
    if (p.ConsumeBool()) {
      vkcnn::BatchNormalizationParameters bn;
      const uint32_t n =
          p.ConsumeBool() ? d.outputFeatureChannels : p.ConsumeIntegralInRange<uint32_t>(0, 65);
      if (n <= 4096) bn.mean = bn.variance = bn.gamma = bn.beta = floats(n);
      bn.epsilon = p.ConsumeFloatingPoint<float>();
      d.batchNormalization = bn;
    }
    // The right number of weights most of the time; a wrong count must be an Error. Counts that
    // would be a large allocation are not tried.
    uint64_t count = d.weightCount();
    if (p.ConsumeIntegralInRange<uint8_t>(0, 7) == 0)
      count = p.ConsumeIntegralInRange<uint64_t>(0, 64);
    if (count > (1u << 20)) return;
    const std::vector<float> w = floats(count);
    uint64_t biasCount =
        p.ConsumeBool() ? d.outputFeatureChannels : p.ConsumeIntegralInRange<uint32_t>(0, 65);
    if (biasCount > 4096) biasCount = 0;
    const std::vector<float> b = floats(biasCount);
    if (kind == 0) {
      auto c = std::make_unique<vkcnn::Convolution>(context, d, w, b);
      c->padding = padding(p);
      convolution = c.get();
      kernel = std::move(c);
    } else {
      kernel = std::make_unique<vkcnn::FullyConnected>(context, d, w, b);
    }
    perPixel = uint64_t(d.kernelWidth) * d.kernelHeight * d.inputFeatureChannels;
  } else if (kind <= 3) {
    vkcnn::PoolingDescriptor d;
    d.kernelWidth = smallOrAny(p, 0, 5);
    d.kernelHeight = smallOrAny(p, 0, 5);
    d.strideInPixelsX = smallOrAny(p, 0, 4);
    d.strideInPixelsY = smallOrAny(p, 0, 4);
    d.dilationRateX = smallOrAny(p, 0, 3);
    d.dilationRateY = smallOrAny(p, 0, 3);
    d.padding = padding(p);
    d.countIncludePad = p.ConsumeBool();
    if (kind == 2)
      kernel = std::make_unique<vkcnn::PoolingMax>(context, d);
    else
      kernel = std::make_unique<vkcnn::PoolingAverage>(context, d);
    perPixel = uint64_t(d.kernelWidth) * d.kernelHeight;
  } else {
    if (p.ConsumeBool())
      kernel = std::make_unique<vkcnn::GlobalPoolingMax>(context);
    else
      kernel = std::make_unique<vkcnn::GlobalPoolingAverage>(context);
    perPixel = 32 * 32;
  }
  geometry(p, *kernel);

  vkcnn::CommandBuffer commandBuffer(context, "fuzz");
  vkcnn::Image source(context, imageDescriptor(p));
  if (p.ConsumeBool()) {
    vkcnn::Image destination(context, imageDescriptor(p));
    if (convolution && p.ConsumeBool()) {
      const vkcnn::Image residual =
          p.ConsumeBool() ? vkcnn::Image(context, imageDescriptor(p))
                          : destination.subImage({smallOrAny(p, 0, 64), smallOrAny(p, 0, 64)});
      convolution->encodeWithResidual(commandBuffer, source, residual, destination);
    } else {
      kernel->encode(commandBuffer, source, destination);
    }
    work = uint64_t(destination.width()) * destination.height() * destination.featureChannels() *
           destination.numberOfImages() * perPixel;
  } else {
    // A temporary the device can hold but that would be large (a tiny source with huge padding
    // asks for hundreds of MB) is not made: its memory would be allocated (-malloc_limit_mb) for
    // nothing new. Shapes past the device's limits still go through: they must be errors.
    const vkcnn::ImageDescriptor natural = kernel->destinationImageDescriptor(source);
    const auto& caps = context.capabilities();
    const uint64_t layers = uint64_t(natural.numberOfImages) * ((natural.featureChannels + 3) / 4);
    const uint64_t bytes = uint64_t(natural.width) * natural.height * layers * 4 *
                           vkcnn::bytesPerChannel(natural.channelFormat);
    if (bytes > (uint64_t(64) << 20) && natural.width <= caps.maxImageDimension2D &&
        natural.height <= caps.maxImageDimension2D && layers <= caps.maxImageArrayLayers)
      return;
    vkcnn::TemporaryImage t = kernel->encode(commandBuffer, source);
    work = uint64_t(t.width()) * t.height() * t.featureChannels() * t.numberOfImages() * perPixel;
    t.setReadCount(0);
  }
  // Lavapipe runs the shaders on this CPU: only small work is submitted.
  if (work <= (1u << 22)) {
    commandBuffer.commit();
    commandBuffer.waitUntilCompleted();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool validation = !std::getenv("VKCNN_FUZZ_NO_VALIDATION");
  vkcnn::Context& context = vkcnn::fuzz::context(validation);
  const uint64_t before = context.validationMessageCount();
  FuzzedDataProvider p(data, size);
  uint64_t work = 0;
  try {
    run(p, context, work);
  } catch (const vkcnn::Error&) {
  }
  if (context.validationMessageCount() != before) {
    std::fprintf(stderr, "fuzz_descriptors: validation message(s) for this input\n");
    std::abort();
  }
  vkcnn::fuzz::trace(context);
  return 0;
}
