// Winograd F(4x4,3x3): weights, fit and encoding (winograd.h).
#include "kernels/winograd.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "convolution_interface.h"
#include "convolution_tiles.h"
#include "kernels/kernel_encoding.h"
#include "kernels/tensor_encoding.h"
#include "kernels/weights.h"
#include "memory/half.h"
#include "vulkan/context_impl.h"
#include "vulkan/pipelines.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/image.h"
#include "vkcnn/tensor.h"

namespace vkcnn::detail {

namespace {

constexpr uint32_t kPositions = 36;        // F(4x4,3x3)'s 6x6 tile
constexpr uint32_t kMatrixPositions = 16;  // F(2x2,3x3)'s 4x4 tile
// winograd_matrix_gemm.comp's tile rows (convolution_tiles.h): the matrix scheme's buffers hold
// blocks of this many rows ([row block][position][row][channel]), a piece's rows start at one, and
// no row is checked.
constexpr uint32_t kMatrixTileRows = VKCNN_WINOGRAD_MATRIX_ROWS;
// What K is padded to: a multiple of every tile's reduction a stage.
constexpr uint32_t kMatrixChunk = 32;
static_assert(std::ranges::all_of(kWinogradMatrixTiles, [](const WinogradMatrixTile& t) {
  return kMatrixChunk % t.depth() == 0;
}));

uint32_t slicesOf(uint32_t channels) {
  return (channels + 3) / 4;
}

uint32_t roundUp(uint32_t v, uint32_t to) {
  return (v + to - 1) / to * to;
}

// What a scheme's buffers hold per row (a block of m x m destination pixels).
struct Layout {
  uint32_t m;                              // the block's side
  uint32_t positions;                      // (m + 2)^2
  uint32_t rowAlign;                       // rows of a piece padded to this
  uint32_t inputChannels, outputChannels;  // per position and row, padding included
  uint32_t inputBytes;                     // an input channel's bytes (float32 or float16)
  ShaderId input, output;

  static Layout of(WinogradScheme scheme, const ConvolutionDescriptor& d) {
    if (scheme == WinogradScheme::matrixUnits)
      return {2,
              kMatrixPositions,
              kMatrixTileRows,
              winogradMatrixK(d),
              winogradMatrixN(d),
              2,
              ShaderId::winograd_matrix_input,
              ShaderId::winograd_matrix_output};
    return {4,
            kPositions,
            1,
            4 * slicesOf(d.inputFeatureChannels),
            4 * slicesOf(d.outputFeatureChannels),
            4,
            ShaderId::winograd_input,
            ShaderId::winograd_output};
  }
  uint32_t blocks(uint32_t width, uint32_t height) const {
    return ((width + m - 1) / m) * ((height + m - 1) / m);
  }
  // Bytes of the larger of the two buffers per row.
  uint64_t rowBytes() const {
    return uint64_t(positions) * std::max(inputChannels * inputBytes, outputChannels * 4);
  }
  uint32_t paddedRows(uint32_t rows) const { return roundUp(rows, rowAlign); }
  // Elements (4 channels each) from a position, a row and a block of kMatrixTileRows rows to the
  // next, as the transforms address them: [row][position][channel] for the portable scheme, [row
  // block][position][row][channel] for the matrix units (a tile's rows of one position
  // contiguous, as the GEMM loads them).
  struct Strides {
    int32_t position, row, block;
    // Into the transforms' push constants (winograd_input.comp, winograd_matrix_input.comp,
    // winograd_transform_output.glsl).
    void setIn(shader::ConvolutionParams& p) const {
      p.strideX = position;
      p.strideY = row;
      p.dilationX = block;
    }
  };
  Strides strides(uint32_t channels) const {
    const int32_t c = int32_t(channels / 4), b = int32_t(kMatrixTileRows);
    if (rowAlign == 1) return {c, int32_t(positions) * c, b * int32_t(positions) * c};
    return {b * c, c, int32_t(positions) * b * c};
  }
};

uint64_t roundBytes(const ChoiceOverrides& overrides) {
  const uint64_t forced = overrides.winogradRoundBytes;
  return forced ? std::min(forced, kWinogradRoundBytes) : kWinogradRoundBytes;
}

// The index, in elements of `per` of a bound buffer's elements, of element `element`.
int32_t elementIndex(int32_t element, int32_t per, const std::string& what) {
  if (element % per)
    throw Error(ErrorCode::vulkan, what + ": internal: a Winograd buffer starts at element " +
                                       std::to_string(element) +
                                       " of its binding, not at a multiple of " +
                                       std::to_string(per));
  return element / per;
}

// U = G g G^T of output channel o and input channel i (of cin), scaled by scale[o], in double.
template <int N>
void transformWeights(const double (&G)[N][3], std::span<const float> weights,
                      std::span<const double> scale, size_t o, size_t i, uint32_t cin,
                      double (&u)[N][N]) {
  double g[3][3];
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x)
      g[y][x] = double(weights[((o * 3 + y) * 3 + x) * cin + i]) * scale[o];
  double gg[N][3];  // G g
  for (int r = 0; r < N; ++r)
    for (int x = 0; x < 3; ++x)
      gg[r][x] = G[r][0] * g[0][x] + G[r][1] * g[1][x] + G[r][2] * g[2][x];
  for (int r = 0; r < N; ++r)
    for (int c = 0; c < N; ++c)
      u[r][c] = gg[r][0] * G[c][0] + gg[r][1] * G[c][1] + gg[r][2] * G[c][2];
}

}  // namespace

