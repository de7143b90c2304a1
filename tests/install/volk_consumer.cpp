// An application built with pkg-config against the core library only, that uses volk (its own,
// compiled in; VK_NO_PROTOTYPES comes from volk.h, included first) next to vkcnn: vkcnn's headers
// must not clash with volk's declarations, and vkcnn must not touch volk's globals. It runs ReLU
// on an image through the kernel API and checks the result.
#include <volk.h>
// volk first, then vkcnn
#include <vkcnn/vkcnn.h>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  if (volkInitialize() != VK_SUCCESS) return 1;
  uint32_t loaderVersion = 0;
  if (vkEnumerateInstanceVersion(&loaderVersion) != VK_SUCCESS) return 1;
  try {
    vkcnn::Context context;
    vkcnn::Image image(context, {5, 3, 6});
    std::vector<float> x(5 * 3 * 6);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 9) - 4) * 0.5f;
    image.writeFloats(x, vkcnn::DataLayout::FeatureChannelsxHeightxWidth);
    vkcnn::Image result(context, {5, 3, 6});
    vkcnn::CommandBuffer commandBuffer(context);
    vkcnn::Neuron relu(context, vkcnn::NeuronDescriptor::relu());
    relu.encode(commandBuffer, image, result);
    commandBuffer.commit();
    commandBuffer.waitUntilCompleted();
    std::vector<float> y = result.readFloats(vkcnn::DataLayout::FeatureChannelsxHeightxWidth);
    for (size_t i = 0; i < x.size(); ++i)
      if (y[i] != std::max(x[i], 0.f)) return 1;
    // volk's globals are still this application's.
    if (vkGetInstanceProcAddr == nullptr) return 1;
    std::printf("consumer (pkg-config, volk): vkcnn %s, ReLU of %zu values exact\n",
                vkcnn::versionString(), x.size());
    return context.validationMessageCount() == 0 ? 0 : 1;
  } catch (const vkcnn::Error& e) {
    std::fprintf(stderr, "volk consumer: %s\n", e.what());
    return 1;
  }
}
