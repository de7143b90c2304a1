// The Graph in a .vkcnn file (docs/model-format.md#the-graph-section): writeGraph puts a Graph's
// nodes after its rewrites (optimize(): fusion done, batch normalisations folded into the
// convolutions' weights) into the GRPH section, their weights into WDAT; readGraph makes a Graph
// from a checked Archive, ready for plan() (which then only plans storage and the schedule) and
// compile(). Used by `vkcnn compile` (engine/tools/cli/compile.cpp), the Session's loader and the
// tests (tests/test_graph_serialize.cpp, tests/test_model_roundtrip.cpp).
//
// The file is hostile input: readGraph checks every index, count, kind and enumerator before a
// Graph holds it, and fails with Error(invalidModel) naming the file, the node and the field.
//
// The family files: serialize.cpp (the section, options, values, structure), serialize_image.cpp
// (the Image nodes), serialize_tensor.cpp (the Tensor nodes).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "archive/archive.h"
#include "archive/record.h"
#include "graph/nodes.h"
#include "vkcnn/graph.h"
#include "vkcnn/onnx.h"

namespace vkcnn::detail {

struct GraphState;

// Writes `graph` (its rewrites are run first, as plan() would) as the graph section of `writer`,
// and its weights; with `model`, the model's inputs and outputs as the importer described them
// (what a Session needs to take and give host tensors). Error(unsupported) naming the node for a
// node the format cannot hold (a kernel the caller made: Graph::unary). The graph can still be
// planned and compiled after.
VKCNN_API void writeGraph(Graph& graph, archive::Writer& writer,
                          const OnnxModelInfo* model = nullptr);
// The Graph of `archive`'s graph section, on `context`. Error(invalidModel) for a file without
// one or with anything wrong in it. `mapWeights`: the convolutions' weights are used where the
// archive's bytes are (on a little-endian host, where they are aligned), not copied: the caller
// keeps those bytes until the Graph has compiled. Otherwise every weight is copied.
VKCNN_API Graph readGraph(const Context& context, const archive::Archive& archive,
                          bool mapWeights = false);
// The Graph and the model's inputs and outputs (a file written without `model` has none:
// Error(invalidModel)). No device is needed until the Graph compiles.
VKCNN_API OnnxImport readModel(const Context& context, const archive::Archive& archive,
                               bool mapWeights = false);
// The model's inputs and outputs alone (what `inspect` and the CLI's option checks read).
VKCNN_API OnnxModelInfo readModelInfo(const archive::Archive& archive);

// The options a Graph was built (or read) with.
VKCNN_API GraphOptions graphOptions(const Graph& graph);

// Whether `bytes` start with the .vkcnn magic (what loaders tell a compiled model from an ONNX
// one by, whatever its file's extension).
VKCNN_API bool isCompiledModel(std::span<const uint8_t> bytes);

// Reaches a Graph's state (a friend of Graph).
struct GraphAccess {
  static GraphState& state(Graph& g);
  static const GraphState& state(const Graph& g);
};

// The model's inputs and outputs (serialize_model.cpp): the graph section's field 7.
inline constexpr archive::FieldKey kModelField{7, "model"};
archive::RecordWriter encodeModelInfo(const OnnxModelInfo& info);
OnnxModelInfo decodeModelInfo(const archive::RecordReader& r);

// Node kinds as the file keeps them: never renumber one, only add. 0 is a node optimize()
// removed (kept so that node indices stay those of the graph).
enum class NodeKind : uint32_t {
  removed = 0,
  convolution = 1,
  batchNormalization = 2,
  affine = 3,
  neuron = 4,
  arithmetic = 5,
  concat = 6,
  identity = 7,
  toTensor = 9,
  toImage = 10,
  constant = 11,
  transpose = 12,
  tensorUnary = 13,
  tensorBinary = 14,
  where = 15,
  slice = 16,
  tensorConcat = 17,
  squeezeExcitation = 18,
  // Image kernels (ImageKernelParameters)
  pooling = 32,
  pad = 33,
  resize = 34,
  window = 35,
  channelShuffle = 36,
  depthToSpace = 37,
  spaceToDepth = 38,
  instanceNormalization = 39,
  localResponseNormalization = 40,
  channelSoftmax = 41,
  convolutionTranspose = 42,
  // Tensor kernels (TensorKernelParameters)
  tensorSoftmax = 64,
  tensorReduction = 65,
  tensorArgReduction = 66,
  tensorMatMul = 67,
  tensorGemm = 68,
  tensorLayerNormalization = 69,
  tensorResize = 70,
  tensorGather = 71,
  tensorPad = 72,
};

// Where a node's weights go when written: each vector becomes a weight of WDAT (f32, dense), the
// field holding its index.
class WeightSink {
 public:
  WeightSink(archive::Writer& writer, std::string node) : writer_(writer), node_(std::move(node)) {}
  // Nothing is written for an empty vector (the reader gives an empty one for a missing field).
  void floats(archive::RecordWriter& record, archive::FieldKey key, std::span<const float> values);

