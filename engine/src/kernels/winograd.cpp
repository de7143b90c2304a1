// Winograd F(2x2,3x3): weights, fit and encoding (winograd.h).
#include "kernels/winograd.h"

#include <algorithm>

#include "convolution_interface.h"
#include "kernels/kernel_encoding.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/image.h"

namespace vkcnn::detail {

bool winogradApplies(const ConvolutionDescriptor& d) {
  return d.kernelWidth == 3 && d.kernelHeight == 3 && d.strideInPixelsX == 1 &&
         d.strideInPixelsY == 1 && d.dilationRateX == 1 && d.dilationRateY == 1 && d.groups == 1;
}

ConvolutionDescriptor winogradGemmDescriptor(const ConvolutionDescriptor& d) {
  const uint32_t in = (d.inputFeatureChannels + 3) / 4 * 4;
  const uint32_t out = (d.outputFeatureChannels + 3) / 4 * 4;
  ConvolutionDescriptor g = ConvolutionDescriptor::make(1, 1, 16 * in, 16 * out);
  g.groups = 16;
  return g;
}

std::vector<float> winogradGemmWeights(const ConvolutionDescriptor& d,
                                       std::span<const float> weights,
                                       std::span<const double> scale) {
  const uint32_t cin = d.inputFeatureChannels, cout = d.outputFeatureChannels;
  const uint32_t in = (cin + 3) / 4 * 4, out = (cout + 3) / 4 * 4;
  // G of F(2x2,3x3); U = G g G^T is 4x4 per channel pair, position p = 4 * row + column.
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::vector<float> u(size_t(16) * out * in, 0.0f);
  for (uint32_t o = 0; o < cout; ++o)
    for (uint32_t i = 0; i < cin; ++i) {
      double g[3][3];
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 3; ++x)
          g[y][x] = double(weights[((size_t(o) * 3 + y) * 3 + x) * cin + i]) * scale[o];
      double gg[4][3];  // G g
      for (int r = 0; r < 4; ++r)
        for (int x = 0; x < 3; ++x)
          gg[r][x] = G[r][0] * g[0][x] + G[r][1] * g[1][x] + G[r][2] * g[2][x];
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
          const double v = gg[r][0] * G[c][0] + gg[r][1] * G[c][1] + gg[r][2] * G[c][2];
          // Output channel p * out + o of group p, input channel i of the group.
          u[(size_t(4 * r + c) * out + o) * in + i] = float(v);
        }
    }
  return u;
}

bool winogradFits(const KernelEncoding& e, const ConvolutionDescriptor& d) {
  const Context& context = e.handle.context();
  const uint32_t in = (d.inputFeatureChannels + 3) / 4 * 4;
  const uint32_t out = (d.outputFeatureChannels + 3) / 4 * 4;
  return (e.destination.storageChannelOffset() + e.destinationChannelOffset) % 4 == 0 &&
         Image::maxNumberOfImages(context, 16 * in) > 0 &&
         Image::maxNumberOfImages(context, 16 * out) > 0;
}

void encodeWinograd(KernelEncoding& e, const ConvolutionDescriptor& d, int32_t originX,
                    int32_t originY, const WinogradEpilogue& epilogue,
                    const std::function<void(KernelEncoding&)>& gemm) {
  const Context& context = e.handle.context();
  const uint32_t S = (d.inputFeatureChannels + 3) / 4, T = (d.outputFeatureChannels + 3) / 4;
  const uint32_t tilesW = (e.clipWidth + 1) / 2, tilesH = (e.clipHeight + 1) / 2;
  const uint32_t perRound = std::min(Image::maxNumberOfImages(context, 64 * S),
                                     Image::maxNumberOfImages(context, 64 * T));
  const ShaderVariant variant = variantFor(e.destination);
  const ChannelFormat format =
      variant == ShaderVariant::f16 ? ChannelFormat::float16 : ChannelFormat::float32;
  for (uint32_t first = 0; first < e.imageCount; first += perRound) {
    const uint32_t count = std::min(perRound, e.imageCount - first);
    TemporaryImage v(e.handle, {tilesW, tilesH, 64 * S, count, format, ImageUsage::all,
                                "winograd transformed input"});
    TemporaryImage m(e.handle,
                     {tilesW, tilesH, 64 * T, count, format, ImageUsage::all, "winograd products"});
    {
      DispatchRecorder r(e.commandBuffer, ShaderId::winograd_input, variantFor(v),
                         e.what() + " (winograd input)");
      shader::ConvolutionPush push{};
      push.source = r.bindSource(0, e.source, e.sourceFirstImage + first, count,
                                 e.sourceChannelOffset, e.sourceChannels);
      push.destination = r.bindDestination(1, v, 0, count, 0, 64 * S);
      push.geometry = {0,       0,       int32_t(tilesW), int32_t(tilesH),
                       originX, originY, int32_t(count),  int32_t(16 * S)};
      push.convolution.inputChannelsPerGroup = int32_t(S);
      r.dispatch(push, tilesW, tilesH, count * S);
    }
    {
      KernelEncoding g{e.commandBuffer, e.handle, e.kernel, v, m};
      g.imageCount = count;
      g.clipWidth = tilesW, g.clipHeight = tilesH;
      g.sourceChannels = 64 * S, g.destinationChannels = 64 * T;
      gemm(g);
      consumeRead(v);
    }
    {
      DispatchRecorder r(e.commandBuffer, ShaderId::winograd_output, variant,
                         e.what() + " (winograd output)");
      shader::ConvolutionPush push{};
      push.source = r.bindSource(0, m, 0, count, 0, 64 * T);
      push.destination = r.bindDestination(1, e.destination, e.destinationFirstImage + first, count,
                                           e.destinationChannelOffset, e.destinationChannels);
      // Binding 2, the convolution shaders' weights, is not read here (reflection drops it).
      r.bindBuffer(3, epilogue.bias);
      r.bindBuffer(4, epilogue.slopes);
      push.neuron = epilogue.neuron;
      if (e.residual) {
        const shader::ImageView residual = r.bindSource(
            5, *e.residual, e.destinationFirstImage + first, count, 0, e.destinationChannels);
        push.neuron.residual = 1;
        push.neuron.residualLayersPerImage = residual.layersPerImage;
        push.neuron.residualChannelShift = residual.channelShift;
      } else {
        r.bindSource(5, m, 0, count, 0, 64 * T);
      }
      push.geometry = {
          int32_t(e.clipX), int32_t(e.clipY), int32_t(e.clipWidth), int32_t(e.clipHeight), 0, 0,
          int32_t(count),   int32_t(T)};
      r.dispatch(push, tilesW, tilesH, count * T);
      consumeRead(m);
    }
  }
}

}  // namespace vkcnn::detail
