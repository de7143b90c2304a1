// Shared test helpers: the validation-checked Context, random data, tensors on the host in double
// precision, comparison by relative L2 error, and poisoning of destinations.
#pragma once

#include <doctest/doctest.h>
// The kernel API, not all of vkcnn.h: vkcnn::Tensor (tensor.h) would clash with test::Tensor
// where a test uses both namespaces; tests of Tensors include tensor.h themselves.
#include <vkcnn/arithmetic.h>
#include <vkcnn/buffer.h>
#include <vkcnn/command_buffer.h>
#include <vkcnn/concat.h>
#include <vkcnn/context.h>
#include <vkcnn/convolution.h>
#include <vkcnn/convolution_transpose.h>
#include <vkcnn/error.h>
#include <vkcnn/graph.h>
#include <vkcnn/image.h>
#include <vkcnn/kernel.h>
#include <vkcnn/neuron.h>
#include <vkcnn/normalization.h>
#include <vkcnn/onnx.h>
#include <vkcnn/padding.h>
#include <vkcnn/pooling.h>
#include <vkcnn/rearrange.h>
#include <vkcnn/resize.h>
#include <vkcnn/softmax.h>
#include <vkcnn/squeeze_excitation.h>

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace vkcnn {
// So doctest can print vkcnn's enums in failed comparisons.
inline std::ostream& operator<<(std::ostream& o, CommandBufferStatus v) {
  return o << toString(v);
}
inline std::ostream& operator<<(std::ostream& o, ErrorCode v) {
  return o << toString(v);
}
inline std::ostream& operator<<(std::ostream& o, ChannelFormat v) {
  return o << toString(v);
}
inline std::ostream& operator<<(std::ostream& o, DeviceType v) {
  return o << toString(v);
}
inline std::ostream& operator<<(std::ostream& o, NeuronType v) {
  return o << toString(v);
}
}  // namespace vkcnn

// The tests set environment overrides with POSIX's setenv and unsetenv; a Windows build gets them
// here (test_support.cpp, through the platform layer).
#if defined(_WIN32)
int setenv(const char* name, const char* value, int overwrite);
int unsetenv(const char* name);
#endif

namespace vkcnn::test {

// Whether the validation layer watches the tests (VKCNN_TEST_VALIDATION in CMake: off in a Windows
// build, which runs under Wine without a layer; the Linux suite covers validation there).
inline constexpr bool kValidation = VKCNN_TEST_VALIDATION;

// vkGetInstanceProcAddr of the system's Vulkan loader, opened once for the process, for
// tests that create Vulkan objects of their own.
PFN_vkGetInstanceProcAddr vulkanLoader();

// A Context on the default device (lavapipe where there is no GPU, or VKCNN_DEVICE) with the
// validation layer and synchronization validation on (kValidation); any message fails the
// running test.
Context& context();

// Runs an imported one-input, one-output ONNX model on the shared Context from float32 input
// images and returns its output in ONNX order.
std::vector<float> runOnnxImport(OnnxImport imported, const std::vector<float>& input);
// Destroys the shared Context (the test main does, before it counts validation messages, so
// leaks reported at vkDestroyDevice fail the run too).
void releaseContext();
// A new Context with the same checks (for tests that need their own).
Context makeContext(const ContextOptions& options = {});
// `options` with the suite's validation setting and log (every message a failure), for Contexts
// that something else creates (a SessionPool's).
ContextOptions testContextOptions(const ContextOptions& options = {});
// Validation messages seen by every checked Context of this process.
uint64_t validationMessages();

// A host tensor [numberOfImages][featureChannels][height][width] in double precision.
struct Tensor {
  uint32_t n = 1, c = 1, h = 1, w = 1;
  std::vector<double> data;

