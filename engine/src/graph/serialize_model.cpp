// The model's inputs and outputs in the graph section (serialize.h): what the importer said of
// them (OnnxModelInfo: ONNX shapes and the Images that hold them), so that a Session loads a .vkcnn
// file as it loads the ONNX model it was compiled from. readModel checks them against the Graph's
// inputs and outputs. Keys are the file's: never renumber one, only add.
#include "graph/serialize.h"
#include "graph/state.h"

namespace vkcnn::detail {

using archive::FieldKey;
using archive::RecordReader;
using archive::RecordWriter;

namespace {

constexpr FieldKey kIrVersion{1, "ir version"}, kOpset{2, "opset"},
    kProducerName{3, "producer name"}, kProducerVersion{4, "producer version"},
    kGraphName{5, "graph name"}, kInputs{6, "input"}, kOutputs{7, "output"};
constexpr FieldKey kName{1, "name"}, kDims{2, "dims"}, kElementType{3, "element type"},
    kImages{4, "number of images"}, kChannels{5, "feature channels"}, kHeight{6, "height"},
    kWidth{7, "width"};

RecordWriter encodeTensorInfo(const OnnxTensorInfo& t) {
  RecordWriter r;
  r.string(kName, t.name).i64s(kDims, t.dims).string(kElementType, t.elementType);
  r.u32(kImages, t.numberOfImages).u32(kChannels, t.featureChannels);
  r.u32(kHeight, t.height).u32(kWidth, t.width);
  return r;
}

OnnxTensorInfo decodeTensorInfo(const RecordReader& r) {
  OnnxTensorInfo t;
  t.name = r.string(kName);
  t.dims = r.i64s(kDims);
  t.dimParams.assign(t.dims.size(), "");
  t.elementType = r.string(kElementType, "float32");
  t.numberOfImages = r.u32(kImages);
  t.featureChannels = r.u32(kChannels);
  t.height = r.u32(kHeight);
  t.width = r.u32(kWidth);
  // The Image holds every element of the tensor: what the Session's buffers are sized by.
  uint64_t elements = 1;
  for (int64_t d : t.dims) {
    if (d < 1 || d > (int64_t(1) << 24)) r.fail(kDims, "a dimension of " + std::to_string(d));
    elements *= uint64_t(d);
    if (elements > (uint64_t(1) << 40)) r.fail(kDims, "too many elements");
  }
  const uint64_t held =
      uint64_t(t.numberOfImages) * t.featureChannels * uint64_t(t.height) * t.width;
  if (t.dims.empty() || held != elements)
    r.fail(kDims,
           std::to_string(elements) + " elements in Images that hold " + std::to_string(held));
  return t;
}

// `infos` against the graph's `values` (inputs or outputs): as many, each of its Image's shape.
void checkAgainstGraph(const RecordReader& r, FieldKey key,
                       const std::vector<OnnxTensorInfo>& infos, const GraphState& s,
                       const std::vector<uint32_t>& values) {
  if (infos.size() != values.size())
    r.fail(key, std::to_string(infos.size()) + " for the graph's " + std::to_string(values.size()));
  for (size_t i = 0; i < infos.size(); ++i) {
    const TensorShape& shape = s.tensors[values[i]].shape;
    const OnnxTensorInfo& t = infos[i];
    if (shape.width != t.width || shape.height != t.height ||
        shape.featureChannels != t.featureChannels || !t.numberOfImages ||
        (s.options.numberOfImages && t.numberOfImages != s.options.numberOfImages))
      r.fail(key, "'" + t.name + "' is not the Image the graph has");
  }
}

}  // namespace

RecordWriter encodeModelInfo(const OnnxModelInfo& info) {
  RecordWriter r;
  r.i64(kIrVersion, info.irVersion).i64(kOpset, info.opsetVersion);
  r.string(kProducerName, info.producerName).string(kProducerVersion, info.producerVersion);
  r.string(kGraphName, info.graphName);
  std::vector<RecordWriter> inputs, outputs;
  for (const OnnxTensorInfo& t : info.inputs) inputs.push_back(encodeTensorInfo(t));
  for (const OnnxTensorInfo& t : info.outputs) outputs.push_back(encodeTensorInfo(t));
  r.records(kInputs, inputs).records(kOutputs, outputs);
  return r;
}

OnnxModelInfo decodeModelInfo(const RecordReader& r) {
  OnnxModelInfo info;
  info.irVersion = r.i64(kIrVersion, 0);
  info.opsetVersion = r.i64(kOpset, 0);
  info.producerName = r.string(kProducerName, "");
  info.producerVersion = r.string(kProducerVersion, "");
  info.graphName = r.string(kGraphName, "");
  for (const RecordReader& t : r.records(kInputs)) info.inputs.push_back(decodeTensorInfo(t));
  for (const RecordReader& t : r.records(kOutputs)) info.outputs.push_back(decodeTensorInfo(t));
  return info;
}

OnnxModelInfo readModelInfo(const archive::Archive& archive) {
  const std::optional<std::span<const uint8_t>> bytes =
      archive.section(archive::SectionKind::graph);
  if (!bytes) archive.fail("has no graph section (GRPH): it holds no model to run");
  const RecordReader section(*bytes, archive.name() + ": graph");
  if (!section.has(kModelField))
    section.fail(
        "has no model inputs and outputs (field 'model'): it was written for a Graph, "
        "not for a Session");
  return decodeModelInfo(section.record(kModelField));
}

OnnxImport readModel(const Context& context, const archive::Archive& archive, bool mapWeights) {
  OnnxModelInfo info = readModelInfo(archive);
  Graph graph = readGraph(context, archive, mapWeights);
  const GraphState& s = GraphAccess::state(graph);
  const RecordReader section(*archive.section(archive::SectionKind::graph),
                             archive.name() + ": graph");
  const RecordReader model = section.record(kModelField);
  checkAgainstGraph(model, kInputs, info.inputs, s, s.inputs);
  checkAgainstGraph(model, kOutputs, info.outputs, s, s.outputs);
  for (size_t i = 1; i < info.inputs.size(); ++i)
    if (info.inputs[i].numberOfImages != info.inputs[0].numberOfImages)
      model.fail(kInputs, "the inputs differ in their number of images");
  return OnnxImport{std::move(graph), std::move(info)};
}

}  // namespace vkcnn::detail
