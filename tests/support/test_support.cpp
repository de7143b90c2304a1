#include "test_support.h"

#include <atomic>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>

#include "platform/platform.h"

#if defined(_WIN32)
int setenv(const char* name, const char* value, int overwrite) {
  if (overwrite || !std::getenv(name)) vkcnn::platform::setEnvironment(name, value);
  return 0;
}

int unsetenv(const char* name) {
  vkcnn::platform::setEnvironment(name, nullptr);
  return 0;
}
#endif

namespace vkcnn::test {

PFN_vkGetInstanceProcAddr vulkanLoader() {
  // Never closed: the process keeps its reference until it exits.
  static const PFN_vkGetInstanceProcAddr gipa = [] {
    void* library = nullptr;
    return reinterpret_cast<PFN_vkGetInstanceProcAddr>(platform::openVulkanLoader(&library));
  }();
  return gipa;
}

namespace {
std::atomic<uint64_t> messages{0};

void onLog(LogSeverity severity, std::string_view message) {
  if (severity < LogSeverity::warning) return;
  messages++;
  std::fprintf(stderr, "vkcnn test log: %.*s\n", int(message.size()), message.data());
  // Fails the running test case too (the message usually arrives on the test's own thread).
  if (doctest::is_running_in_test)
    ADD_FAIL_CHECK_AT(__FILE__, __LINE__, "validation/log message: " << std::string(message));
}
}  // namespace

ContextOptions testContextOptions(const ContextOptions& options) {
  ContextOptions o = options;
  o.validation = kValidation;
  o.log = onLog;
  return o;
}

Context makeContext(const ContextOptions& options) {
  return Context(testContextOptions(options));
}

namespace {
std::unique_ptr<Context>& sharedContext() {
  static std::unique_ptr<Context> shared;
  return shared;
}
}  // namespace

Context& context() {
  if (!sharedContext()) sharedContext() = std::make_unique<Context>(makeContext());
  return *sharedContext();
}

void releaseContext() {
  sharedContext().reset();
}

uint64_t validationMessages() {
  return messages.load();
}

Tensor randomTensor(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t seed, double lo,
                    double hi) {
  Tensor t(n, c, h, w);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (double& v : t.data) v = dist(rng);
  return t;
}

std::vector<float> randomFloats(size_t count, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

double roundToHalf(double value) {
  if (std::isnan(value) || std::isinf(value) || value == 0) return value;
  double x = double(float(value));  // host data is float32 first
  int exponent;
  std::frexp(x, &exponent);  // x = m * 2^exponent, 0.5 <= |m| < 1
  // 11 significant bits for normals; subnormals share the fixed step 2^-24.
  const int step = std::max(exponent - 11, -24);
  double rounded = std::nearbyint(std::ldexp(x, -step));  // ties to even (default rounding mode)
  double result = std::ldexp(rounded, step);
  if (std::abs(result) > 65504.0) result = std::copysign(65504.0, result);
  return result;
}

Tensor roundedTo(const Tensor& t, ChannelFormat format) {
  Tensor r = t;
  for (double& v : r.data) {
    switch (format) {
      case ChannelFormat::float32:
        v = double(float(v));
        break;
      case ChannelFormat::float16:
        v = roundToHalf(v);
        break;
      case ChannelFormat::unorm8:
        v = std::nearbyint(std::clamp(v, 0.0, 1.0) * 255.0) / 255.0;
        break;
    }
  }
  return r;
}

void upload(Image& image, const Tensor& t) {
  REQUIRE(t.n == image.numberOfImages());
  REQUIRE(t.c == image.featureChannels());
  REQUIRE(t.h == image.height());
  REQUIRE(t.w == image.width());
  const size_t plane = size_t(t.c) * t.h * t.w;
  std::vector<float> values(plane);
  for (uint32_t i = 0; i < t.n; ++i) {
    for (size_t k = 0; k < plane; ++k) values[k] = float(t.data[i * plane + k]);
    image.writeFloats(values, DataLayout::FeatureChannelsxHeightxWidth, i);
  }
}

Image makeImage(const Tensor& t, ChannelFormat format, const std::string& label) {
  ImageDescriptor d{t.w, t.h, t.c, t.n, format};
  d.label = label;
  Image image(context(), d);
  upload(image, t);
  return image;
}

Tensor download(const Image& image) {
  Tensor t(image.numberOfImages(), image.featureChannels(), image.height(), image.width());
  const size_t plane = size_t(t.c) * t.h * t.w;
  for (uint32_t i = 0; i < t.n; ++i) {
    std::vector<float> values = image.readFloats(DataLayout::FeatureChannelsxHeightxWidth, i);
    for (size_t k = 0; k < plane; ++k) t.data[i * plane + k] = values[k];
  }
  return t;
}

void fill(Image& image, float value) {
  std::vector<float> values(size_t(image.width()) * image.height() * image.featureChannels(),
                            value);
  for (uint32_t i = 0; i < image.numberOfImages(); ++i)
    image.writeFloats(values, DataLayout::HeightxWidthxFeatureChannels, i);
}

Image makePoisoned(const Context& ctx, ImageDescriptor descriptor) {
  Image image(ctx, descriptor);
  fill(image, std::numeric_limits<float>::quiet_NaN());
  return image;
}

bool hasNaN(const Tensor& t) {
  for (double v : t.data)
    if (std::isnan(v)) return true;
  return false;
}

double relativeL2(const Tensor& actual, const Tensor& expected) {
  REQUIRE(actual.data.size() == expected.data.size());
  double diff = 0, norm = 0;
  for (size_t i = 0; i < actual.data.size(); ++i) {
    if (std::isnan(actual.data[i]) || std::isnan(expected.data[i]))
      return std::numeric_limits<double>::infinity();
    const double d = actual.data[i] - expected.data[i];
    diff += d * d;
    norm += expected.data[i] * expected.data[i];
  }
  if (norm == 0) return std::sqrt(diff);
  return std::sqrt(diff / norm);
}

void compareSpecials(const std::vector<double>& actual, const std::vector<double>& expected,
                     double tolerance) {
  REQUIRE(actual.size() == expected.size());
  size_t nan = 0, wrong = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    bool ok;
    if (std::isnan(e)) {
      ok = std::isnan(a);
      nan++;
    } else if (std::isinf(e)) {
      ok = a == e;
    } else {
      ok = std::isfinite(a) && std::abs(a - e) <= tolerance * std::max(1.0, std::abs(e));
    }
    if (!ok && wrong++ < 8) FAIL_CHECK("element " << i << ": " << a << ", expected " << e);
  }
  CHECK_MESSAGE(wrong == 0, wrong << " of " << actual.size() << " elements differ");
  // A check of specials that saw none would prove nothing.
  CHECK_MESSAGE(nan > 0, "the reference has no NaN");
}

void sprinkleSpecials(std::vector<double>& values, size_t every, size_t first) {
  const double specials[3] = {std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity()};
  for (size_t i = first, k = 0; i < values.size(); i += every, ++k) values[i] = specials[k % 3];
}

void compare(const Tensor& actual, const Tensor& expected, double tolerance) {
  REQUIRE(actual.data.size() == expected.data.size());
  size_t touchedOutside = 0, missing = 0;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < actual.data.size(); ++i) {
    const double a = actual.data[i], e = expected.data[i];
    if (std::isnan(e)) {
      touchedOutside += !std::isnan(a);
      continue;
    }
    if (std::isnan(a)) {
      ++missing;
      continue;
    }
    diff += (a - e) * (a - e);
    norm += e * e;
  }
  CHECK_MESSAGE(touchedOutside == 0, touchedOutside << " elements outside the clip were written");
  const bool anyExpected = std::any_of(expected.data.begin(), expected.data.end(),
                                       [](double v) { return !std::isnan(v); });
  CHECK_MESSAGE(anyExpected, "the reference expects no written element: nothing would be compared");
  CHECK_MESSAGE(missing == 0, missing << " elements inside the clip are NaN (not written)");
  const double error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  CHECK_MESSAGE(error <= tolerance, "relative L2 error " << error << " > " << tolerance);
}