bool winogradApplies(const ConvolutionDescriptor& d) {
  return d.kernelWidth == 3 && d.kernelHeight == 3 && d.strideInPixelsX == 1 &&
         d.strideInPixelsY == 1 && d.dilationRateX == 1 && d.dilationRateY == 1 && d.groups == 1 &&
         !d.sourceActivation;  // its input transform reads the source as it is
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
          double uu[6][6];
          transformWeights(G, weights, scale, 4 * n + lane, i, cin, uu);
          for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c) lanes[lane][6 * r + c] = uu[r][c];
        }
        for (size_t p = 0; p < kPositions; ++p) {
          float* block = u + (((p * T + n) * S + i / 4) * 4 + i % 4) * 4;
          for (int lane = 0; lane < 4; ++lane) block[lane] = float(lanes[lane][p]);
        }
      }
  });
}

uint32_t winogradMatrixK(const ConvolutionDescriptor& d) {
  return roundUp(d.inputFeatureChannels, kMatrixChunk);
}

// 64 or 128 output columns a GEMM workgroup (encodeWinograd).
uint32_t winogradMatrixN(const ConvolutionDescriptor& d) {
  return roundUp(d.outputFeatureChannels, VKCNN_WINOGRAD_MATRIX_COLUMN_ALIGN);
}

size_t winogradMatrixWeightCount(const ConvolutionDescriptor& d) {
  return size_t(kMatrixPositions) * winogradMatrixK(d) * winogradMatrixN(d);
}

void winogradMatrixWeights(const ConvolutionDescriptor& d, std::span<const float> weights,
                           std::span<const double> scale, uint16_t* u) {
  const uint32_t cin = d.inputFeatureChannels, cout = d.outputFeatureChannels;
  const size_t K = winogradMatrixK(d), N = winogradMatrixN(d);
  // G of F(2x2,3x3) (winograd.glsl); position p = 4 * row + column.
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::fill(u, u + winogradMatrixWeightCount(d), uint16_t(0));
  // By ranges of input channels on threads: each writes rows k of every position.
  parallelRanges(cin, 1, (size_t(1) << 14) / (cout * 9) + 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)
      for (size_t o = 0; o < cout; ++o) {
        double uu[4][4];
        transformWeights(G, weights, scale, o, k, cin, uu);
        for (int p = 0; p < 16; ++p) u[(p * K + k) * N + o] = floatToHalf(float(uu[p / 4][p % 4]));
      }
  });
}

