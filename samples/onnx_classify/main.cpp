// ONNX classification sample: runs any ONNX image classifier on a picture and prints the top 5.
//
//   vkcnn-onnx-classify MODEL.onnx PICTURE [--labels FILE] [--fp32] [--device D]
//
// Runs on vkcnn::Session. The picture (PNG, JPEG, ...) is resized and centre-cropped to the
// model's input size as torchvision's presets do and normalised with ImageNet's mean and std; the
// model's first output is taken as class scores (softmax applied here when they are not
// probabilities already). --labels names the classes, one per line.
#include <vkcnn/session.h>
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
  vkcnn::SessionOptions options;
  const char* usage =
      "usage: vkcnn-onnx-classify MODEL.onnx PICTURE [--labels FILE] [--fp32] [--device D]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a == "--labels" && i + 1 < argc) {
      labelsPath = argv[++i];
    } else if (a == "--device" && i + 1 < argc) {
      options.context.device = argv[++i];
    } else if (a == "--fp32") {
      options.precision = vkcnn::ChannelFormat::float32;
    } else if (a.rfind("--", 0) != 0 && model.empty()) {
      model = a;
    } else if (a.rfind("--", 0) != 0 && picture.empty()) {
      picture = a;
    } else {
      std::fputs(usage, stderr);
      return 2;
    }
  }
  if (model.empty() || picture.empty()) {
    std::fputs(usage, stderr);
    return 2;
  }
  try {
    vkcnn::Session session(model, options);
    if (session.inputs().size() != 1 || session.outputs().empty())
      throw vkcnn::Error(vkcnn::ErrorCode::unsupported,
                         model + ": a classifier with one input is expected");
    const vkcnn::SessionTensorInfo& in = session.inputs()[0];
    if (in.shape.size() != 4 || in.shape[0] != 1 || (in.shape[1] != 3 && in.shape[1] != 1))
      throw vkcnn::Error(vkcnn::ErrorCode::unsupported,
                         model + ": the input must be [1, 3 or 1, H, W], got rank " +
                             std::to_string(in.shape.size()));
    // As torchvision's presets: shorter side to 256/224 of the input, centre crop, ImageNet's
    // mean and std.
    vkcnn::cli::PictureOptions p;
    p.channels = uint32_t(in.shape[1]);
    p.height = uint32_t(in.shape[2]);
    p.width = uint32_t(in.shape[3]);
    auto outputs = session.run({{in.name, {in.shape, vkcnn::cli::loadPicture(picture, p)}}});
    std::vector<float> scores = outputs[session.outputs()[0].name].data;

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
      if (!file) throw vkcnn::Error(vkcnn::ErrorCode::io, labelsPath + ": cannot open");
      for (std::string line; std::getline(file, line);) labels.push_back(line);
    }
    std::vector<size_t> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t k = std::min<size_t>(5, order.size());
    std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                      [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    std::printf("%s on %s (%s intermediates), %u kernels\n", model.c_str(),
                session.context().capabilities().deviceName.c_str(),
                vkcnn::toString(session.precision()), session.graph().statistics().kernels);
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
