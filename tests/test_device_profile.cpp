// The mobile device profile (ContextOptions::deviceProfile, VKCNN_DEVICE_PROFILE; issue 42): the
// limits a Context reports are clamped, the environment variable selects it, the kernels choose
// within the clamped limits (and are checked against the double CPU reference there), and where a
// model cannot fit, the error names the limit and the node. The sweep of every kernel family under
// the profile is the mobile_* entries of tests/CMakeLists.txt (existing test binaries run with
// VKCNN_DEVICE_PROFILE=mobile and --vkcnn-expect-profile=mobile, which test_main checks).
#include <doctest/doctest.h>

#include <cmath>
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

// The profile's name (doctest prints it; the enum has no stream operator).
std::string profileName(DeviceProfile p) {
  return toString(p);
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
  ImageDescriptor sd{size, size, in, images, ChannelFormat::float32};
  Image source(context, sd);
  upload(source, x);
  Image destination =
      makePoisoned(context, ImageDescriptor{size, size, out, images, ChannelFormat::float32});
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
  CHECK(profileName(m.profile) == "mobile");
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
  CHECK(profileName(f.profile) == "mobile");
  CHECK(f.sharedMemoryBytes == m.maxComputeSharedMemorySize);
  CHECK(f.maxImageArrayLayers == m.maxImageArrayLayers);
  CHECK(f.maxComputeWorkGroupInvocations == m.maxComputeWorkGroupInvocations);
  CHECK(f.maxStorageImages == m.maxPerStageDescriptorStorageImages);
  CHECK(f.subgroupSize == 16);
  CHECK_FALSE(f.float16Arithmetic);
  CHECK_FALSE(f.matrixTiles());
  CHECK(f.matrixShapes.empty());

  // lavapipe offers more than a phone: the native view is the device's (the clamp above is real).
  const Context native = nativeContext();  // alive while `n` is read
  const DeviceCapabilities& n = native.capabilities();
  CHECK(profileName(n.profile) == "native");
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
  CHECK(profileName(resolveDeviceProfile({}, readOverrides(lookup("mobile")))) == "mobile");
  CHECK(profileName(resolveDeviceProfile({}, readOverrides(lookup("native")))) == "native");
  CHECK(profileName(resolveDeviceProfile({}, readOverrides(lookup(nullptr)))) == "native");
  ContextOptions native;
  native.deviceProfile = DeviceProfile::native;
  CHECK(profileName(resolveDeviceProfile(native, readOverrides(lookup("mobile")))) == "native");
  const std::string bad =
      errorOf([&] { resolveDeviceProfile({}, readOverrides(lookup("phone"))); });
  CHECK(contains(bad, "VKCNN_DEVICE_PROFILE 'phone'"));
  ContextOptions wrong;
  wrong.deviceProfile = DeviceProfile(7);
  CHECK(contains(errorOf([&] { makeContext(wrong); }), "ContextOptions::deviceProfile 7"));
}