  Tensor() = default;
  Tensor(uint32_t n, uint32_t c, uint32_t h, uint32_t w, double value = 0)
      : n(n), c(c), h(h), w(w), data(size_t(n) * c * h * w, value) {}
  double& at(uint32_t i, uint32_t ch, uint32_t y, uint32_t x) {
    return data[((size_t(i) * c + ch) * h + y) * w + x];
  }
  double at(uint32_t i, uint32_t ch, uint32_t y, uint32_t x) const {
    return data[((size_t(i) * c + ch) * h + y) * w + x];
  }
  // Zero outside the image (edge mode zero).
  double atOrZero(uint32_t i, uint32_t ch, int64_t y, int64_t x) const {
    if (y < 0 || x < 0 || y >= int64_t(h) || x >= int64_t(w)) return 0;
    return at(i, ch, uint32_t(y), uint32_t(x));
  }
};

// Uniform random values in [lo, hi), from a seed so failures repeat.
Tensor randomTensor(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t seed, double lo = -1,
                    double hi = 1);
std::vector<float> randomFloats(size_t count, uint32_t seed, float lo = -1, float hi = 1);

// float16 rounding as documented (nearest even, finite overflow saturates to 65504), computed
// independently of the library with frexp/nearbyint.
double roundToHalf(double value);
// Values as the storage format holds them (float16 rounding), so references see what the GPU sees.
Tensor roundedTo(const Tensor& t, ChannelFormat format);

// Creates an Image holding `t` (all images, all channels).
Image makeImage(const Tensor& t, ChannelFormat format, const std::string& label = {});
void upload(Image& image, const Tensor& t);
// Reads every image and channel of `image` back.
Tensor download(const Image& image);
// Fills every channel (padding excluded) of every image with `value` (NaN poisons).
void fill(Image& image, float value);
Image makePoisoned(const Context& context, ImageDescriptor descriptor);

// Checks a result against a reference in which NaN marks elements the kernel must not write (the
// destination was poisoned): those must still be NaN, all others written and within `tolerance`
// relative L2.
void compare(const Tensor& actual, const Tensor& expected, double tolerance);

// For inputs holding NaN and infinities (issue 44: NaN and inf propagate as PyTorch's kernels
// propagate them), element by element: NaN exactly where `expected` is NaN, the same infinity
// where it is infinite, elsewhere |actual - expected| <= tolerance * max(1, |expected|). Poison
// such destinations with a finite value, not NaN, so that an unwritten element fails.
void compareSpecials(const std::vector<double>& actual, const std::vector<double>& expected,
                     double tolerance);
inline void compareSpecials(const Tensor& actual, const Tensor& expected, double tolerance) {
  compareSpecials(actual.data, expected.data, tolerance);
}
// std::max / std::min that return NaN when either operand is NaN (std::max(a, NaN) is a), as
// PyTorch's max pooling, torch.maximum and amax do: for the references.
inline double nanMax(double a, double b) {
  return a != a ? a : b != b ? b : (a < b ? b : a);
}
inline double nanMin(double a, double b) {
  return a != a ? a : b != b ? b : (b < a ? b : a);
}
// Sets elements first, first + every, ... of `values` to NaN, +inf and -inf in turn.
void sprinkleSpecials(std::vector<double>& values, size_t every, size_t first = 0);

// ||a - b|| / ||b|| over all elements; NaN anywhere makes it infinite.
double relativeL2(const Tensor& actual, const Tensor& expected);
// The tolerance issue #3 sets: 1e-5 for float32, 2e-3 for float16.
double tolerance(ChannelFormat format);
bool hasNaN(const Tensor& t);

// A neuron of `type` with parameters that keep every function finite and non-trivial on [-3, 3]
// (PReLU: one slope per channel).
NeuronDescriptor sampleNeuron(NeuronType type, uint32_t channels);

// Writes `values` as raw little-endian float32 to a new temporary file; returns its path.
std::string writeTemporaryDatFile(const std::vector<float>& values, const std::string& name);

// Runs `encode` in a fresh CommandBuffer, commits and waits.
template <typename Encode>
void runOnce(Encode&& encode) {
  CommandBuffer commandBuffer(context());
  encode(commandBuffer);
  commandBuffer.commit();
  commandBuffer.waitUntilCompleted();
}

}  // namespace vkcnn::test

// Checks that `expression` throws vkcnn::Error with `code` and a message containing `fragment`.
#define VKCNN_CHECK_ERROR(expression, errorCode, fragment)                                 \
  do {                                                                                     \
    bool thrown_ = false;                                                                  \
    try {                                                                                  \
      expression;                                                                          \
    } catch (const vkcnn::Error& e_) {                                                     \
      thrown_ = true;                                                                      \
      CHECK_MESSAGE(int(e_.code()) == int(errorCode),                                      \
                    "wrong code " << vkcnn::toString(e_.code()) << " for: " << e_.what()); \
      CHECK_MESSAGE(std::string(e_.what()).find(fragment) != std::string::npos,            \
                    "message lacks '" << (fragment) << "': " << e_.what());                \
    }                                                                                      \
    CHECK_MESSAGE(thrown_, "expected vkcnn::Error from " #expression);                     \
  } while (0)
