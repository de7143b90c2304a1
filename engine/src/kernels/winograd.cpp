// Winograd F(4x4,3x3): weights, fit and encoding (winograd.h).
#include "kernels/winograd.h"

#include <algorithm>
#include <cstdlib>

#include "convolution_interface.h"
#include "kernels/kernel_encoding.h"
#include "kernels/tensor_encoding.h"
#include "kernels/weights.h"
#include "vulkan/context_impl.h"
#include "vulkan/pipelines.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/image.h"
#include "vkcnn/tensor.h"

namespace vkcnn::detail {

namespace {

constexpr uint32_t kPositions = 36;  // a 6x6 tile

uint32_t slicesOf(uint32_t channels) {
  return (channels + 3) / 4;
}

// Bytes of the larger of the two buffers per image: 36 positions x 4x4 blocks x slices.
uint64_t bytesPerImage(const KernelEncoding& e, const ConvolutionDescriptor& d) {
  const uint64_t blocks = uint64_t((e.clipWidth + 3) / 4) * ((e.clipHeight + 3) / 4);
  const uint64_t slices =
      std::max(slicesOf(d.inputFeatureChannels), slicesOf(d.outputFeatureChannels));
  return kPositions * blocks * slices * 16;
}

uint64_t roundBytes() {
  const char* v = std::getenv("VKCNN_WINOGRAD_ROUND_BYTES");
  const uint64_t forced = v ? std::strtoull(v, nullptr, 10) : 0;
  return forced ? std::min(forced, kWinogradRoundBytes) : kWinogradRoundBytes;
}

// The vec4 index of a bound float32 buffer's element 0.
int32_t vec4Index(int32_t element, const std::string& what) {
  if (element % 4)
    throw Error(ErrorCode::vulkan, what + ": internal: a Winograd buffer starts at float " +
                                       std::to_string(element) + " of its binding, not at a vec4");
  return element / 4;
}

}  // namespace

bool winogradApplies(const ConvolutionDescriptor& d) {
  return d.kernelWidth == 3 && d.kernelHeight == 3 && d.strideInPixelsX == 1 &&
         d.strideInPixelsY == 1 && d.dilationRateX == 1 && d.dilationRateY == 1 && d.groups == 1;
}

size_t winogradWeightCount(const ConvolutionDescriptor& d) {
  return kPositions * slicesOf(d.outputFeatureChannels) * slicesOf(d.inputFeatureChannels) * 16;
}

void winogradWeights(const ConvolutionDescriptor& d, std::span<const float> weights,
                     std::span<const double> scale, float* u) {
  const uint32_t cin = d.inputFeatureChannels, cout = d.outputFeatureChannels;
  const size_t S = slicesOf(cin), T = slicesOf(cout);
  // G of F(4x4,3x3) for the points 0, 1, -1, -2, 1/2 and infinity (winograd.glsl); U = G g G^T
  // is 6x6 per channel pair, position p = 6 * row + column.
  static constexpr double G[6][3] = {{1, 0, 0},
                                     {1.0 / 3, 1.0 / 3, 1.0 / 3},
                                     {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                                     {1.0 / 15, -2.0 / 15, 4.0 / 15},
                                     {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                                     {0, 0, 1}};
  // By ranges of output slices on threads, each writing its slices' blocks of every position
  // once, padding included; an input channel's 4 output lanes go out as 16 contiguous bytes a
  // position, so the writes stream (one channel pair at a time they were 4-byte writes 16 bytes
  // apart, revisited by every lane: vgg16 took 350 ms longer to load).
  parallelRanges(T, 1, (size_t(1) << 14) / (S * 4) + 1, [&](size_t n0, size_t n1) {
    for (size_t n = n0; n < n1; ++n)
      for (uint32_t i = 0; i < 4 * S; ++i) {
        double lanes[4][kPositions] = {};  // zero for the padding channels
        for (uint32_t lane = 0; i < cin && lane < 4 && 4 * n + lane < cout; ++lane) {
          const size_t o = 4 * n + lane;
          double g[3][3];
          for (int y = 0; y < 3; ++y)
            for (int x = 0; x < 3; ++x)
              g[y][x] = double(weights[((o * 3 + y) * 3 + x) * cin + i]) * scale[o];
          double gg[6][3];  // G g
          for (int r = 0; r < 6; ++r)
            for (int x = 0; x < 3; ++x)
              gg[r][x] = G[r][0] * g[0][x] + G[r][1] * g[1][x] + G[r][2] * g[2][x];
          for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c)
              lanes[lane][6 * r + c] = gg[r][0] * G[c][0] + gg[r][1] * G[c][1] + gg[r][2] * G[c][2];
        }
        for (size_t p = 0; p < kPositions; ++p) {
          float* block = u + (((p * T + n) * S + i / 4) * 4 + i % 4) * 4;
          for (int lane = 0; lane < 4; ++lane) block[lane] = float(lanes[lane][p]);
        }
      }
  });
}

bool winogradFits(const KernelEncoding& e, const ConvolutionDescriptor& d) {
  // The GEMM's shared memory as reflected (its 32-slice tile; the 16-slice one takes less).
  const uint32_t sharedLimit = e.commandBuffer.context->capabilities().maxComputeSharedMemorySize;
  return (e.destination.storageChannelOffset() + e.destinationChannelOffset) % 4 == 0 &&
         bytesPerImage(e, d) <= kWinogradRoundBytes &&
         shaderModule(ShaderId::winograd_gemm, ShaderVariant::f32).sharedMemorySize <= sharedLimit;
}

void encodeWinograd(std::span<KernelEncoding> pieces, const ConvolutionDescriptor& d,
                    int64_t leftEdge, int64_t topEdge, const WinogradWeights& w,
                    const std::string& what) {
  CommandBufferImpl& cb = pieces.front().commandBuffer;
  CommandBuffer& handle = pieces.front().handle;
  const uint32_t S = slicesOf(d.inputFeatureChannels), T = slicesOf(d.outputFeatureChannels);
  // Images [first, +count) of a piece, its blocks from row `row` of the round's buffers.
  struct Segment {
    KernelEncoding* e;
    uint32_t first, count, row, rows;
  };
  std::vector<std::vector<Segment>> rounds(1);
  const uint64_t limit = roundBytes();
  uint64_t bytes = 0;
  uint32_t rows = 0;
  for (KernelEncoding& e : pieces) {
    const uint64_t perImage = bytesPerImage(e, d);
    const uint32_t blocks = ((e.clipWidth + 3) / 4) * ((e.clipHeight + 3) / 4);
    for (uint32_t first = 0; first < e.imageCount;) {
      if (bytes + perImage > limit && bytes) rounds.emplace_back(), bytes = 0, rows = 0;
      const uint32_t count =
          uint32_t(std::clamp<uint64_t>((limit - bytes) / perImage, 1, e.imageCount - first));
      rounds.back().push_back({&e, first, count, rows, blocks * count});
      first += count, bytes += perImage * count, rows += blocks * count;
    }
  }
  // 32 output slices a GEMM workgroup unless 16 waste fewer columns.
  const uint32_t tileN = T % 32 == 0 || (T % 16 != 0 && T > 16) ? 32 : 16;
  const std::vector<int32_t> gemmSpecialization{int32_t(tileN), int32_t(16 * tileN)};
  for (const std::vector<Segment>& round : rounds) {
    const uint32_t R = round.back().row + round.back().rows;
    TemporaryTensor transformed(
        handle, {{R, kPositions, 4 * S}, TensorDataType::float32, what + " winograd input"});
    TemporaryTensor products(
        handle, {{R, kPositions, 4 * T}, TensorDataType::float32, what + " winograd products"});
    transformed.setReadCount(1);
    products.setReadCount(1);
    for (const Segment& g : round) {
      const KernelEncoding& e = *g.e;
      DispatchRecorder r(cb, ShaderId::winograd_input, variantFor(e.destination),
                         what + " (winograd input)");
      shader::ConvolutionPush push{};
      push.source = r.bindSource(0, e.source, e.sourceFirstImage + g.first, g.count,
                                 e.sourceChannelOffset, e.sourceChannels);
      push.geometry = {0,
                       0,
                       int32_t((e.clipWidth + 3) / 4),
                       int32_t((e.clipHeight + 3) / 4),
                       shaderCoordinate(e.offsetX - leftEdge, "window origin x", e),
                       shaderCoordinate(e.offsetY - topEdge, "window origin y", e),
                       int32_t(g.count),
                       int32_t(S)};
      push.convolution.inputChannelsPerGroup = int32_t(S);
      push.convolution.kernelHeight = int32_t(g.rows);
      push.convolution.kernelWidth =
          vec4Index(bindTensor(r, cb, 6, transformed.slice(0, g.row, g.row + g.rows), true), what);
      r.dispatch(push, g.rows * S, 1, 1);
    }
    markWritten(transformed);
    {
      DispatchRecorder r(cb, ShaderId::winograd_gemm, ShaderVariant::f32,
                         what + " (winograd gemm " + std::to_string(tileN) + ")",
                         gemmSpecialization);
      shader::WinogradGemmPush push{};
      push.rows = int32_t(R);
      push.inputSlices = int32_t(S);
      push.outputSlices = int32_t(T);
      push.sourceFirst = vec4Index(bindTensor(r, cb, 0, transformed, false), what);
      r.bindBuffer(1, w.weights);
      push.destinationFirst = vec4Index(bindTensor(r, cb, 2, products, true), what);
      r.dispatchGroups(&push, sizeof push, (R + 127) / 128, (T + tileN - 1) / tileN, kPositions);
      markWritten(products);
      consumeRead(transformed);
    }
    for (const Segment& g : round) {
      const KernelEncoding& e = *g.e;
      DispatchRecorder r(cb, ShaderId::winograd_output, variantFor(e.destination),
                         what + " (winograd output)");
      shader::ConvolutionPush push{};
      push.destination =
          r.bindDestination(1, e.destination, e.destinationFirstImage + g.first, g.count,
                            e.destinationChannelOffset, e.destinationChannels);
      r.bindBuffer(3, w.bias);
      r.bindBuffer(4, w.slopes);
      push.neuron = w.neuron;
      if (e.residual) {
        const shader::ImageView residual = r.bindSource(
            5, *e.residual, e.destinationFirstImage + g.first, g.count, 0, e.destinationChannels);
        push.neuron.residual = 1;
        push.neuron.residualLayersPerImage = residual.layersPerImage;
        push.neuron.residualChannelShift = residual.channelShift;
      } else {
        // Unread (push.neuron.residual is 0), but every binding needs a descriptor.
        r.bindSource(5, e.source, e.sourceFirstImage + g.first, g.count, e.sourceChannelOffset,
                     e.sourceChannels);
      }
      push.geometry = {
          int32_t(e.clipX), int32_t(e.clipY), int32_t(e.clipWidth), int32_t(e.clipHeight), 0, 0,
          int32_t(g.count), int32_t(T)};
      push.convolution.kernelHeight = int32_t(g.rows);
      push.convolution.kernelWidth =
          vec4Index(bindTensor(r, cb, 6, products.slice(0, g.row, g.row + g.rows), false), what);
      r.dispatch(push, g.rows * T, 1, 1);
    }
    consumeRead(products);
  }
}

}  // namespace vkcnn::detail
