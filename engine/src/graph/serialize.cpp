// The graph section of a .vkcnn file (serialize.h): the section's record (options, values, nodes,
// inputs, outputs, statistics), each node's framing (kind, name, inputs, output, parameters), and
// the weights' way in and out of WDAT. The nodes' parameters are the family files'
// (serialize_image.cpp, serialize_tensor.cpp); the structural checks of a read graph are
// serialize_check.cpp's. Keys are the file's: never renumber one, only add.
#include "graph/serialize.h"

#include <bit>
#include <cstring>

#include "archive/bytes.h"
#include "graph/state.h"
#include "vkcnn/error.h"

namespace vkcnn::detail {

GraphState& GraphAccess::state(Graph& g) {
  return *g.state_;
}
const GraphState& GraphAccess::state(const Graph& g) {
  return *g.state_;
}

namespace {

using archive::FieldKey;
using archive::RecordReader;
using archive::RecordWriter;

// The section's record.
constexpr FieldKey kOptions{1, "options"};
constexpr FieldKey kValues{2, "value"};
constexpr FieldKey kNodes{3, "node"};
constexpr FieldKey kInputs{4, "input"};
constexpr FieldKey kOutputs{5, "output"};
constexpr FieldKey kStatistics{6, "statistics"};
// options
constexpr FieldKey kChannelFormat{1, "channel format"};
constexpr FieldKey kOptimize{2, "optimize"};
constexpr FieldKey kAccumulatorPrecision{3, "accumulator precision"};
constexpr FieldKey kNumberOfImages{4, "number of images"};
constexpr FieldKey kLabel{5, "label"};
// a value
constexpr FieldKey kValueName{1, "name"};
constexpr FieldKey kShape{2, "shape"};  // an Image's: width, height, channels
constexpr FieldKey kTensorShape{3, "tensor shape"};
constexpr FieldKey kProducer{4, "producer"};
constexpr FieldKey kStoredIn{5, "stored in"};  // a reshape's source (a view of it)
// a node
constexpr FieldKey kKind{1, "kind"};
constexpr FieldKey kNodeName{2, "name"};
constexpr FieldKey kNodeInputs{3, "inputs"};
constexpr FieldKey kNodeOutput{4, "output"};
constexpr FieldKey kParameters{5, "parameters"};
// a graph input or output
constexpr FieldKey kTensor{1, "tensor"};
constexpr FieldKey kPortName{2, "name"};

// The statistics, in GraphStatistics' order of fields (what describe() and inspect show of the
// rewrites compile() made when the model was compiled).
struct StatisticsField {
  FieldKey key;
  uint32_t GraphStatistics::*member;
};
constexpr StatisticsField kStatisticsFields[] = {
    {{1, "nodes"}, &GraphStatistics::nodes},
    {{2, "fused neurons"}, &GraphStatistics::fusedNeurons},
    {{3, "folded batch normalizations"}, &GraphStatistics::foldedBatchNormalizations},
    {{4, "removed identities"}, &GraphStatistics::removedIdentities},
    {{5, "removed unused"}, &GraphStatistics::removedUnused},
    {{6, "folded affines"}, &GraphStatistics::foldedAffines},
    {{7, "conversions"}, &GraphStatistics::conversions},
    {{8, "fused residuals"}, &GraphStatistics::fusedResiduals},
    {{9, "fused silus"}, &GraphStatistics::fusedSilus},
    {{10, "fused squeeze excitations"}, &GraphStatistics::fusedSqueezeExcitations},
    {{11, "fused source activations"}, &GraphStatistics::fusedSourceActivations},
};

// Most values or nodes a graph may have: far beyond any network, small enough that indices and
// counts stay in 32 bits everywhere.
constexpr uint32_t kMaxEntries = 1u << 24;

RecordWriter encodeNode(const GraphState& s, uint32_t index, archive::Writer& writer) {
  const GraphNode& n = s.nodes[index];
  RecordWriter r;
  if (n.removed) {  // its index is all that is kept
    r.u32(kKind, uint32_t(NodeKind::removed));
    return r;
  }
  NodeKind kind = NodeKind::removed;
  RecordWriter parameters;
  WeightSink weights(writer, n.name);
  if (!encodeImageNode(n.parameters, kind, parameters, weights) &&
      !encodeTensorNode(n.parameters, kind, parameters, weights))
    throw Error(ErrorCode::unsupported,
                s.what(n.name) + ": a " + kindName(n.parameters) +
                    " node (a kernel the caller made, Graph::unary) cannot be written to a "
                    ".vkcnn file; build it with the Graph's own builders");
  r.u32(kKind, uint32_t(kind));
  r.string(kNodeName, n.name);
  r.tensors(kNodeInputs, n.inputs);
  r.tensor(kNodeOutput, n.output);
  r.record(kParameters, parameters);
  return r;
}

RecordWriter encodeValue(const GraphTensorInfo& t) {
  RecordWriter r;
  r.string(kValueName, t.name);
  if (t.isTensor()) {
    r.u32s(kTensorShape, t.tensorShape);
  } else {
    const uint32_t shape[] = {t.shape.width, t.shape.height, t.shape.featureChannels};
    r.u32s(kShape, shape);
  }
  if (t.producer != kNone) r.u32(kProducer, t.producer);
  if (t.storedIn != kNone) r.u32(kStoredIn, t.storedIn);
  return r;
}

std::vector<RecordWriter> ports(const std::vector<uint32_t>& tensors,
                                const std::vector<std::string>& names) {
  std::vector<RecordWriter> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    RecordWriter r;
    r.tensor(kTensor, tensors[i]);
    r.string(kPortName, names[i]);
    out.push_back(std::move(r));
  }
  return out;
}

GraphOptions decodeOptions(const RecordReader& r) {
  GraphOptions o;
  o.channelFormat = enumerator(r, kChannelFormat, ChannelFormat::float32);
  o.optimize = r.u32(kOptimize, 1) != 0;
  o.accumulatorPrecision = enumerator(r, kAccumulatorPrecision, AccumulatorPrecision::float16,
                                      AccumulatorPrecision::float32);
  o.numberOfImages = r.u32(kNumberOfImages, 0);
  if (o.numberOfImages > 65536)
    r.fail(kNumberOfImages, std::to_string(o.numberOfImages) + " images is beyond any batch");
  o.label = r.string(kLabel, "graph");
  return o;
}

GraphTensorInfo decodeValue(const RecordReader& r, uint32_t values, uint32_t nodes) {
  GraphTensorInfo t;
  t.name = r.string(kValueName);
  if (r.has(kTensorShape)) {
    t.tensorShape = r.u32s(kTensorShape);
    if (t.tensorShape.empty() || t.tensorShape.size() > kMaxTensorRank)
      r.fail(kTensorShape, "rank " + std::to_string(t.tensorShape.size()) + " is not 1 to " +
                               std::to_string(kMaxTensorRank));
    uint64_t count = 1;
    for (uint32_t d : t.tensorShape) {
      if (!d) r.fail(kTensorShape, "an extent is 0");
      count *= d;
      if (count > (uint64_t(1) << 32)) r.fail(kTensorShape, "more than 2^32 elements");
    }
  } else {
    const std::vector<uint32_t> shape = r.u32s(kShape);
    if (shape.size() != 3) r.fail(kShape, "has " + std::to_string(shape.size()) + " values, not 3");
    for (uint32_t d : shape)
      if (!d || d > (1u << 20)) r.fail(kShape, "an extent of " + std::to_string(d));
    t.shape = {shape[0], shape[1], shape[2]};
  }
  t.producer = r.u32(kProducer, kNone);
  if (t.producer != kNone && t.producer >= nodes)
    r.fail(kProducer, "node " + std::to_string(t.producer) + " of " + std::to_string(nodes));
  t.storedIn = r.u32(kStoredIn, kNone);
  if (t.storedIn != kNone && t.storedIn >= values)
    r.fail(kStoredIn, "value " + std::to_string(t.storedIn) + " of " + std::to_string(values));
  return t;
}

GraphNode decodeNode(const RecordReader& r, uint32_t values, const WeightSource& weights) {
  GraphNode n;
  const uint32_t kind = r.u32(kKind);
  if (NodeKind(kind) == NodeKind::removed) {
    n.removed = true;
    n.parameters = IdentityNode{};
    return n;
  }
  n.name = r.string(kNodeName);
  n.inputs = r.tensors(kNodeInputs, values);
  if (n.inputs.size() > 4096) r.fail(kNodeInputs, std::to_string(n.inputs.size()) + " inputs");
  n.output = r.tensor(kNodeOutput, values);
  const RecordReader parameters = r.record(kParameters);
  if (!decodeImageNode(NodeKind(kind), parameters, weights, n.parameters) &&
      !decodeTensorNode(NodeKind(kind), parameters, weights, n.parameters))
    r.fail(kKind, "node kind " + std::to_string(kind) +
                      " is unknown to this vkcnn: a newer one compiled the model?");
  return n;
}

}  // namespace

