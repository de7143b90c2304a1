// The mobile device profile (ContextOptions::deviceProfile, VKCNN_DEVICE_PROFILE; issue 42): the
// limits a Context reports are clamped, the environment variable selects it, the kernels choose
// within the clamped limits (and are checked against the double CPU reference there), and where a
// model cannot fit, the error names the limit and the node. The sweep of every kernel family under
// the profile is the mobile_* entries of tests/CMakeLists.txt (existing test binaries run with
// VKCNN_DEVICE_PROFILE=mobile and --vkcnn-expect-profile=mobile, which test_main checks).
#include <doctest/doctest.h>

#include <string>

#include "reference.h"
#include "test_support.h"
#include "vkcnn/graph.h"
#include "vkcnn/resize.h"
#include "vkcnn/squeeze_excitation.h"
#include "vulkan/device_facts.h"
#include "vulkan/device_profile.h"
#include "vulkan/overrides.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

Context mobileContext() {
  ContextOptions options;
  options.deviceProfile = DeviceProfile::mobile;
  return makeContext(options);
}

Context nativeContext() {
  ContextOptions options;
  options.deviceProfile = DeviceProfile::native;
  return makeContext(options);
}

// The error `f` throws (empty: none).
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A 3x3 convolution of `in` -> `out` channels on `context`, checked against the CPU reference;
// returns the configuration it ran.
std::string convolveChecked(const Context& context, uint32_t in, uint32_t out, uint32_t groups) {
  const uint32_t size = 20, images = 2;
  ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, in, out);
  d.groups = groups;
  const std::vector<float> w = randomFloats(size_t(out) * 9 * (in / groups), 5, -0.2f, 0.2f);
  const std::vector<float> bias = randomFloats(out, 6);
  Convolution conv(context, d, w, bias);
  const Tensor x = randomTensor(images, in, size, size, 7);
  ImageDescriptor sd{ChannelFormat::float32, size, size, in, images};
  Image source(context, sd);
  upload(source, x);
  Image destination =
      makePoisoned(context, ImageDescriptor{ChannelFormat::float32, size, size, out, images});
  CommandBuffer cb(context);
  conv.encode(cb, source, destination);
  cb.commit();
  cb.waitUntilCompleted();
  ReferenceConvolution r;
  r.kernelWidth = r.kernelHeight = 3;
  r.inputChannels = in;
  r.outputChannels = out;
  r.groups = groups;
  r.left = r.top = 1;
  compare(download(destination), convolve(x, r, w, bias, size, size), 1e-5);
  return conv.configuration();
}

}  // namespace

TEST_CASE("device profile: mobile clamps every limit the Context reports, native leaves them") {
  const Context mobile = mobileContext();
  const DeviceCapabilities& m = mobile.capabilities();
  CHECK(m.profile == DeviceProfile::mobile);
  CHECK(m.maxImageArrayLayers <= 256);
  CHECK(m.maxImageDimension2D <= 4096);
  CHECK(m.maxComputeSharedMemorySize <= 16 * 1024);
  CHECK(m.maxComputeWorkGroupInvocations <= 256);
  CHECK(m.maxPerStageDescriptorStorageImages <= 4);
  CHECK(m.maxStorageBufferRange <= 128ull << 20);
  CHECK(m.subgroupSize == 16);
  CHECK_FALSE(m.shaderFloat16);
  CHECK_FALSE(m.cooperativeMatrix);
  CHECK_FALSE(m.matrixUnits);
  CHECK(m.storage16Bit == nativeContext().capabilities().storage16Bit);

  // The facts the choices read are the same clamped view.
  const detail::DeviceFacts& f = detail::deviceFacts(mobile);
  CHECK(f.profile == DeviceProfile::mobile);
  CHECK(f.sharedMemoryBytes == m.maxComputeSharedMemorySize);
  CHECK(f.maxImageArrayLayers == m.maxImageArrayLayers);
  CHECK(f.maxComputeWorkGroupInvocations == m.maxComputeWorkGroupInvocations);
  CHECK(f.maxStorageImages == m.maxPerStageDescriptorStorageImages);
  CHECK(f.subgroupSize == 16);
  CHECK_FALSE(f.float16Arithmetic);
  CHECK_FALSE(f.matrixTiles());
  CHECK(f.matrixShapes.empty());

  // lavapipe offers more than a phone: the native view is the device's (the clamp above is real).
  const DeviceCapabilities& n = nativeContext().capabilities();
  CHECK(n.profile == DeviceProfile::native);
  CHECK(n.maxImageArrayLayers > m.maxImageArrayLayers);
  CHECK(n.maxComputeSharedMemorySize > m.maxComputeSharedMemorySize);
  CHECK(n.maxComputeWorkGroupInvocations > m.maxComputeWorkGroupInvocations);
  CHECK(n.maxPerStageDescriptorStorageImages > m.maxPerStageDescriptorStorageImages);
  CHECK(Image::maxNumberOfImages(mobile, 64) == 16);  // 256 layers / 16 per image
}

