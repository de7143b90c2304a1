// The test helpers that need the ONNX importer (libvkcnn_onnx): in vkcnn_test_support_onnx, which
// only the ONNX tests link, so that the core tests build without ONNX (VKCNN_WITH_ONNX=OFF).
#include "test_support.h"

namespace vkcnn::test {

std::vector<float> runOnnxImport(OnnxImport imported, const std::vector<float>& input) {
  Image in = makeOnnxImage(context(), imported.info.inputs[0], input, ChannelFormat::float32);
  CommandBuffer cb(context());
  std::vector<Image> out = imported.graph.encode(cb, {in});
  cb.commit();
  cb.waitUntilCompleted();
  return readOnnxImage(out[0], imported.info.outputs[0]);
}

}  // namespace vkcnn::test
