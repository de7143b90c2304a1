// Smoke sample: pushes one image through the engine on the default device and says what it did.
// Until the Fashion-MNIST sample exists, this is what the README's first command runs.
#include <vkcnn/vkcnn.h>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  try {
    vkcnn::Context context;
    const auto& caps = context.capabilities();
    std::printf("device: %s (%s, driver %s), Vulkan %u.%u\n", caps.deviceName.c_str(),
                vkcnn::toString(caps.deviceType), caps.driverName.c_str(),
                VK_API_VERSION_MAJOR(caps.apiVersion), VK_API_VERSION_MINOR(caps.apiVersion));

    const uint32_t width = 32, height = 24, channels = 13;
    vkcnn::ImageDescriptor descriptor{width, height, channels};
    descriptor.label = "input";
    vkcnn::Image input(context, descriptor);
    std::vector<float> pixels(size_t(width) * height * channels);
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = std::sin(float(i)) * 4.0f;
    input.writeFloats(pixels, vkcnn::DataLayout::FeatureChannelsxHeightxWidth);

    vkcnn::CommandBuffer commandBuffer(context, "smoke");
    vkcnn::Neuron relu6(context, vkcnn::NeuronDescriptor::relu6());
    vkcnn::Neuron tanh(context, vkcnn::NeuronDescriptor::of(vkcnn::NeuronType::tanh, 1.f, 1.f));
    vkcnn::TemporaryImage hidden = relu6.encode(commandBuffer, input);
    descriptor.label = "output";
    vkcnn::Image output(context, descriptor);
    tanh.encode(commandBuffer, hidden, output);
    commandBuffer.commit();
    commandBuffer.waitUntilCompleted();

    std::vector<float> result = output.readFloats(vkcnn::DataLayout::FeatureChannelsxHeightxWidth);
    double worst = 0;
    for (size_t i = 0; i < pixels.size(); ++i) {
      double expected = std::tanh(std::min(std::max(double(pixels[i]), 0.0), 6.0));
      worst = std::max(worst, std::abs(expected - result[i]));
    }
    auto stats = commandBuffer.encodingStatistics();
    std::printf(
        "pushed a %ux%u image of %u channels through ReLU6 -> tanh (%u dispatches, %u "
        "barriers, temporary pool peak %llu bytes)\n",
        width, height, channels, stats.dispatches, stats.barriers,
        (unsigned long long)commandBuffer.temporaryPoolStatistics().peakBytesInUse);
    std::printf("largest difference from the CPU: %.2e (float16 storage)\n", worst);
    if (worst > 2e-3) {
      std::fprintf(stderr, "smoke: the result differs from the CPU reference\n");
      return 1;
    }
    std::printf("ok\n");
    return 0;
  } catch (const vkcnn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
