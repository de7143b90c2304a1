// ConvolutionDescriptor::accumulatorPrecision (MPS's accumulatorPrecisionOption) on the device:
// every matrix-unit tile forced with float16 accumulators (convolution_tiled_fp16acc), each
// epilogue, a 256-wide tile past the weight matrix's column padding and a batch's pieces in one
// dispatch, against the double-precision reference with a tolerance scaled for float16
// accumulation; on devices without matrix units (lavapipe) the option changes nothing, bit for
// bit; and a Graph hands GraphOptions::accumulatorPrecision to its convolutions. The choice itself
// is test_convolution_choice.cpp's; the Session, C API, CLI and Python plumbing is tested with
// each of them.
#include <vkcnn/convolution.h>
#include <vkcnn/graph.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "convolution_case.h"
#include "convolution_tiles.h"
#include "scoped_choice.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

bool matrixUnitTiles() {
  const DeviceCapabilities& caps = context().capabilities();
  return caps.matrixUnits && caps.subgroupSize == 32;
}

// The relative L2 a float16-accumulated reduction of depth `k` may reach over float16 storage's
// 2e-3: the matrix units round the running sums once a 16-deep step, a random walk of about
// 2e-4 x sqrt(k / 16) relative (the GEMM ceiling's 8192-deep GEMM measured 2.9e-3); three times
// that. A wrong tile, row or column is off by about 1.
double float16AccumulationTolerance(const ConvolutionDescriptor& d) {
  const double k = double(d.kernelWidth) * d.kernelHeight * d.inputFeatureChannels / d.groups;
  return tolerance(ChannelFormat::float16) + 6e-4 * std::sqrt(k / 16);
}

