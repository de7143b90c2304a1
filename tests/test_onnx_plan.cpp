// Importing a model and planning its Graph (the rewrites, concatenation storage, the schedule)
// need no device: the importer makes no kernel (graph/lower.cpp makes them all, in compile()).
// Checked on a Context whose device is not created yet (detail::startContext, as a Session on its
// own Context imports while the driver starts), where anything that reached for the device would
// wait for it.
#include <chrono>
#include <future>
#include <string>

#include "test_support.h"
#include "vkcnn/onnx.h"
#include "vulkan/context_start.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

std::string model(const std::string& name) {
  return std::string(VKCNN_TORCH_MODELS) + "/" + name;
}

}  // namespace

TEST_CASE("onnx: a model imports and plans before its Context has a device") {
  for (const std::string name : {"convnext13.onnx", "detection.onnx"}) {
    CAPTURE(name);
    const ContextOptions options;
    const Context pending = detail::startContext(options);
    auto planned = std::async(std::launch::async, [&] {
      OnnxImport imported = importOnnxModel(pending, model(name));
      imported.graph.plan();
      return imported;
    });
    const bool done = planned.wait_for(std::chrono::seconds(120)) == std::future_status::ready;
    CHECK_MESSAGE(done, "importing or planning waited for the device");
    // The device now (a thread that waited for it goes on), then the kernels as planned.
    detail::finishContext(pending, options);
    OnnxImport imported = planned.get();
    const GraphStatistics plan = imported.graph.statistics();
    CHECK(plan.kernels > 0);
    CHECK(plan.conversions > 0);  // both hold Tensor values
    const std::vector<std::string> described = imported.graph.describe();
    CHECK_THROWS_AS(imported.graph.identity(GraphTensor{0}), Error);  // planned: no more nodes
    imported.graph.compile();
    const GraphStatistics compiled = imported.graph.statistics();
    CHECK(compiled.kernels == plan.kernels);
    CHECK(compiled.conversions == plan.conversions);
    CHECK(compiled.fusedNeurons == plan.fusedNeurons);
    CHECK(compiled.removedUnused == plan.removedUnused);
    CHECK(imported.graph.describe() == described);
  }
}