TEST_CASE("device profile: convolutions choose within the mobile limits and match the reference") {
  const Context mobile = mobileContext();
  // Dense 3x3: natively lavapipe runs it on gemm_small (24 KiB of shared memory in float32);
  // within 16 KiB only gemm_large (16 KiB) or the direct shader fit. Grouped and depthwise.
  const std::string dense = convolveChecked(mobile, 32, 32, 1);
  CHECK((dense == "gemm_large" || dense == "direct"));
  CHECK(convolveChecked(mobile, 32, 32, 4) == "grouped direct");
  CHECK(convolveChecked(mobile, 32, 32, 32) == "depthwise");
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
      Image input(mobile, ImageDescriptor{4, 4, 8, 1, ChannelFormat::float16});
      CommandBuffer cb(mobile);
      g.encode(cb, {input});
    });
    CAPTURE(e);
    CHECK(contains(e, "maxImageArrayLayers"));
    CHECK(contains(e, "device profile mobile"));
    CHECK(contains(e, "one image of 1028 channels does not fit (at most 1024 channels an image)"));
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
      Image input(mobile, ImageDescriptor{2050, 2, 4, 1, ChannelFormat::float16});
      CommandBuffer cb(mobile);
      g.encode(cb, {input});
    });
    CAPTURE(e);
    CHECK(contains(e, "maxImageDimension2D"));
    CHECK(contains(e, "device profile mobile"));
    CHECK((contains(e, "'upscale'") || contains(e, "'y'")));
  }
  // The fused squeeze-excitation kernel's 4096-channel shader needs 24 KiB of shared memory: a
  // block of at most 2048 channels reduced to 512 runs on the 16 KiB one; a wider one is refused
  // with the limit named, not run past it.
  {
    const uint32_t C = 64, R = 600;  // R beyond the 16 KiB shader's 512
    SqueezeExcitationDescriptor d;
    d.featureChannels = C;
    d.reducedChannels = R;
    SqueezeExcitation se(mobile, d, randomFloats(C * R, 1), randomFloats(R, 2),
                         randomFloats(C * R, 3), randomFloats(C, 4));
    const std::string e = errorOf([&] {
      Image x(mobile, ImageDescriptor{4, 4, C, 1, ChannelFormat::float32});
      Image mean(mobile, ImageDescriptor{1, 1, C, 1, ChannelFormat::float32});
      CommandBuffer cb(mobile);
      TemporaryImage y = se.encode(cb, x, mean);
    });
    CAPTURE(e);
    CHECK(contains(e, "maxComputeSharedMemorySize"));
    CHECK(contains(e, "device profile mobile"));
    CHECK(contains(e, "'" + se.label + "'"));  // the kernel (a Graph's node) by its name
    // The Graph leaves such blocks unfused under the profile.
    CHECK_FALSE(detail::overrides(mobile).fuseSqueezeExcitation);
    CHECK(detail::overrides(nativeContext()).fuseSqueezeExcitation);
  }
}

TEST_CASE("device profile: squeeze-excitation runs within 16 KiB and matches the reference") {
  const Context mobile = mobileContext();
  const uint32_t C = 37, R = 8, size = 5, images = 2;
  SqueezeExcitationDescriptor d;
  d.featureChannels = C;
  d.reducedChannels = R;
  const std::vector<float> fc1 = randomFloats(C * R, 1, -0.3f, 0.3f), b1 = randomFloats(R, 2),
                           fc2 = randomFloats(C * R, 3, -0.3f, 0.3f), b2 = randomFloats(C, 4);
  SqueezeExcitation se(mobile, d, fc1, b1, fc2, b2);
  const Tensor x = randomTensor(images, C, size, size, 8);
  const Tensor means = randomTensor(images, C, 1, 1, 9);
  Image xi(mobile, ImageDescriptor{size, size, C, images, ChannelFormat::float32});
  Image mi(mobile, ImageDescriptor{1, 1, C, images, ChannelFormat::float32});
  upload(xi, x);
  upload(mi, means);
  Image y = makePoisoned(mobile, ImageDescriptor{size, size, C, images, ChannelFormat::float32});
  CommandBuffer cb(mobile);
  se.encode(cb, xi, mi, y);
  cb.commit();
  cb.waitUntilCompleted();
  // fc1 [R][C] with a ReLU, fc2 [C][R] with a sigmoid (SqueezeExcitationDescriptor's defaults).
  Tensor want = x;
  for (uint32_t i = 0; i < images; ++i) {
    std::vector<double> hidden(R);
    for (uint32_t j = 0; j < R; ++j) {
      double sum = b1[j];
      for (uint32_t c = 0; c < C; ++c) sum += double(fc1[j * C + c]) * means.at(i, c, 0, 0);
      hidden[j] = sum > 0 ? sum : 0;
    }
    for (uint32_t c = 0; c < C; ++c) {
      double sum = b2[c];
      for (uint32_t j = 0; j < R; ++j) sum += double(fc2[c * R + j]) * hidden[j];
      const double gate = 1 / (1 + std::exp(-sum));
      for (uint32_t p = 0; p < size * size; ++p)
        want.at(i, c, p / size, p % size) = x.at(i, c, p / size, p % size) * gate;
    }
  }
  compare(download(y), want, 1e-5);
}