// One encode of `c` (float16 accumulators asked) against the reference; the configuration run
// and the profile's label of its dispatch.
std::pair<std::string, std::string> runAccumulating(const Case& c) {
  const ConvolutionDescriptor& d = c.descriptor;
  const Tensor x = roundedTo(
      randomTensor(c.sourceImages, d.inputFeatureChannels, c.height, c.width, c.seed), c.format);
  const std::vector<float> w = randomWeights(d, c.seed + 1);
  const std::vector<float> bias = randomFloats(d.outputFeatureChannels, c.seed + 2);
  Convolution kernel(context(), d, w, bias);
  kernel.padding = c.padding;
  const uint32_t outW = kernel.destinationWidth(c.width), outH = kernel.destinationHeight(c.height);
  const uint32_t outC = d.outputFeatureChannels;
  Image source = makeImage(x, c.format, "x");
  Image destination =
      makePoisoned(context(), {outW, outH, outC, c.sourceImages, c.format, ImageUsage::all, "y"});
  Tensor residual;
  Image residualImage;
  if (c.residual) {
    residual = roundedTo(randomTensor(c.sourceImages, outC, outH, outW, c.seed + 3), c.format);
    residualImage = makeImage(residual, c.format, "r");
  }
  CommandBufferOptions options;
  options.profile = true;
  CommandBuffer cb(context(), "accumulate", options);
  if (c.residual)
    kernel.encodeWithResidual(cb, source, residualImage, destination);
  else
    kernel.encode(cb, source, destination);
  cb.commit();
  cb.waitUntilCompleted();
  const Tensor expected =
      reference(c, x, w, bias, outW, outH, c.sourceImages, outC, c.residual ? &residual : nullptr);
  compare(download(destination), expected, float16AccumulationTolerance(d));
  const std::vector<KernelTiming> timings = cb.kernelTimings();
  return {kernel.configuration(), timings.empty() ? "" : timings.back().label};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("accumulate: every matrix-unit tile with float16 accumulators, forced") {
  // Each tile of convolution_tiles.h, the float16-accumulator-only ones included, on
  // convolution_tiled_fp16acc with each epilogue (as it goes with its operations fixed, reading
  // ahead, from the push constants). The shapes: partial row and column tiles, a reduction ending
  // inside a chunk, channels not a multiple of 4, stride and a residual (a); two column tiles of
  // 128 (b); 300 output channels, whose weight matrix is padded to 384 columns: a 256-wide tile's
  // second column reads none past them (c); a 2304-deep reduction (d).
  if (!matrixUnitTiles()) {
    MESSAGE("no matrix units with 32-wide subgroups: the portable case below covers this device");
    return;
  }
  ScopedChoice restore;
  Case a;
  a.descriptor = ConvolutionDescriptor::make(3, 3, 13, 70, NeuronDescriptor::relu());
  a.padding = Padding::explicitPadding(1, 1, 1, 1);
  a.width = 13;
  a.height = 11;
  a.sourceImages = 2;
  a.residual = true;
  a.seed = 21;
  Case b;
  b.descriptor = ConvolutionDescriptor::make(1, 1, 40, 136);
  b.descriptor.strideInPixelsX = b.descriptor.strideInPixelsY = 2;
  b.padding = Padding::explicitPadding(0, 0, 0, 0);
  b.width = b.height = 29;
  b.seed = 22;
  Case c;
  c.descriptor = ConvolutionDescriptor::make(1, 1, 64, 300, NeuronDescriptor::relu());
  c.width = 20;
  c.height = 19;
  c.sourceImages = 2;
  c.seed = 23;
  Case d;
  d.descriptor = ConvolutionDescriptor::make(3, 3, 256, 64);
  d.padding = Padding::explicitPadding(1, 1, 1, 1);
  d.width = d.height = 8;
  d.seed = 24;
  for (Case* x : {&a, &b, &c, &d}) {
    x->format = ChannelFormat::float16;
    x->descriptor.accumulatorPrecision = AccumulatorPrecision::float16;
  }
  for (const detail::MatrixTile& tile : detail::kMatrixTiles) {
    CAPTURE(tile.name);
    forceChoice(&detail::ChoiceOverrides::tile, tile.name);
    for (const char* epilogue : {"", "ahead", "inline"}) {
      CAPTURE(epilogue);
      forceChoice(&detail::ChoiceOverrides::epilogue, epilogue);
      for (const Case* x : {&a, &b, &c, &d}) {
        CAPTURE(describe(*x));
        const auto [configuration, label] = runAccumulating(*x);
        CHECK(configuration == tile.name);
        CHECK(contains(label, "float16 accumulators"));
      }
    }
  }
}

TEST_CASE("accumulate: the models' choice and a batch's pieces with float16 accumulators") {
  // Unforced: whatever the models take runs (the split module keeps float32 accumulators), and
  // the layer above with 256 output channels; then pieces of a batch in one dispatch of
  // convolution_tiled_pieces_fp16acc.
  if (!matrixUnitTiles()) {
    MESSAGE("no matrix units with 32-wide subgroups: the portable case below covers this device");
    return;
  }
  ScopedChoice restore;
  for (uint32_t images : {1u, 4u}) {
    Case c;
    c.descriptor = ConvolutionDescriptor::make(3, 3, 96, 256, NeuronDescriptor::relu());
    c.descriptor.accumulatorPrecision = AccumulatorPrecision::float16;
    c.padding = Padding::explicitPadding(1, 1, 1, 1);
    c.width = c.height = 28;
    c.sourceImages = images;
    c.format = ChannelFormat::float16;
    c.seed = 31;
    CAPTURE(images);
    runAccumulating(c);
  }

  const ChannelFormat format = ChannelFormat::float16;
  ConvolutionDescriptor d = ConvolutionDescriptor::make(1, 1, 64, 136, NeuronDescriptor::relu());
  d.accumulatorPrecision = AccumulatorPrecision::float16;
  Case c;
  c.descriptor = d;
  c.padding = Padding::explicitPadding(0, 0, 0, 0);
  c.width = 9;
  c.height = 7;
  c.format = format;
  const std::vector<float> w = randomWeights(d, 41), bias = randomFloats(136, 42);
  Convolution kernel(context(), d, w, bias);
  kernel.padding = c.padding;
  const std::vector<uint32_t> pieces{3, 3, 2};
  std::vector<Tensor> xs;
  std::vector<Image> sources, destinations;
  uint32_t seed = 43;
  for (uint32_t n : pieces) {
    xs.push_back(roundedTo(randomTensor(n, 64, 7, 9, ++seed), format));
    sources.push_back(makeImage(xs.back(), format, "x"));
    destinations.push_back(makePoisoned(context(), {9, 7, 136, n, format, ImageUsage::all, "y"}));
  }
  forceChoice(&detail::ChoiceOverrides::tile, "128x128");
  forceChoice(&detail::ChoiceOverrides::pieces, "one");
  runOnce([&](CommandBuffer& cb) { kernel.encodeBatch(cb, sources, destinations); });
  if (context().capabilities().imageArrayNonUniformIndexing)
    CHECK(kernel.configuration() == "128x128, 3 pieces, float16 accumulators");
  for (size_t k = 0; k < pieces.size(); ++k) {
    CAPTURE(k);
    Case piece = c;
    piece.sourceImages = pieces[k];
    compare(download(destinations[k]), reference(piece, xs[k], w, bias, 9, 7, pieces[k], 136),
            float16AccumulationTolerance(d));
  }
}

TEST_CASE("accumulate: paths without a float16 accumulator ignore the option, bit for bit") {
  // float32 storage everywhere, and float16 on devices without matrix units (lavapipe): the same
  // configuration and the same bits with either precision asked.
  std::vector<ChannelFormat> formats{ChannelFormat::float32};
  if (!context().capabilities().matrixUnits) formats.push_back(ChannelFormat::float16);
  for (ChannelFormat format : formats) {
    CAPTURE(std::string(toString(format)));
    for (uint32_t kernelSize : {1u, 3u}) {
      CAPTURE(kernelSize);
      ConvolutionDescriptor d =
          ConvolutionDescriptor::make(kernelSize, kernelSize, 24, 40, NeuronDescriptor::relu());
      const std::vector<float> w = randomWeights(d, 51), bias = randomFloats(40, 52);
      const Tensor x = roundedTo(randomTensor(2, 24, 12, 13, 53), format);
      Image source = makeImage(x, format, "x");
      std::vector<Tensor> results;
      std::vector<std::string> configurations;
      for (AccumulatorPrecision precision :
           {AccumulatorPrecision::float32, AccumulatorPrecision::float16}) {
        d.accumulatorPrecision = precision;
        Convolution kernel(context(), d, w, bias);
        Image y =
            makePoisoned(context(), {kernel.destinationWidth(13), kernel.destinationHeight(12), 40,
                                     2, format, ImageUsage::all, "y"});
        runOnce([&](CommandBuffer& cb) { kernel.encode(cb, source, y); });
        results.push_back(download(y));
        configurations.push_back(kernel.configuration());
        CHECK((kernel.descriptor().accumulatorPrecision == precision));
      }
      CHECK(configurations[0] == configurations[1]);
      CHECK(relativeL2(results[1], results[0]) == 0);
      CHECK_FALSE(hasNaN(results[1]));
    }
  }
}

TEST_CASE("accumulate: a Graph hands GraphOptions::accumulatorPrecision to its convolutions") {
  std::vector<float> w1 = randomFloats(16 * 8 * 9, 61, -0.5f, 0.5f), b1 = randomFloats(16, 62);
  std::vector<float> w2 = randomFloats(8 * 16, 63, -0.5f, 0.5f);
  const Tensor x = randomTensor(2, 8, 6, 7, 64);
  Image input = makeImage(x, ChannelFormat::float32, "x");
  std::vector<Tensor> outputs;
  for (AccumulatorPrecision precision :
       {AccumulatorPrecision::float32, AccumulatorPrecision::float16}) {
    CAPTURE(toString(precision));
    GraphOptions options;
    options.channelFormat = ChannelFormat::float32;  // no float16 accumulator: the same results
    options.accumulatorPrecision = precision;
    Graph g(context(), options);
    GraphTensor a = g.convolution(
        g.input("x", {7, 6, 8}), ConvolutionDescriptor::make(3, 3, 8, 16, NeuronDescriptor::relu()),
        w1, b1, Padding::explicitPadding(1, 1, 1, 1), "conv1");
    g.output(g.convolution(a, ConvolutionDescriptor::make(1, 1, 16, 8), w2, {}, {}, "conv2"), "y");
    CommandBuffer cb(context());
    const std::vector<Image> out = g.encode(cb, {input});
    cb.commit();
    cb.waitUntilCompleted();
    outputs.push_back(download(out[0]));
    const std::vector<std::string> lines = g.describe();
    const auto accumulating = std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
      return contains(l, "+ float16 accumulators");
    });
    CHECK(accumulating == (precision == AccumulatorPrecision::float16 ? 2 : 0));
  }
  CHECK(relativeL2(outputs[1], outputs[0]) == 0);
}