void WeightSink::floats(RecordWriter& record, FieldKey key, std::span<const float> values) {
  if (values.empty()) return;
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = uint8_t(bits >> (8 * b));
  }
  record.tensor(key, writer_.addWeight(node_ + "/" + key.name, archive::WeightType::f32,
                                       {int64_t(values.size())}, std::move(bytes)));
}

const archive::Weight* WeightSource::find(const RecordReader& record, FieldKey key,
                                          uint64_t maxCount) const {
  if (!record.has(key)) return nullptr;
  const std::vector<archive::Weight>& all = archive_.weights();
  const archive::Weight& w = all[record.tensor(key, uint32_t(all.size()))];
  if (w.type != archive::WeightType::f32 || w.layout != 0 || w.dims.size() != 1)
    record.fail(key, "weight '" + w.name + "' is not a dense f32 vector");
  if (w.data.size() / 4 > maxCount)
    record.fail(key, "weight '" + w.name + "' has " + std::to_string(w.data.size() / 4) +
                         " values, more than the " + std::to_string(maxCount) + " it can have");
  return &w;
}

std::vector<float> WeightSource::floats(const RecordReader& record, FieldKey key,
                                        uint64_t maxCount) const {
  const archive::Weight* w = find(record, key, maxCount);
  if (!w) return {};
  const size_t count = w->data.size() / 4;
  if constexpr (std::endian::native == std::endian::little) {
    // One copy, no zero-fill first (a new vector's pages are written once).
    std::vector<float> out;
    out.reserve(count);
    const uint8_t* p = w->data.data();
    for (size_t i = 0; i < count; ++i, p += 4) {
      float v;
      std::memcpy(&v, p, 4);
      out.push_back(v);
    }
    return out;
  }
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t bits = archive::loadU32(w->data.data() + 4 * i);
    std::memcpy(&out[i], &bits, 4);
  }
  return out;
}

