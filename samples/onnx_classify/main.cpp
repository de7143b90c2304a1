// ONNX classification sample: runs any ONNX image classifier on a picture and prints the top 5.
//
//   vkcnn-onnx-classify MODEL.onnx PICTURE [--labels FILE] [--fp32] [--device D]
//
// The picture (PNG, JPEG, ...) is resized to the model's input size and normalised with
// ImageNet's mean and std; the model's first output is taken as class scores (softmax applied
// here when they are not probabilities already). --labels names the classes, one per line.
#include <vkcnn/vkcnn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "picture.h"

int main(int argc, char** argv) {
  std::string model, picture, labelsPath;
  vkcnn::OnnxImportOptions options;
  vkcnn::ContextOptions contextOptions;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--labels" && i + 1 < argc)
      labelsPath = argv[++i];
    else if (a == "--device" && i + 1 < argc)
      contextOptions.device = argv[++i];
    else if (a == "--fp32")
      options.channelFormat = vkcnn::ChannelFormat::float32;
    else if (a.rfind("--", 0) != 0 && model.empty())
      model = a;
    else if (a.rfind("--", 0) != 0 && picture.empty())
      picture = a;
    else {
      std::fprintf(
          stderr,
          "usage: vkcnn-onnx-classify MODEL.onnx PICTURE [--labels FILE] [--fp32] [--device D]\n");
      return 2;
    }
  }
  if (model.empty() || picture.empty()) {
    std::fprintf(
        stderr,
        "usage: vkcnn-onnx-classify MODEL.onnx PICTURE [--labels FILE] [--fp32] [--device D]\n");
    return 2;
  }
  try {
    vkcnn::Context context(contextOptions);
    vkcnn::OnnxImport net = vkcnn::importOnnxModel(context, model, options);
    if (net.info.inputs.size() != 1 || net.info.outputs.empty())
      throw vkcnn::Error(vkcnn::ErrorCode::unsupported,
                         model + ": a classifier with one input is expected");
    const vkcnn::OnnxTensorInfo& in = net.info.inputs[0];
    if (in.dims.size() != 4 || in.dims[0] != 1 || (in.dims[1] != 3 && in.dims[1] != 1))
      throw vkcnn::Error(vkcnn::ErrorCode::unsupported,
                         model + ": the input must be [1, 3 or 1, H, W], got rank " +
                             std::to_string(in.dims.size()));
    vkcnn::cli::PictureOptions p;
    p.channels = uint32_t(in.dims[1]);
    p.height = uint32_t(in.dims[2]);
    p.width = uint32_t(in.dims[3]);
    vkcnn::Image input = vkcnn::makeOnnxImage(context, in, vkcnn::cli::loadPicture(picture, p),
                                              vkcnn::ChannelFormat::float32);
    vkcnn::CommandBuffer commandBuffer(context, "classify");
    std::vector<vkcnn::Image> outputs = net.graph.encode(commandBuffer, {input});
    commandBuffer.commit();
    commandBuffer.waitUntilCompleted();
    std::vector<float> scores = vkcnn::readOnnxImage(outputs[0], net.info.outputs[0]);

    const float sum = std::accumulate(scores.begin(), scores.end(), 0.0f);
    const bool probabilities =
        std::all_of(scores.begin(), scores.end(), [](float v) { return v >= 0; }) &&
        std::abs(sum - 1.0f) < 1e-2f;
    if (!probabilities) {
      const float top = *std::max_element(scores.begin(), scores.end());
      double total = 0;
      for (float& v : scores) total += (v = std::exp(v - top));
      for (float& v : scores) v = float(v / total);
    }
    std::vector<std::string> labels;
    if (!labelsPath.empty()) {
      std::ifstream file(labelsPath);
      for (std::string line; std::getline(file, line);) labels.push_back(line);
    }
    std::vector<size_t> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t k = std::min<size_t>(5, order.size());
    std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                      [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    std::printf("%s on %s (%s intermediates), %u kernels\n", model.c_str(),
                context.capabilities().deviceName.c_str(), vkcnn::toString(options.channelFormat),
                net.graph.statistics().kernels);
    for (size_t i = 0; i < k; ++i)
      std::printf("  %zu. class %zu %s %.2f%%\n", i + 1, order[i],
                  order[i] < labels.size() ? labels[order[i]].c_str() : "",
                  100.0 * scores[order[i]]);
    return 0;
  } catch (const vkcnn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