TEST_CASE("device profile: VKCNN_DEVICE_PROFILE selects it; options win; bad values are named") {
  auto lookup = [](const char* value) {
    return [value](const char* name) {
      return std::string(name) == "VKCNN_DEVICE_PROFILE" ? value : nullptr;
    };
  };
  using detail::readOverrides;
  using detail::resolveDeviceProfile;
  CHECK(resolveDeviceProfile({}, readOverrides(lookup("mobile"))) == DeviceProfile::mobile);
  CHECK(resolveDeviceProfile({}, readOverrides(lookup("native"))) == DeviceProfile::native);
  CHECK(resolveDeviceProfile({}, readOverrides(lookup(nullptr))) == DeviceProfile::native);
  ContextOptions native;
  native.deviceProfile = DeviceProfile::native;
  CHECK(resolveDeviceProfile(native, readOverrides(lookup("mobile"))) == DeviceProfile::native);
  const std::string bad =
      errorOf([&] { resolveDeviceProfile({}, readOverrides(lookup("phone"))); });
  CHECK(contains(bad, "VKCNN_DEVICE_PROFILE 'phone'"));
  ContextOptions wrong;
  wrong.deviceProfile = DeviceProfile(7);
  CHECK(contains(errorOf([&] { makeContext(wrong); }), "ContextOptions::deviceProfile 7"));
}

TEST_CASE("device profile: convolutions choose within the mobile limits and match the reference") {
  const Context mobile = mobileContext();
  // Dense 3x3 (Winograd or a GEMM tile natively: their shared memory is over 16 KiB), grouped
  // and depthwise.
  CHECK(convolveChecked(mobile, 32, 32, 1) == "direct");
  CHECK(convolveChecked(mobile, 32, 32, 4) == "grouped direct");
  CHECK(convolveChecked(mobile, 32, 32, 32) == "depthwise");
  CHECK(convolveChecked(nativeContext(), 32, 32, 1) != "direct");
}

TEST_CASE("device profile: a model that cannot fit names the limit and the node") {
  const Context mobile = mobileContext();
  // 1028 channels take 257 array layers an image: more than the profile's 256.
  {
    Graph g(mobile, GraphOptions{ChannelFormat::float16});
    GraphTensor x = g.input("x", {4, 4, 8});
    GraphTensor wide = g.convolution(x, ConvolutionDescriptor::make(1, 1, 8, 1028),
                                     randomFloats(8 * 1028, 1), {}, {}, "widen");
    g.output(g.neuron(wide, NeuronDescriptor::relu(), "act"), "y");
    const std::string e = errorOf([&] {
      g.compile();
      Image input(mobile, ImageDescriptor{ChannelFormat::float16, 4, 4, 8, 1});
      CommandBuffer cb(mobile);
      g.encode(cb, {input});
    });
    CAPTURE(e);
    CHECK(contains(e, "maxImageArrayLayers"));
    CHECK(contains(e, "device profile mobile"));
    CHECK((contains(e, "'widen'") || contains(e, "'act'") || contains(e, "'y'")));
  }
  // 4100 pixels a side: more than the profile's 4096.
  {
    Graph g(mobile, GraphOptions{ChannelFormat::float16});
    GraphTensor x = g.input("x", {2050, 2, 4});
    GraphTensor big = g.resizeImage(x, ResizeDescriptor{4100, 4}, "upscale");
    g.output(big, "y");
    const std::string e = errorOf([&] {
      g.compile();
      Image input(mobile, ImageDescriptor{ChannelFormat::float16, 2050, 2, 4, 1});
      CommandBuffer cb(mobile);
      g.encode(cb, {input});
    });
    CAPTURE(e);
    CHECK(contains(e, "maxImageDimension2D"));
    CHECK(contains(e, "device profile mobile"));
    CHECK((contains(e, "'upscale'") || contains(e, "'y'")));
  }
  // A kernel whose shader needs more shared memory than the profile gives (the fused
  // squeeze-excitation: 24 KiB) is refused with the limit named, not run past it.
  {
    const uint32_t C = 8, R = 2;
    SqueezeExcitationDescriptor d;
    d.featureChannels = C;
    d.reducedChannels = R;
    const std::string e = errorOf([&] {
      SqueezeExcitation se(mobile, d, randomFloats(C * R, 1), randomFloats(R, 2),
                           randomFloats(C * R, 3), randomFloats(C, 4));
      Image x(mobile, ImageDescriptor{ChannelFormat::float32, 4, 4, C, 1});
      Image mean(mobile, ImageDescriptor{ChannelFormat::float32, 1, 1, C, 1});
      CommandBuffer cb(mobile);
      TemporaryImage y = se.encode(cb, x, mean);
    });
    CAPTURE(e);
    CHECK(contains(e, "maxComputeSharedMemorySize"));
    CHECK(contains(e, "device profile mobile"));
    // The Graph leaves such blocks unfused under the profile.
    CHECK_FALSE(detail::overrides(mobile).fuseSqueezeExcitation);
  }
}
