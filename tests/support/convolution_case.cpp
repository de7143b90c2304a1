// The convolution tests' shared cases (convolution_case.h).
#include "convolution_case.h"

#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vkcnn::test {

std::vector<float> randomWeights(const ConvolutionDescriptor& d, uint32_t seed) {
  // Scaled by fan-in so that outputs stay near 1 whatever the window (neurons like power and
  // logarithm need a*x + b > 0).
  const double fanIn = double(d.kernelWidth) * d.kernelHeight * (d.inputFeatureChannels / d.groups);
  const float a = float(1.5 / std::sqrt(fanIn));
  return randomFloats(d.weightCount(), seed, -a, a);
}

Tensor reference(const Case& c, const Tensor& x, const std::vector<float>& w,
                 const std::vector<float>& bias, uint32_t dstW, uint32_t dstH, uint32_t dstN,
                 uint32_t dstC, const Tensor* residual) {
  const ConvolutionDescriptor& d = c.descriptor;
  Tensor y(dstN, dstC, dstH, dstW, std::numeric_limits<double>::quiet_NaN());
  const uint32_t clipW = c.clip.width == kWholeExtent ? dstW - c.clip.x : c.clip.width;
  const uint32_t clipH = c.clip.height == kWholeExtent ? dstH - c.clip.y : c.clip.height;
  const uint32_t n = c.clip.depth == kWholeExtent ? dstN - c.clip.z : c.clip.depth;
  int64_t left = 0, top = 0;
  if (!c.fullyConnected) {
    const bool mps = c.padding.mode == Padding::Mode::mpsDefault;
    left = mps ? int64_t(d.dilatedKernelWidth() >> 1) : int64_t(c.padding.left);
    top = mps ? int64_t(d.dilatedKernelHeight() >> 1) : int64_t(c.padding.top);
  }
  // The window of destination pixel (px, py) of the clip starts at the offset's source pixel.
  ReferenceConvolution rc;
  rc.kernelWidth = d.kernelWidth, rc.kernelHeight = d.kernelHeight;
  rc.inputChannels = d.inputFeatureChannels, rc.outputChannels = d.outputFeatureChannels;
  rc.groups = d.groups;
  rc.strideX = d.strideInPixelsX, rc.strideY = d.strideInPixelsY;
  rc.dilationX = d.dilationRateX, rc.dilationY = d.dilationRateY;
  rc.left = left - c.offset.x, rc.top = top - c.offset.y;
  for (uint32_t i = 0; i < n; ++i) {
    // The source channel window, activated where there is a source activation; padding stays
    // zero.
    auto source = [&](uint32_t channel, int64_t sy, int64_t sx) {
      double v = x.atOrZero(uint32_t(c.offset.z) + i, c.sourceChannelOffset + channel, sy, sx);
      if (const auto& a = d.sourceActivation;
          a && sy >= 0 && sx >= 0 && sy < int64_t(x.h) && sx < int64_t(x.w)) {
        v = double(a->scale[channel]) * v + double(a->shift[channel]);
        if (a->neuron == NeuronType::relu) v = std::max(v, 0.0);
      }
      return v;
    };
    for (uint32_t o = 0; o < d.outputFeatureChannels; ++o) {
      double scale = 1, shift = 0;
      if (d.batchNormalization) {
        const auto& bn = *d.batchNormalization;
        const double gamma = bn.gamma.empty() ? 1 : bn.gamma[o];
        const double beta = bn.beta.empty() ? 0 : bn.beta[o];
        scale = gamma / std::sqrt(double(bn.variance[o]) + bn.epsilon);
        shift = beta - scale * bn.mean[o];
      }
      for (uint32_t py = 0; py < clipH; ++py)
        for (uint32_t px = 0; px < clipW; ++px) {
          const double sum = rc.window(w, o, py, px, source);
          const double b = bias.empty() ? 0 : bias[o];
          const double r =
              residual ? residual->at(c.clip.z + i, o, c.clip.y + py, c.clip.x + px) : 0;
          y.at(c.clip.z + i, c.destinationChannelOffset + o, c.clip.y + py, c.clip.x + px) =
              applyNeuron(d.neuron, (sum + b) * scale + shift + r, o);
        }
    }
  }
  return y;
}

