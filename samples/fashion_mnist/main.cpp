// Fashion-MNIST "hello world", after Apple's MPSCNNHelloWorld: a small CNN trained with PyTorch
// (scripts/train-fashion-mnist.py), its weights shipped as MPS-order .dat files, classifies the
// 10,000 Fashion-MNIST test images.
//
//   vkcnn-fashion-mnist [--data DIR] [--weights DIR] [--images N] [--fp32] [--cpu-check]
//
// It builds the network with vkcnn's kernel API (no ONNX), classifies the test images on the
// default Vulkan device, prints the accuracy and checks it against PyTorch's own evaluation
// (within 0.1 points), image-by-image agreement and the first logits. --cpu-check also runs a CPU
// reference of the network straight from the .dat files (which checks the files and their MPS
// order end to end).
//
// ==================================== SPEC OF THE GPU SAMPLE =====================================
//
// Data (Debian package dataset-fashion-mnist, read with idx_reader.h):
//   /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz   10000 x 28 x 28 uint8
//   /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz   10000 uint8 in 0..9
//   classes: 0 T-shirt/top, 1 Trouser, 2 Pullover, 3 Dress, 4 Coat, 5 Sandal, 6 Shirt,
//            7 Sneaker, 8 Bag, 9 Ankle boot
//
// Input: each image is a 28x28 image of 1 feature channel whose value is pixel/255, nothing else
// (no mean, no std). An unorm8 Image written with the raw bytes (HostDataType::uint8) holds exactly
// that, and temporaries made from a unorm8 source are float16; a float16 Image written with
// writeFloats(pixel / 255.f) holds it rounded to 11 bits (as the simulation in accuracy.txt does).
//
// Layers. Weights in samples/fashion_mnist/weights/, raw little-endian float32 in MPS order
// weight[outputChannels][kernelHeight][kernelWidth][inputChannels], bias[outputChannels]. Kernel
// names are those of the APIs in progress (vkcnn/convolution.h, pooling.h, softmax.h).
//
//   conv1  Convolution(ConvolutionDescriptor::make(5, 5, 1, 16, NeuronDescriptor::relu()))
//          conv1_weights.dat 16x5x5x1, conv1_bias.dat 16                        -> 28x28x16
//          stride 1; PyTorch's padding 2 is the mpsDefault padding with offset (0, 0): the
//          window's left edge is at x - (5 >> 1) = x - 2, zeros outside the image.
//   pool1  PoolingMax(PoolingDescriptor::of(2, 2, 2, 2))                           -> 14x14x16
//          window [2x, 2x+1] x [2y, 2y+1]: mpsDefault moves the window by -(2 >> 1) = -1, so
//          set offset = {1, 1, 0}; or use Padding::explicitPadding(0, 0, 0, 0).
//   conv2  Convolution(make(5, 5, 16, 32, relu)), placed as conv1                 -> 14x14x32
//          conv2_weights.dat 32x5x5x16, conv2_bias.dat 32
//   pool2  PoolingMax 2x2 stride 2, placed as pool1                               -> 7x7x32
//   fc1    FullyConnected(make(7, 7, 32, 64, relu)): the kernel spans the source  -> 1x1x64
//          fc1_weights.dat 64x7x7x32, fc1_bias.dat 64
//   fc2    FullyConnected(make(1, 1, 64, 10))                                     -> 1x1x10 logits
//          fc2_weights.dat 10x1x1x64, fc2_bias.dat 10
//   prob   Softmax over the 10 channels                                           -> 1x1x10
//   class = argmax of the 10 probabilities (the first index on ties, as torch.argmax).
//
// (PyTorch's fc1 is Linear(1568, 64) over the NCHW-flattened pool2 output, index c*49 + h*7 + w;
// the exporter reshapes it to [64][32][7][7] and permutes it to [64][7][7][32]. ReLU and 2x2 max
// pooling commute, so conv + fused ReLU, then pooling, is exactly PyTorch's graph.)
//
// Batching: a temporary destination has as many images as its source (or clipRect.depth), and
// conv2's 32 channels take 8 array layers per image, so a chunk holds at most
// B = Image::maxNumberOfImages(context, 32) images (256 where the device allows 2048 layers).
// Per chunk: write its images into an Image {28, 28, 1, B} (unorm8 or float16), encode conv1 ..
// fc2 into temporaries (each read once: readCount 1) and the softmax into a float32 Image
// {1, 1, 10, B} (float32 so argmax meets no float16 ties), commit, wait, read back. The last
// chunk holds 10000 mod B images (16 when B is 256): size its images to it or set clipRect.depth.
//
// Reference files written by the training script next to the weights:
//   test_predictions.u8     10000 uint8: PyTorch's class for each test image
//   test_logits_first8.f32  8x10 float32: PyTorch's logits (fc2 output, before softmax) of test
//                           images 0..7 (compare with the fc2 output, or softmax them first)
//   accuracy.txt            first line "accuracy XX.XX": PyTorch's test accuracy in percent
//
// Expected results of the GPU sample:
//   - accuracy within 0.1 points of accuracy.txt's (the float32 model: 90.40%, 9040 images);
//   - agreement with test_predictions.u8 on at least 9990 of 10000 images. The training script's
//     float16-storage simulation (float32 weights and sums, every image between kernels rounded
//     to float16) scores 90.41% and agrees on 9999;
//   - the first 8 logits (fc2's output) within 0.05 of test_logits_first8.f32: the simulation
//     differs by at most 0.0058 on them (their magnitudes reach 16.7), 0.0141 over all images.
// The CPU reference below (float32) reproduces PyTorch exactly: 90.40%, agreeing on all 10000,
// first 8 logits within 1e-5.
//
// =================================================================================================

