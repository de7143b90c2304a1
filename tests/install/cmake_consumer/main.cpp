// A C++ application of the installed package: calls a Vulkan loader prototype itself, checks the
// headers' version against the library's, imports a small ONNX classifier head (global average
// pool, flatten, Gemm) with a batch of 2 and compares its outputs with a CPU computation.
//   consumer MODEL.onnx   (fuzz/corpus/onnx/gap_flatten_gemm.onnx)
#include <vkcnn/vkcnn.h>
#include <vulkan/vulkan.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  uint32_t loaderVersion = 0;
  if (vkEnumerateInstanceVersion(&loaderVersion) != VK_SUCCESS) return 1;
  if (vkcnn::version().major != VKCNN_VERSION_MAJOR ||
      vkcnn::version().minor != VKCNN_VERSION_MINOR ||
      std::strcmp(vkcnn::versionString(), VKCNN_VERSION_STRING) != 0) {
    std::fprintf(stderr, "consumer: headers %s, library %s\n", VKCNN_VERSION_STRING,
                 vkcnn::versionString());
    return 1;
  }
  try {
    vkcnn::Context context;
    vkcnn::OnnxImportOptions options;
    options.dynamicBatchSize = 2;
    options.channelFormat = vkcnn::ChannelFormat::float32;
    vkcnn::OnnxImport model = vkcnn::importOnnxModel(context, argv[1], options);
    const vkcnn::OnnxTensorInfo& in = model.info.inputs.at(0);
    const vkcnn::OnnxTensorInfo& out = model.info.outputs.at(0);
    // x [2, 4, 3, 3]; y = mean_hw(x) W^T + B with W [5, 4] and B [5] from the seed generator's
    // ramp.
    std::vector<float> x(2 * 4 * 3 * 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 11) - 5) * 0.25f;
    vkcnn::Image input = vkcnn::makeOnnxImage(context, in, x, vkcnn::ChannelFormat::float32);
    vkcnn::CommandBuffer commandBuffer(context);
    vkcnn::Image output = model.graph.encode(commandBuffer, {input}).at(0);
    commandBuffer.commit();
    commandBuffer.waitUntilCompleted();
    std::vector<float> y = vkcnn::readOnnxImage(output, out);

    auto ramp = [](size_t i) { return double(int(i % 7) - 3) * 0.125; };
    double worst = 0;
    if (y.size() != 2 * 5) return 1;
    for (int n = 0; n < 2; ++n)
      for (int o = 0; o < 5; ++o) {
        double sum = ramp(size_t(o));
        for (int c = 0; c < 4; ++c) {
          double mean = 0;
          for (int p = 0; p < 9; ++p) mean += x[size_t((n * 4 + c) * 9 + p)] / 9.0;
          sum += ramp(size_t(o * 4 + c)) * mean;
        }
        worst = std::max(worst, std::abs(sum - double(y[size_t(n * 5 + o)])));
      }
    std::printf("consumer (find_package): vkcnn %s on %s, loader %u.%u, largest difference %.1e\n",
                vkcnn::versionString(), context.capabilities().deviceName.c_str(),
                VK_API_VERSION_MAJOR(loaderVersion), VK_API_VERSION_MINOR(loaderVersion), worst);
    if (context.validationMessageCount() != 0) return 1;
    return worst < 1e-4 ? 0 : 1;
  } catch (const vkcnn::Error& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
