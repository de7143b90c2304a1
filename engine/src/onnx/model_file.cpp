// The gate every model file passes before the importer reads it (onnx/model_file.h).
#include "onnx/model_file.h"

#include <onnx/checker.h>

#include <filesystem>
#include <limits>
#include <string_view>

#include "onnx/external_data.h"
#include "onnx/onnx_tensor.h"
#include "onnx/raw_data.h"
#include "onnx/topological_sort.h"
#include "platform/platform.h"

namespace vkcnn::detail::onnx_import {
namespace {

void validateDims(const onnx::TypeProto& type, const std::string& what) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value()) continue;
    if (d.dim_value() < 0)
      invalidModel(what + ": dimension " + std::to_string(d.dim_value()) + " is negative");
    if (d.dim_value() > kMaxElements)
      invalidModel(what + ": dimension " + std::to_string(d.dim_value()) +
                   " exceeds the limit of " + std::to_string(kMaxElements));
  }
}

// `data`: the main graph's stripped initializer data (empty for subgraphs).
void validateGraph(const onnx::GraphProto& graph, int depth, const InitializerData& data) {
  if (depth > 16) invalidModel("subgraphs are nested more than 16 deep");
  const std::string where = graph.name().empty() ? "graph" : "graph '" + graph.name() + "'";
  for (int k = 0; k < graph.initializer_size(); ++k) {
    const auto& t = graph.initializer(k);
    validateTensorProto(t, where + " initializer '" + t.name() + "'", strippedData(data, k));
  }
  for (const auto& v : graph.input()) validateDims(v.type(), where + " input '" + v.name() + "'");
  for (const auto& v : graph.output()) validateDims(v.type(), where + " output '" + v.name() + "'");
  for (const auto& v : graph.value_info())
    validateDims(v.type(), where + " value '" + v.name() + "'");
  for (const auto& node : graph.node()) {
    for (const auto& a : node.attribute()) {
      const std::string what = where + " node '" + node.name() + "' (" + node.op_type() +
                               ") attribute '" + a.name() + "'";
      if (a.has_t()) validateTensorProto(a.t(), what);
      for (const auto& t : a.tensors()) validateTensorProto(t, what);
      if (a.has_g()) validateGraph(a.g(), depth + 1, {});
      for (const auto& g : a.graphs()) validateGraph(g, depth + 1, {});
    }
  }
}

// Whether protobuf's reading of the stripped model agrees with the scanner's: one entry per
// initializer, each stripped one holding the placeholder alone.
bool strippedAsScanned(const onnx::ModelProto& model, const InitializerData& data) {
  if (!model.has_graph() || data.size() != size_t(model.graph().initializer_size())) return false;
  for (int k = 0; k < model.graph().initializer_size(); ++k) {
    const auto& t = model.graph().initializer(k);
    if (data[size_t(k)] && (t.raw_data() != std::string_view("\0", 1) || t.external_data_size() ||
                            t.has_data_location()))
      return false;
  }
  return true;
}

}  // namespace

std::vector<uint8_t> readModelFile(const std::string& path) {
  const platform::MappedFile file(path, "ONNX model '" + path + "'", {}, true);
  if (file.size() > size_t(std::numeric_limits<int>::max()))
    invalidModel("'" + path + "' is " + std::to_string(file.size()) +
                 " bytes; protobuf files are limited to 2 GiB");
  return std::vector<uint8_t>(file.bytes().begin(), file.bytes().end());
}

std::string modelDirectory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

onnx::ModelProto parseModel(std::span<const uint8_t> bytes, const std::string& directory,
                            InitializerData& data) {
  if (bytes.size() > size_t(std::numeric_limits<int>::max()))
    invalidModel("the model is " + std::to_string(bytes.size()) +
                 " bytes; protobuf files are limited to 2 GiB");
  StrippedModel stripped = stripInitializerData(bytes);
  const std::span<const uint8_t> parsed =
      stripped.stripped
          ? std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stripped.bytes.data()),
                                     stripped.bytes.size())
          : bytes;
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromArray(parsed.data(), int(parsed.size())))
    invalidModel("the " + std::to_string(bytes.size()) +
                 " bytes are not an ONNX model (protobuf parsing failed: truncated or corrupt" +
                 (stripped.malformed.empty() ? "" : "; at " + stripped.malformed) + ")");
  data = std::move(stripped.initializerData);
  stripped.bytes = std::string();  // protobuf's input is not needed past here
  if (stripped.stripped && !strippedAsScanned(model, data)) {
    // Never expected: protobuf read the model otherwise than the scanner. The original is the
    // truth.
    data.clear();
    model.Clear();
    if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
      invalidModel("the " + std::to_string(bytes.size()) +
                   " bytes are not an ONNX model (protobuf parsing failed: truncated or corrupt)");
  }
  if (!model.has_graph()) invalidModel("the model has no graph");
  resolveExternalData(model, directory);
  validateGraph(model.graph(), 0, data);
  sortTopologically(*model.mutable_graph());
  return model;
}

void checkModel(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    invalidModel(std::string("onnx checker: ") + e.what());
  }
}

}  // namespace vkcnn::detail::onnx_import