#include <vkcnn/vkcnn.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "idx_reader.h"

namespace fashion_mnist {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .dat files are little-endian float32 and are read as they lie");

constexpr uint32_t kSide = 28;
constexpr uint32_t kClasses = 10;
constexpr double kAccuracyTolerance = 0.1;  // points of percent
constexpr uint32_t kMinimumAgreement = 9990;

struct Options {
  std::filesystem::path data = "/usr/share/datasets/fashion-mnist";
  std::filesystem::path weights;
  uint32_t images = 0;  // 0: all
  bool fp32 = false;    // float32 intermediates instead of float16
  bool cpuCheck = false;
  bool help = false;
};

[[noreturn]] void fail(const std::string& message) {
  throw std::runtime_error(message);
}

// A command line that does not make sense: exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* kUsage =
    "usage: vkcnn-fashion-mnist [--data DIR] [--weights DIR] [--images N] [--fp32] [--cpu-check]\n"
    "\n"
    "Classifies the Fashion-MNIST test images with a small CNN built from vkcnn's kernels and\n"
    "checks the result against PyTorch's.\n"
    "\n"
    "  --data DIR     the dataset (default VKCNN_FASHION_MNIST_DIR, else\n"
    "                 /usr/share/datasets/fashion-mnist from Debian's dataset-fashion-mnist)\n"
    "  --weights DIR  the MPS-order .dat weights (default: the source tree's)\n"
    "  --images N     the first N test images only (default: all 10000)\n"
    "  --fp32         float32 intermediate images (default float16)\n"
    "  --cpu-check    also runs a CPU reference of the network from the .dat files\n";

std::filesystem::path defaultWeightsDirectory() {
  // The source tree's copy; from a carried build, the checkout's copy below the working directory.
  std::filesystem::path built = VKCNN_FASHION_MNIST_WEIGHTS;
  if (std::filesystem::exists(built)) return built;
  return "samples/fashion_mnist/weights";
}

Options parseOptions(int argc, char** argv) {
  Options options;
  if (const char* dir = std::getenv("VKCNN_FASHION_MNIST_DIR"); dir && *dir) options.data = dir;
  options.weights = defaultWeightsDirectory();
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg == "--data") {
      options.data = value();
    } else if (arg == "--weights") {
      options.weights = value();
    } else if (arg == "--images") {
      const std::string text = value();
      char* end = nullptr;
      const unsigned long n = std::strtoul(text.c_str(), &end, 10);
      if (text.empty() || *end || text[0] == '-' || n < 1 || n > 10000)
        throw UsageError("--images needs a number from 1 to 10000, not '" + text + "'");
      options.images = uint32_t(n);
    } else if (arg == "--fp32") {
      options.fp32 = true;
    } else if (arg == "--cpu-check") {
      options.cpuCheck = true;
    } else {
      throw UsageError("unknown option '" + arg + "'");
    }
  }
  return options;
}