bool winogradFits(const ConvolutionDescriptor& d, uint32_t width, uint32_t height,
                  bool destinationAtLayer, const DeviceFacts& facts, WinogradScheme scheme) {
  const Layout layout = Layout::of(scheme, d);
  const uint64_t imageBytes = layout.paddedRows(layout.blocks(width, height)) * layout.rowBytes();
  // The GEMM's shared memory: the portable one's as reflected (its 32-slice tile; the 16-slice
  // one takes less); winograd_matrix_gemm.comp's tiles fit the 48 KiB matrixUnits guarantees.
  const bool shared =
      scheme == WinogradScheme::matrixUnits
          ? facts.matrixTiles()
          : fitsDevice(facts, shaderModule(ShaderId::winograd_gemm, ShaderVariant::f32));
  return destinationAtLayer && imageBytes <= kWinogradRoundBytes && shared;
}

namespace {

// Images [first, +count) of a piece, its blocks from row `row` of the round's buffers, `rows` of
// them padded to the layout's rows.
struct Segment {
  KernelEncoding* e;
  uint32_t first, count, row, rows;
};

// The pieces' images in rounds whose buffers take at most `limit` bytes each (at least one image
// a round).
std::vector<std::vector<Segment>> roundsOf(std::span<KernelEncoding> pieces, const Layout& layout,
                                           uint64_t limit) {
  std::vector<std::vector<Segment>> rounds(1);
  const uint64_t rowBytes = layout.rowBytes();
  uint64_t rows = 0;
  for (KernelEncoding& e : pieces) {
    const uint32_t blocks = layout.blocks(e.clipWidth, e.clipHeight);
    for (uint32_t first = 0; first < e.imageCount;) {
      // The images whose padded rows fit what is left of the round (at least one).
      const uint64_t left = limit / rowBytes - std::min(limit / rowBytes, rows);
      uint32_t count = uint32_t(std::min<uint64_t>(left / blocks, e.imageCount - first));
      while (count && layout.paddedRows(blocks * count) > left) --count;
      if (!count && rows) {
        rounds.emplace_back(), rows = 0;
        continue;
      }
      count = std::max(count, 1u);
      const uint32_t padded = layout.paddedRows(blocks * count);
      rounds.back().push_back({&e, first, count, uint32_t(rows), padded});
      first += count, rows += padded;
    }
  }
  return rounds;
}

// The GEMM's output channels a workgroup and its specialization constants.
struct GemmTile {
  uint32_t columns;
  std::vector<int32_t> specialization;
};

GemmTile gemmTileOf(const CommandBufferImpl& cb, const Layout& layout, uint32_t T, bool matrix,
                    const std::string& what) {
  // Portable: 32 output slices a GEMM workgroup unless 16 waste fewer columns. Matrix units: the
  // first tile of kWinogradMatrixTiles whose columns divide N.
  const WinogradMatrixTile* matrixTile = nullptr;
  for (const WinogradMatrixTile& t : kWinogradMatrixTiles)
    if (!matrixTile && layout.outputChannels % t.columns() == 0) matrixTile = &t;
  uint32_t tileN = matrix                                   ? matrixTile->columns()
                   : T % 32 == 0 || (T % 16 != 0 && T > 16) ? 32
                                                            : 16;
  std::vector<int32_t> gemmSpecialization{int32_t(tileN), int32_t(16 * tileN)};
  if (matrix) {
    const auto constants = matrixTile->specialization();
    gemmSpecialization.assign(constants.begin(), constants.end());
  }
  // A benchmark hook: VKCNN_WINOGRAD_MATRIX_TILE=WMxWN/FMxFN/STAGED[/KSTEPS] (warps, fragments a
  // warp; WM x FM must be 8, the layout's 128 rows; the products through shared memory or not;
  // 16-deep steps a stage, 1 or 2) times other configurations of winograd_matrix_gemm.comp.
  if (const std::string& forced = cb.context->overrides().choice.winogradMatrixTile;
      matrix && !forced.empty()) {
    int wm = 0, wn = 0, fm = 0, fn = 0, staged = 1, steps = 2;
    if (std::sscanf(forced.c_str(), "%dx%d/%dx%d/%d/%d", &wm, &wn, &fm, &fn, &staged, &steps) >=
            4 &&
        wm * fm == 8 && wn > 0 && fn > 0 && (steps == 1 || steps == 2) &&
        layout.outputChannels % uint32_t(16 * wn * fn) == 0) {
      const WinogradMatrixTile t{uint32_t(wm), uint32_t(wn),    uint32_t(fm),
                                 uint32_t(fn), uint32_t(steps), uint32_t(staged != 0)};
      // Loads split evenly over the workgroup (winogradTilesFit's condition).
      if ((t.rows() * t.depth() / 8) % t.threads() || (t.depth() * t.columns() / 8) % t.threads() ||
          t.sharedBytes() > VKCNN_MATRIX_SHARED_MEMORY)
        throw Error(ErrorCode::invalidArgument,
                    what + ": VKCNN_WINOGRAD_MATRIX_TILE=" + forced +
                        " does not split its loads evenly or does not fit 48 KiB");
      tileN = t.columns();
      const auto constants = t.specialization();
      gemmSpecialization.assign(constants.begin(), constants.end());
    }
  }
  return {tileN, gemmSpecialization};
}

// The input transform of segment `g` into its rows of `transformed`.
void encodeInput(CommandBufferImpl& cb, const Layout& layout, const Segment& g,
                 const Tensor& transformed, int64_t leftEdge, int64_t topEdge, uint32_t S,
                 bool matrix, const std::string& what) {
  const KernelEncoding& e = *g.e;
  const Layout::Strides inputStrides = layout.strides(layout.inputChannels);
  DispatchRecorder r(cb, layout.input, variantFor(e.destination), what + " (winograd input)");
  shader::ConvolutionPush push{};
  push.source = r.bindSource(0, e.source, e.sourceFirstImage + g.first, g.count,
                             e.sourceChannelOffset, e.sourceChannels);
  const uint32_t m = layout.m;
  push.geometry = {0,
                   0,
                   int32_t((e.clipWidth + m - 1) / m),
                   int32_t((e.clipHeight + m - 1) / m),
                   shaderCoordinate(e.offsetX - leftEdge, "window origin x", e),
                   shaderCoordinate(e.offsetY - topEdge, "window origin y", e),
                   int32_t(g.count),
                   int32_t(S)};
  // Every slice of the padded channels (zero past the window's).
  const uint32_t slices = layout.inputChannels / 4;
  const uint32_t blocks = layout.blocks(e.clipWidth, e.clipHeight) * g.count;
  push.convolution.inputChannelsPerGroup = int32_t(slices);
  push.convolution.kernelHeight = int32_t(blocks);
  push.convolution.kernelWidth = elementIndex(
      bindTensor(r, cb, 6, transformed.slice(0, g.row, g.row + g.rows), true), 4, what);
  inputStrides.setIn(push.convolution);
  if (matrix)  // 8 x 4 blocks of 8 slices a workgroup (winograd_matrix_input.comp)
    r.dispatchGroups(&push, sizeof push, (uint32_t(push.geometry.clipWidth) + 7) / 8,
                     (uint32_t(push.geometry.clipHeight) + 3) / 4, g.count * (slices / 8));
  else
    r.dispatch(push, blocks * slices, 1, 1);
}

// The per-position GEMMs over a round's rows.
void encodeGemm(CommandBufferImpl& cb, const Layout& layout, const GemmTile& tile, uint32_t R,
                uint32_t S, uint32_t T, const Tensor& transformed, const Tensor& products,
                const WinogradWeights& w, bool matrix, const std::string& what) {
  const uint32_t tileN = tile.columns;
  const std::vector<int32_t>& gemmSpecialization = tile.specialization;
  if (matrix) {
    DispatchRecorder r(cb, ShaderId::winograd_matrix_gemm, ShaderVariant::f16,
                       what + " (winograd matrix gemm " + std::to_string(tileN) + ")",
                       gemmSpecialization);
    shader::WinogradMatrixGemmPush push{};
    push.rows = int32_t(R);
    push.K = int32_t(layout.inputChannels);
    push.N = int32_t(layout.outputChannels);
    push.transformedFirst = elementIndex(bindTensor(r, cb, 0, transformed, false), 8, what);
    r.bindBuffer(1, w.weights);
    push.productsFirst = elementIndex(bindTensor(r, cb, 2, products, true), 4, what);
    r.dispatchGroups(&push, sizeof push, R / kMatrixTileRows, layout.outputChannels / tileN,
                     layout.positions);
  } else {
    DispatchRecorder r(cb, ShaderId::winograd_gemm, ShaderVariant::f32,
                       what + " (winograd gemm " + std::to_string(tileN) + ")", gemmSpecialization);
    shader::WinogradGemmPush push{};
    push.rows = int32_t(R);
    push.inputSlices = int32_t(S);
    push.outputSlices = int32_t(T);
    push.sourceFirst = elementIndex(bindTensor(r, cb, 0, transformed, false), 4, what);
    r.bindBuffer(1, w.weights);
    push.destinationFirst = elementIndex(bindTensor(r, cb, 2, products, true), 4, what);
    r.dispatchGroups(&push, sizeof push, (R + 127) / 128, (T + tileN - 1) / tileN, kPositions);
  }
}

// The output transform of segment `g` from its rows of `products`, with the epilogue.
void encodeOutput(CommandBufferImpl& cb, const Layout& layout, const Segment& g,
                  const Tensor& products, uint32_t T, const WinogradWeights& w,
                  const std::string& what) {
  const KernelEncoding& e = *g.e;
  const Layout::Strides outputStrides = layout.strides(layout.outputChannels);
  DispatchRecorder r(cb, layout.output, variantFor(e.destination), what + " (winograd output)");
  shader::ConvolutionPush push{};
  push.destination = r.bindDestination(1, e.destination, e.destinationFirstImage + g.first, g.count,
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
  const uint32_t blocks = layout.blocks(e.clipWidth, e.clipHeight) * g.count;
  push.convolution.kernelHeight = int32_t(blocks);
  push.convolution.kernelWidth =
      elementIndex(bindTensor(r, cb, 6, products.slice(0, g.row, g.row + g.rows), false), 4, what);
  outputStrides.setIn(push.convolution);
  r.dispatch(push, blocks * T, 1, 1);
}

}  // namespace

void encodeWinograd(std::span<KernelEncoding> pieces, const ConvolutionDescriptor& d,
                    int64_t leftEdge, int64_t topEdge, const WinogradWeights& w,
                    const std::string& what) {
  CommandBufferImpl& cb = pieces.front().commandBuffer;
  CommandBuffer& handle = pieces.front().handle;
  const bool matrix = w.scheme == WinogradScheme::matrixUnits;
  const Layout layout = Layout::of(w.scheme, d);
  const uint32_t S = slicesOf(d.inputFeatureChannels), T = slicesOf(d.outputFeatureChannels);
  const std::vector<std::vector<Segment>> rounds =
      roundsOf(pieces, layout, roundBytes(cb.context->overrides().choice));
  const GemmTile tile = gemmTileOf(cb, layout, T, matrix, what);
  const TensorDataType inputType = matrix ? TensorDataType::float16 : TensorDataType::float32;
  for (const std::vector<Segment>& round : rounds) {
    const uint32_t R = round.back().row + round.back().rows;
    TemporaryTensor transformed(
        handle, {{R, layout.positions, layout.inputChannels}, inputType, what + " winograd input"});
    TemporaryTensor products(handle, {{R, layout.positions, layout.outputChannels},
                                      TensorDataType::float32,
                                      what + " winograd products"});
    transformed.setReadCount(1);
    products.setReadCount(1);
    for (const Segment& g : round)
      encodeInput(cb, layout, g, transformed, leftEdge, topEdge, S, matrix, what);
    markWritten(transformed);
    encodeGemm(cb, layout, tile, R, S, T, transformed, products, w, matrix, what);
    markWritten(products);
    consumeRead(transformed);
    for (const Segment& g : round) encodeOutput(cb, layout, g, products, T, w, what);
    consumeRead(products);
  }
}

}  // namespace vkcnn::detail