 private:
  archive::Writer& writer_;
  std::string node_;
};

// Where a node's weights come from when read: the Archive's weights, checked (f32, dense, one
// axis, at most `maxCount` elements) and copied out of the mapping; or, where the reader maps
// weights, the mapping itself (`mapped`: empty where it cannot be, then `floats` copies).
class WeightSource {
 public:
  WeightSource(const archive::Archive& archive, bool map) : archive_(archive), map_(map) {}
  std::vector<float> floats(const archive::RecordReader& record, archive::FieldKey key,
                            uint64_t maxCount = UINT32_MAX) const;
  std::span<const float> mapped(const archive::RecordReader& record, archive::FieldKey key) const;

 private:
  const archive::Weight* find(const archive::RecordReader& record, archive::FieldKey key,
                              uint64_t maxCount) const;
  const archive::Archive& archive_;
  bool map_;
};

// An enumerator of type E up to `last`, or a failure naming the field.
template <class E>
E enumerator(const archive::RecordReader& r, archive::FieldKey key, E last) {
  const uint32_t v = r.u32(key);
  if (v > uint32_t(last))
    r.fail(key, std::to_string(v) + " is no known value (the last is " +
                    std::to_string(uint32_t(last)) + "): a newer vkcnn wrote it?");
  return E(v);
}
template <class E>
E enumerator(const archive::RecordReader& r, archive::FieldKey key, E last, E fallback) {
  return r.has(key) ? enumerator(r, key, last) : fallback;
}

// Shared descriptors (serialize_image.cpp).
archive::RecordWriter encodeNeuron(const NeuronDescriptor& n);
NeuronDescriptor decodeNeuron(const archive::RecordReader& r);
archive::RecordWriter encodePadding(const Padding& p);
Padding decodePadding(const archive::RecordReader& r);

// One node's kind and parameters (a record), per family. encode*: false when `p` is not of the
// family. decode*: false when `kind` is not of the family.
bool encodeImageNode(const NodeParameters& p, NodeKind& kind, archive::RecordWriter& record,
                     WeightSink& weights);
bool decodeImageNode(NodeKind kind, const archive::RecordReader& record,
                     const WeightSource& weights, NodeParameters& p);
bool encodeTensorNode(const NodeParameters& p, NodeKind& kind, archive::RecordWriter& record,
                      WeightSink& weights);
bool decodeTensorNode(NodeKind kind, const archive::RecordReader& record,
                      const WeightSource& weights, NodeParameters& p);

// The checks of a decoded graph that need its values (serialize_check.cpp): each live node's
// inputs and output, their kinds (Image or Tensor) and the parameters that index them; that the
// nodes form no cycle. `fail(node, what)` throws.
void checkGraph(const GraphState& s, const std::function<void(uint32_t, const std::string&)>& fail);

}  // namespace vkcnn::detail