void runInContext(const Context& ctx, Convolution& kernel, const Tensor& x,
                  const Tensor& expected) {
  Image source(ctx, {x.w, x.h, x.c, x.n, ChannelFormat::float32, ImageUsage::all, "x"});
  upload(source, x);
  Image destination =
      makePoisoned(ctx, {x.w, x.h, expected.c, x.n, ChannelFormat::float32, ImageUsage::all, "y"});
  CommandBuffer cb(ctx);
  kernel.encode(cb, source, destination);
  cb.commit();
  cb.waitUntilCompleted();
  compare(download(destination), expected, tolerance(ChannelFormat::float32));
}

std::string run(const Case& c) {
  const ConvolutionDescriptor& d = c.descriptor;
  const ChannelFormat sourceFormat = c.separateSourceFormat ? c.sourceFormat : c.format;
  const double lo = sourceFormat == ChannelFormat::unorm8 ? 0 : -1;
  Tensor x = roundedTo(randomTensor(c.sourceImages, d.inputFeatureChannels + c.extraSourceChannels,
                                    c.height, c.width, c.seed, lo, 1),
                       sourceFormat);
  std::vector<float> w = randomWeights(d, c.seed + 1);
  std::vector<float> bias =
      c.withBias ? randomFloats(d.outputFeatureChannels, c.seed + 2) : std::vector<float>{};
  if (c.fullyConnected) {
    FullyConnected kernel(context(), d, w, bias);
    runWith(kernel, c, x, w, bias);
    return {};
  }
  Convolution kernel(context(), d, w, bias);
  kernel.padding = c.padding;
  kernel.imagesSideBySide = c.imagesSideBySide;
  runWith(kernel, c, x, w, bias);
  return kernel.configuration();
}

std::string describe(const Case& c) {
  const ConvolutionDescriptor& d = c.descriptor;
  std::string s =
      std::to_string(d.kernelWidth) + "x" + std::to_string(d.kernelHeight) + " " +
      std::to_string(d.inputFeatureChannels) + "->" + std::to_string(d.outputFeatureChannels) +
      " groups " + std::to_string(d.groups) + " stride " + std::to_string(d.strideInPixelsX) + "x" +
      std::to_string(d.strideInPixelsY) + " dilation " + std::to_string(d.dilationRateX) + "x" +
      std::to_string(d.dilationRateY) + " source " + std::to_string(c.width) + "x" +
      std::to_string(c.height) + "x" + std::to_string(c.sourceImages) + " " +
      (c.padding.mode == Padding::Mode::mpsDefault ? "mpsDefault" : "explicit") + " neuron " +
      toString(d.neuron.type) + " srcOffset " + std::to_string(c.sourceChannelOffset) +
      " dstOffset " + std::to_string(c.destinationChannelOffset) + " " + toString(c.format);
  return s;
}

void sampleBatchNormalization(ConvolutionDescriptor& d, uint32_t seed) {
  const uint32_t out = d.outputFeatureChannels;
  d.setBatchNormalizationParametersForInference(
      randomFloats(out, seed, -0.5f, 0.5f), randomFloats(out, seed + 1, 0.5f, 2.f),
      randomFloats(out, seed + 2, 0.5f, 1.5f), randomFloats(out, seed + 3, -0.5f, 0.5f), 1e-3f);
}

uint32_t selectorMultiprocessors() {
  const uint32_t reported = context().capabilities().multiprocessorCount;
  return reported ? reported : 132;
}

// Whether the matrix units' cost model runs where its constants were fitted (32-wide subgroups,
// 100-200 multiprocessors): the tests check its choices there only, its results everywhere.
bool matrixCostModelFitted() {
  const DeviceCapabilities& caps = context().capabilities();
  const uint32_t multiprocessors = selectorMultiprocessors();
  return caps.matrixUnits && caps.subgroupSize == 32 && multiprocessors >= 100 &&
         multiprocessors <= 200;
}

}  // namespace vkcnn::test