double tolerance(ChannelFormat format) {
  return format == ChannelFormat::float32 ? 1e-5 : 2e-3;
}

NeuronDescriptor sampleNeuron(NeuronType type, uint32_t channels) {
  switch (type) {
    case NeuronType::linear:
      return NeuronDescriptor::of(type, 1.5f, -0.25f);
    case NeuronType::hardSigmoid:
      return NeuronDescriptor::of(type, 0.2f, 0.5f);
    case NeuronType::tanh:
      return NeuronDescriptor::of(type, 1.7f, 0.66f);
    case NeuronType::softplus:
      return NeuronDescriptor::of(type, 1.0f, 2.0f);
    case NeuronType::elu:
      return NeuronDescriptor::of(type, 0.8f);
    case NeuronType::leakyRelu:
      return NeuronDescriptor::of(type, 0.1f);
    case NeuronType::clamp:
      return NeuronDescriptor::of(type, -0.5f, 0.6f);
    case NeuronType::power:
      return NeuronDescriptor::of(type, 0.5f, 3.0f, 1.5f);
    case NeuronType::exponential:
      return NeuronDescriptor::of(type, 0.5f, 0.1f, 2.0f);
    case NeuronType::logarithm:
      return NeuronDescriptor::of(type, 0.5f, 3.0f, 0.0f);
    case NeuronType::selu:
      return NeuronDescriptor::of(type, 1.6732632f, 1.0507009f);
    case NeuronType::prelu: {
      NeuronDescriptor n{type};
      for (uint32_t c = 0; c < channels; ++c) n.preluSlopes.push_back(0.05f * float(c + 1));
      return n;
    }
    default:
      return NeuronDescriptor::of(type);
  }
}

std::string writeTemporaryDatFile(const std::vector<float>& values, const std::string& name) {
  static std::atomic<int> counter{0};
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("vkcnn-test-" + std::to_string(platform::processId()));
  std::filesystem::create_directories(dir);
  std::filesystem::path path = dir / (std::to_string(counter++) + "-" + name + ".dat");
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * 4));
  return path.string();
}

}  // namespace vkcnn::test