std::span<const float> WeightSource::mapped(const RecordReader& record, FieldKey key) const {
  if (!map_ || std::endian::native != std::endian::little) return {};
  const archive::Weight* w = find(record, key, UINT32_MAX);
  if (!w || reinterpret_cast<uintptr_t>(w->data.data()) % alignof(float)) return {};
  return {reinterpret_cast<const float*>(w->data.data()), w->data.size() / 4};
}

GraphOptions graphOptions(const Graph& graph) {
  return GraphAccess::state(graph).options;
}

bool isCompiledModel(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof(archive::kMagic) &&
         std::memcmp(bytes.data(), archive::kMagic, sizeof(archive::kMagic)) == 0;
}

void writeGraph(Graph& graph, archive::Writer& writer, const OnnxModelInfo* model) {
  GraphState& s = GraphAccess::state(graph);
  if (s.planned)
    throw Error(ErrorCode::misuse,
                "graph '" + s.options.label + "' is planned; write it before plan() or compile()");
  if (s.outputs.empty())
    throw Error(ErrorCode::invalidArgument, "graph '" + s.options.label + "' has no outputs");
  if (s.options.optimize && !s.optimized) s.optimize();
  s.optimized = true;

  RecordWriter options;
  options.u32(kChannelFormat, uint32_t(s.options.channelFormat));
  options.u32(kOptimize, s.options.optimize ? 1 : 0);
  options.u32(kAccumulatorPrecision, uint32_t(s.options.accumulatorPrecision));
  options.u32(kNumberOfImages, s.options.numberOfImages);
  options.string(kLabel, s.options.label);

  std::vector<RecordWriter> values, nodes;
  for (const GraphTensorInfo& t : s.tensors) values.push_back(encodeValue(t));
  for (uint32_t i = 0; i < s.nodes.size(); ++i) nodes.push_back(encodeNode(s, i, writer));
  RecordWriter statistics;
  for (const StatisticsField& f : kStatisticsFields) statistics.u32(f.key, s.statistics.*f.member);

  RecordWriter section;
  section.record(kOptions, options);
  section.records(kValues, values);
  section.records(kNodes, nodes);
  section.records(kInputs, ports(s.inputs, s.inputNames));
  section.records(kOutputs, ports(s.outputs, s.outputNames));
  section.record(kStatistics, statistics);
  if (model) section.record(kModelField, encodeModelInfo(*model));
  writer.addSection(uint32_t(archive::SectionKind::graph), section.finish());
}