// A whole binary file; its size must be `expectedBytes`.
std::vector<char> readBinary(const std::filesystem::path& path, size_t expectedBytes) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) fail("cannot open " + path.string());
  const auto size = size_t(file.tellg());
  if (size != expectedBytes) {
    fail(path.string() + " has " + std::to_string(size) + " bytes where " +
         std::to_string(expectedBytes) + " are expected");
  }
  std::vector<char> bytes(size);
  file.seekg(0);
  if (!file.read(bytes.data(), std::streamsize(size))) fail("cannot read " + path.string());
  return bytes;
}

std::vector<float> readFloats(const std::filesystem::path& path, size_t count) {
  std::vector<char> bytes = readBinary(path, count * sizeof(float));
  std::vector<float> values(count);
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

// One convolution or fully-connected layer: weights in MPS order [out][kh][kw][in].
struct Layer {
  uint32_t out = 0, kh = 0, kw = 0, in = 0;
  std::vector<float> weights, bias;
  // The same weights as [kh][kw][in][out], so the CPU reference's inner loop runs over outputs.
  std::vector<float> weightsByOutput;

  static Layer load(const std::filesystem::path& dir, const std::string& name, uint32_t out,
                    uint32_t kh, uint32_t kw, uint32_t in) {
    Layer l{out, kh, kw, in};
    l.weights = readFloats(dir / (name + "_weights.dat"), size_t(out) * kh * kw * in);
    l.bias = readFloats(dir / (name + "_bias.dat"), out);
    l.weightsByOutput.resize(l.weights.size());
    for (uint32_t o = 0; o < out; ++o) {
      for (size_t k = 0; k < size_t(kh) * kw * in; ++k) {
        l.weightsByOutput[k * out + o] = l.weights[o * size_t(kh) * kw * in + k];
      }
    }
    return l;
  }
  size_t bytes() const { return (weights.size() + bias.size()) * sizeof(float); }
};

struct Model {
  Layer conv1, conv2, fc1, fc2;

  static Model load(const std::filesystem::path& dir) {
    return {Layer::load(dir, "conv1", 16, 5, 5, 1), Layer::load(dir, "conv2", 32, 5, 5, 16),
            Layer::load(dir, "fc1", 64, 7, 7, 32), Layer::load(dir, "fc2", 10, 1, 1, 64)};
  }
};

// An image in HWC order (channels innermost), as MPS weights index their inputs.
struct Tensor {
  uint32_t h = 0, w = 0, c = 0;
  std::vector<float> data;
  Tensor(uint32_t h, uint32_t w, uint32_t c) : h(h), w(w), c(c), data(size_t(h) * w * c) {}
  float* at(uint32_t y, uint32_t x) { return data.data() + (size_t(y) * w + x) * c; }
  const float* at(uint32_t y, uint32_t x) const { return data.data() + (size_t(y) * w + x) * c; }
};

// Convolution of stride 1 whose window's top-left is at (y - pad, x - pad), zeros outside; the
// output has h + 2 pad - kh + 1 rows. float32 accumulation, bias first, optional ReLU.
Tensor convolve(const Tensor& src, const Layer& l, uint32_t pad, bool relu) {
  Tensor dst(src.h + 2 * pad - l.kh + 1, src.w + 2 * pad - l.kw + 1, l.out);
  for (uint32_t y = 0; y < dst.h; ++y) {
    for (uint32_t x = 0; x < dst.w; ++x) {
      float* acc = dst.at(y, x);
      std::copy(l.bias.begin(), l.bias.end(), acc);
      for (uint32_t ky = 0; ky < l.kh; ++ky) {
        const int64_t sy = int64_t(y) + ky - pad;
        if (sy < 0 || sy >= src.h) continue;
        for (uint32_t kx = 0; kx < l.kw; ++kx) {
          const int64_t sx = int64_t(x) + kx - pad;
          if (sx < 0 || sx >= src.w) continue;
          const float* in = src.at(uint32_t(sy), uint32_t(sx));
          const float* w = l.weightsByOutput.data() + (size_t(ky) * l.kw + kx) * l.in * l.out;
          for (uint32_t i = 0; i < l.in; ++i, w += l.out) {
            const float v = in[i];
            for (uint32_t o = 0; o < l.out; ++o) acc[o] += v * w[o];
          }
        }
      }
      if (relu) {
        for (uint32_t o = 0; o < l.out; ++o) acc[o] = std::max(acc[o], 0.0f);
      }
    }
  }
  return dst;
}

Tensor maxPool2x2(const Tensor& src) {
  Tensor dst(src.h / 2, src.w / 2, src.c);
  for (uint32_t y = 0; y < dst.h; ++y) {
    for (uint32_t x = 0; x < dst.w; ++x) {
      float* d = dst.at(y, x);
      const float* a = src.at(2 * y, 2 * x);
      const float* b = src.at(2 * y, 2 * x + 1);
      const float* c = src.at(2 * y + 1, 2 * x);
      const float* e = src.at(2 * y + 1, 2 * x + 1);
      for (uint32_t ch = 0; ch < src.c; ++ch) d[ch] = std::max({a[ch], b[ch], c[ch], e[ch]});
    }
  }
  return dst;
}

// The network on the CPU, from the MPS-order weights: the 10 logits (fc2's output) of one image.
std::array<float, kClasses> cpuLogits(const Model& m, const uint8_t* pixels) {
  Tensor x(kSide, kSide, 1);
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = float(pixels[i]) / 255.0f;
  x = maxPool2x2(convolve(x, m.conv1, 2, true));
  x = maxPool2x2(convolve(x, m.conv2, 2, true));
  x = convolve(x, m.fc1, 0, true);  // 7x7 window over the 7x7 source: 1x1x64
  x = convolve(x, m.fc2, 0, false);
  std::array<float, kClasses> logits;
  std::copy(x.data.begin(), x.data.end(), logits.begin());
  return logits;
}

template <size_t N>
uint32_t argmax(const std::array<float, N>& v) {
  return uint32_t(std::max_element(v.begin(), v.end()) - v.begin());  // first on ties
}

// The network with vkcnn's kernels, built once from the MPS-order weights.
struct GpuNetwork {
  vkcnn::Context& context;
  vkcnn::ChannelFormat format;
  vkcnn::Convolution conv1, conv2;
  vkcnn::PoolingMax pool1, pool2;
  vkcnn::FullyConnected fc1, fc2;
  vkcnn::Softmax softmax;
  vkcnn::BufferToImage toImage;
  vkcnn::ImageToBuffer toBuffer;

  static vkcnn::PoolingDescriptor twoByTwo() {
    // PyTorch's MaxPool2d(2): windows [2x, 2x+1], no padding.
    return vkcnn::PoolingDescriptor::of(2, 2, 2, 2, vkcnn::Padding::explicitPadding(0, 0, 0, 0));
  }

  GpuNetwork(vkcnn::Context& c, const Model& m, vkcnn::ChannelFormat f)
      : context(c),
        format(f),
        conv1(c, vkcnn::ConvolutionDescriptor::make(5, 5, 1, 16, vkcnn::NeuronDescriptor::relu()),
              m.conv1.weights, m.conv1.bias),
        conv2(c, vkcnn::ConvolutionDescriptor::make(5, 5, 16, 32, vkcnn::NeuronDescriptor::relu()),
              m.conv2.weights, m.conv2.bias),
        pool1(c, twoByTwo()),
        pool2(c, twoByTwo()),
        fc1(c, vkcnn::ConvolutionDescriptor::make(7, 7, 32, 64, vkcnn::NeuronDescriptor::relu()),
            m.fc1.weights, m.fc1.bias),
        fc2(c, vkcnn::ConvolutionDescriptor::make(1, 1, 64, 10), m.fc2.weights, m.fc2.bias),
        softmax(c),
        toImage(c),
        toBuffer(c) {}

  // Classifies `count` images (pixels 28x28 each): logits and probabilities, count x 10 each.
  void classify(const uint8_t* pixels, uint32_t count, std::vector<float>& logits,
                std::vector<float>& probabilities) {
    std::vector<float> input(size_t(count) * kSide * kSide);
    for (size_t i = 0; i < input.size(); ++i) input[i] = float(pixels[i]) / 255.0f;
    vkcnn::Buffer inputBuffer(context, input.size() * sizeof(float), "pixels");
    inputBuffer.writeFloats(input);
    vkcnn::Buffer logitBuffer(context, size_t(count) * kClasses * sizeof(float), "logits");
    vkcnn::Buffer probabilityBuffer(context, size_t(count) * kClasses * sizeof(float),
                                    "probabilities");

    vkcnn::CommandBuffer cb(context, "fashion-mnist");
    vkcnn::TemporaryImage x(cb, {kSide, kSide, 1, count, format, vkcnn::ImageUsage::all, "input"});
    toImage.encode(cb, inputBuffer, x);
    vkcnn::TemporaryImage h = pool1.encode(cb, conv1.encode(cb, x));
    h = pool2.encode(cb, conv2.encode(cb, h));
    vkcnn::TemporaryImage l = fc2.encode(cb, fc1.encode(cb, h));
    l.setReadCount(2);  // the softmax and the copy of the logits
    toBuffer.encode(cb, l, logitBuffer);
    vkcnn::TemporaryImage p = softmax.encode(cb, l);
    toBuffer.encode(cb, p, probabilityBuffer);
    cb.commit();
    cb.waitUntilCompleted();
    logits = logitBuffer.readFloats();
    probabilities = probabilityBuffer.readFloats();
  }
};

double referenceAccuracy(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::string word;
  double accuracy = 0;
  if (!(file >> word >> accuracy) || word != "accuracy") {
    fail(path.string() + " does not start with \"accuracy XX.XX\"");
  }
  return accuracy;
}

int run(const Options& options) {
  IdxImages images = readIdxImages((options.data / "t10k-images-idx3-ubyte.gz").string());
  std::vector<uint8_t> labels =
      readIdxLabels((options.data / "t10k-labels-idx1-ubyte.gz").string());
  if (images.rows != kSide || images.columns != kSide || labels.size() != images.count) {
    fail("expected 28x28 images and one label per image, got " + std::to_string(images.count) +
         " images of " + std::to_string(images.columns) + "x" + std::to_string(images.rows) +
         " and " + std::to_string(labels.size()) + " labels");
  }
  std::printf("read %u test images of %ux%u and %zu labels from %s\n", images.count, images.columns,
              images.rows, labels.size(), options.data.string().c_str());

  const Model model = Model::load(options.weights);
  const double expectedAccuracy = referenceAccuracy(options.weights / "accuracy.txt");
  std::vector<char> predictionBytes =
      readBinary(options.weights / "test_predictions.u8", images.count);
  const std::vector<float> referenceLogits =
      readFloats(options.weights / "test_logits_first8.f32", 8 * kClasses);
  std::printf(
      "weights from %s: conv1 %zu, conv2 %zu, fc1 %zu, fc2 %zu bytes; PyTorch's accuracy %.2f%%\n",
      options.weights.string().c_str(), model.conv1.bytes(), model.conv2.bytes(), model.fc1.bytes(),
      model.fc2.bytes(), expectedAccuracy);

  const uint32_t count = options.images ? std::min(options.images, images.count) : images.count;
  auto compare = [&](const char* what, const std::vector<uint8_t>& predicted,
                     const std::vector<std::array<float, kClasses>>& firstLogits, double seconds,
                     double logitTolerance) {
    uint32_t correct = 0, agree = 0;
    for (uint32_t i = 0; i < count; ++i) {
      correct += predicted[i] == labels[i];
      agree += predicted[i] == uint8_t(predictionBytes[i]);
    }
    double logitError = 0;
    for (size_t i = 0; i < firstLogits.size(); ++i)
      for (uint32_t c = 0; c < kClasses; ++c)
        logitError = std::max(
            logitError, double(std::abs(firstLogits[i][c] - referenceLogits[i * kClasses + c])));
    const double accuracy = 100.0 * correct / count;
    std::printf(
        "%s: accuracy %.2f%% (%u of %u), agrees with PyTorch on %u of %u, first %zu "
        "logits within %.1e; %.2f s\n",
        what, accuracy, correct, count, agree, count, firstLogits.size(), logitError, seconds);
    bool ok = logitError < logitTolerance;
    if (count == images.count)
      ok = ok && std::abs(accuracy - expectedAccuracy) <= kAccuracyTolerance &&
           agree >= kMinimumAgreement;
    return ok;
  };

  // The network on the GPU, in chunks that fit the device's array-layer limit.
  vkcnn::Context context;
  const auto format = options.fp32 ? vkcnn::ChannelFormat::float32 : vkcnn::ChannelFormat::float16;
  // VKCNN_DEVICE_PROFILE=mobile (the suite's sample_fashion_mnist_mobile) says so here.
  const bool native = context.capabilities().profile == vkcnn::DeviceProfile::native;
  std::printf("device: %s%s; %s intermediates\n", context.capabilities().deviceName.c_str(),
              native ? "" : " (device profile mobile)", vkcnn::toString(format));
  GpuNetwork network(context, model, format);
  // The widest image (fc1: 64 channels, 16 layers per image) bounds the images per chunk.
  const uint32_t chunk = vkcnn::Image::maxNumberOfImages(context, 64);
  std::vector<uint8_t> gpuPredicted(count);
  std::vector<std::array<float, kClasses>> gpuLogits(std::min<uint32_t>(count, 8));
  auto start = std::chrono::steady_clock::now();
  for (uint32_t first = 0; first < count; first += chunk) {
    const uint32_t n = std::min(chunk, count - first);
    std::vector<float> logits, probabilities;
    network.classify(images.image(first), n, logits, probabilities);
    for (uint32_t i = 0; i < n; ++i) {
      std::array<float, kClasses> p;
      std::copy_n(probabilities.begin() + long(i) * kClasses, kClasses, p.begin());
      gpuPredicted[first + i] = uint8_t(argmax(p));
      if (first + i < gpuLogits.size())
        std::copy_n(logits.begin() + long(i) * kClasses, kClasses, gpuLogits[first + i].begin());
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool ok = compare("vkcnn", gpuPredicted, gpuLogits, seconds, 0.05);
  if (context.validationMessageCount()) {
    std::printf("the validation layer reported %llu problem(s)\n",
                (unsigned long long)context.validationMessageCount());
    ok = false;
  }

  if (options.cpuCheck) {
    // CPU reference: the whole network from the .dat files, on every hardware thread.
    std::vector<uint8_t> predicted(count);
    std::vector<std::array<float, kClasses>> firstLogits(std::min<uint32_t>(count, 8));
    start = std::chrono::steady_clock::now();
    const uint32_t threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 16u));
    {
      std::vector<std::jthread> workers;
      for (uint32_t t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
          for (uint32_t i = t; i < count; i += threads) {
            auto logits = cpuLogits(model, images.image(i));
            predicted[i] = uint8_t(argmax(logits));
            if (i < firstLogits.size()) firstLogits[i] = logits;
          }
        });
      }
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ok = compare("CPU reference (float32, MPS-order weights)", predicted, firstLogits, seconds,
                 1e-3) &&
         ok;
  }
  std::printf("%s\n", ok ? "ok" : "MISMATCH with PyTorch's reference");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace fashion_mnist

int main(int argc, char** argv) {
  try {
    const fashion_mnist::Options options = fashion_mnist::parseOptions(argc, argv);
    if (options.help) {
      std::fputs(fashion_mnist::kUsage, stdout);
      return 0;
    }
    return fashion_mnist::run(options);
  } catch (const fashion_mnist::UsageError& e) {
    std::fprintf(stderr, "vkcnn-fashion-mnist: %s\n%s", e.what(), fashion_mnist::kUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkcnn-fashion-mnist: %s\n", e.what());
    return 1;
  }
}
