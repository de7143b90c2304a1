// A trained network through ONNX: the Fashion-MNIST model (scripts/export-fashion-mnist-onnx.py
// writes it from the sample's MPS-order weights) classifies the first test images exactly as
// PyTorch did, with a dynamic batch and both storage formats.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "idx_reader.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

TEST_CASE("onnx: the trained Fashion-MNIST model agrees with PyTorch") {
  const std::filesystem::path weights = VKCNN_FASHION_MNIST_WEIGHTS;
  const char* dataDir = std::getenv("VKCNN_FASHION_MNIST_DIR");
  const std::filesystem::path data =
      dataDir && *dataDir ? dataDir : "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(data / "t10k-images-idx3-ubyte.gz")) {
    MESSAGE("SKIPPED: no Fashion-MNIST test set at " << data.string());
    return;
  }
  fashion_mnist::IdxImages images =
      fashion_mnist::readIdxImages((data / "t10k-images-idx3-ubyte.gz").string());
  std::vector<uint8_t> predicted(images.count);
  {
    std::ifstream in(weights / "test_predictions.u8", std::ios::binary);
    in.read(reinterpret_cast<char*>(predicted.data()), std::streamsize(predicted.size()));
    REQUIRE(in);
  }
  // The outputs (10 channels, 3 array layers an image) are whole Images: at most what the
  // device's layers hold (256 on a mobile-class device, mobile_test_onnx_fashion_mnist: 85).
  const uint32_t batch = std::min(100u, Image::maxNumberOfImages(context(), 10));
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    OnnxImportOptions options;
    options.dynamicBatchSize = batch;
    options.channelFormat = format;
    OnnxImport net = importOnnxModel(context(), (weights / "fashion_mnist.onnx").string(), options);
    net.graph.compile();
    CHECK(net.graph.statistics().fusedNeurons >= 3);  // ReLUs fused into both convolutions and fc1
    REQUIRE(net.info.inputs.size() == 1);
    REQUIRE(net.info.outputs.size() == 2);
    uint32_t agree = 0, checked = 0;
    for (uint32_t first = 0; first < 500; first += batch) {
      std::vector<float> pixels(size_t(batch) * 28 * 28);
      for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = images.image(first)[i] / 255.0f;
      Image input = makeOnnxImage(context(), net.info.inputs[0], pixels, ChannelFormat::float32);
      CommandBuffer cb(context());
      std::vector<Image> outputs = net.graph.encode(cb, {input});
      cb.commit();
      cb.waitUntilCompleted();
      std::vector<float> probabilities = readOnnxImage(outputs[0], net.info.outputs[0]);
      std::vector<float> logits = readOnnxImage(outputs[1], net.info.outputs[1]);
      REQUIRE(probabilities.size() == size_t(batch) * 10);
      for (uint32_t i = 0; i < batch; ++i) {
        const float* p = probabilities.data() + size_t(i) * 10;
        const float* l = logits.data() + size_t(i) * 10;
        const uint32_t byP = uint32_t(std::max_element(p, p + 10) - p);
        const uint32_t byL = uint32_t(std::max_element(l, l + 10) - l);
        agree += byP == predicted[first + i] && byL == byP;
        ++checked;
      }
    }
    // float32 reproduces PyTorch exactly; float16 storage may flip a near-tie.
    CHECK(agree >= (format == ChannelFormat::float32 ? checked : checked - 2));
  }
}