Graph readGraph(const Context& context, const archive::Archive& archive, bool mapWeights) {
  const std::optional<std::span<const uint8_t>> bytes =
      archive.section(archive::SectionKind::graph);
  if (!bytes) archive.fail("has no graph section (GRPH): it holds no model to run");
  const RecordReader section(*bytes, archive.name() + ": graph");
  const GraphOptions options = decodeOptions(section.record(kOptions));
  Graph graph(context, options);
  GraphState& s = GraphAccess::state(graph);

  const std::vector<RecordReader> values = section.records(kValues);
  const std::vector<RecordReader> nodes = section.records(kNodes);
  if (values.size() > kMaxEntries || nodes.size() > kMaxEntries)
    section.fail("more than 2^24 values or nodes");
  const uint32_t valueCount = uint32_t(values.size()), nodeCount = uint32_t(nodes.size());
  for (const RecordReader& v : values) s.tensors.push_back(decodeValue(v, valueCount, nodeCount));
  const WeightSource weights(archive, mapWeights);
  for (const RecordReader& n : nodes) s.nodes.push_back(decodeNode(n, valueCount, weights));

  auto readPorts = [&](FieldKey key, std::vector<uint32_t>& tensors,
                       std::vector<std::string>& names) {
    for (const RecordReader& p : section.records(key)) {
      tensors.push_back(p.tensor(kTensor, valueCount));
      names.push_back(p.string(kPortName));
    }
  };
  readPorts(kInputs, s.inputs, s.inputNames);
  readPorts(kOutputs, s.outputs, s.outputNames);
  for (uint32_t i = 0; i < s.inputs.size(); ++i) s.tensors[s.inputs[i]].inputIndex = i;

  if (section.has(kStatistics)) {  // informative: describe() and inspect show it
    const RecordReader statistics = section.record(kStatistics);
    for (const StatisticsField& f : kStatisticsFields)
      s.statistics.*f.member = statistics.u32(f.key, 0);
  }

  checkGraph(s, [&](uint32_t node, const std::string& what) {
    if (node == kNone) section.fail(what);
    section.fail("node " + std::to_string(node) +
                 (s.nodes[node].name.empty() ? "" : " '" + s.nodes[node].name + "'") + ": " + what);
  });
  s.optimized = true;  // what was written was rewritten already
  return graph;
}

}  // namespace vkcnn::detail
