// GraphState: everything a Graph holds (its nodes and values, options, statistics, and after
// plan() its schedule), with the small queries every phase asks of it. Each phase's member
// functions live in that phase's file: building in build.cpp and build_tensor.cpp, the rewrites in
// optimize.cpp, concatenation storage in storage.cpp, kernels in lower.cpp, levels in
// schedule.cpp; encoding (plan.cpp, encode.cpp) only reads it.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "graph/nodes.h"
#include "vkcnn/context.h"
#include "vkcnn/error.h"

namespace vkcnn::detail {

struct GraphState {
  Context context;
  GraphOptions options;
  std::vector<GraphNode> nodes;
  std::vector<GraphTensorInfo> tensors;
  std::vector<uint32_t> inputs, outputs;
  std::vector<std::string> inputNames, outputNames;
  // optimize() has run (plan(), or writeGraph; a graph read from a .vkcnn file was rewritten when
  // it was written): plan() does not run it again.
  bool optimized = false;
  bool planned = false;   // plan(): rewritten, stored and scheduled; no node can be added
  bool compiled = false;  // compile(): planned, and its kernels made
  GraphStatistics statistics;
  // The schedule (plan()): live nodes in levels; the nodes of one level are independent of
  // each other and share one barrier.
  std::vector<std::vector<uint32_t>> levels;
  // Per root tensor: kernels that read its image (its readCount as a temporary).
  std::vector<uint32_t> rootReads;

  std::string what(const std::string& name) const {
    return "graph '" + options.label + "' node '" + name + "'";
  }

  const GraphTensorInfo& tensor(GraphTensor t, const std::string& node) const {
    if (t.id >= tensors.size())
      throw Error(
          ErrorCode::invalidArgument,
          what(node) + ": input tensor " + std::to_string(t.id) + " does not belong to this graph");
    return tensors[t.id];
  }

  void requireBuilding(const std::string& node) const {
    if (planned)
      throw Error(ErrorCode::misuse, what(node) + ": the graph is " +
                                         (compiled ? "compiled" : "planned") +
                                         "; nodes can no longer be added");
  }

  // A node whose output is a Tensor of `shape`.
  GraphTensor addTensorNode(GraphNode node, std::vector<uint32_t> shape);
  // Records node with its output value `info` (named after the node, produced by it).
  GraphTensor append(GraphNode node, GraphTensorInfo info);

  // A value as a Tensor ([N, C, H, W] for an Image: one conversion per Image, shared by its
  // readers) or as an Image (a Tensor of rank 4 whose first axis is the batch).
  GraphTensor asTensor(GraphTensor t, const std::string& node);
  GraphTensor asImage(GraphTensor t, const std::string& node);
  void requireBatch(const std::string& node) const {
    if (!options.numberOfImages)
      throw Error(ErrorCode::invalidArgument,
                  what(node) + ": Tensor values hold the batch; set GraphOptions::numberOfImages");
  }
  static std::string shapeText(const std::vector<uint32_t>& shape) {
    std::string text = "[";
    for (size_t k = 0; k < shape.size(); ++k) text += (k ? ", " : "") + std::to_string(shape[k]);
    return text + "]";
  }
  std::map<uint32_t, uint32_t> tensorOf, imageOf;  // conversions made so far
  bool hasTensors() const {
    return std::any_of(tensors.begin(), tensors.end(),
                       [](const GraphTensorInfo& t) { return t.isTensor(); });
  }

  GraphTensor addNode(GraphNode node, TensorShape shape);
  // An Image kernel node on x (build.cpp), its output shape from imageKernelShape.
  GraphTensor addImageKernel(GraphTensor x, ImageKernelParameters parameters,
                             const std::string& name);
  // The channels a kernel reads from `in`: [first, first + maxCount) clipped to its channels.
  uint32_t channelWindow(uint32_t first, uint32_t maxCount, TensorShape in,
                         const std::string& node) const;
  // The destination of `kernel` for a source of shape `in` (its channel window included).
  TensorShape kernelShape(const UnaryKernel& kernel, TensorShape in, const std::string& node) const;
  // The output shape of an Image kernel node on `in` (lower.cpp: the kernel's own rules).
  TensorShape imageKernelShape(const ImageKernelParameters& parameters, TensorShape in,
                               const std::string& node) const;

  std::string nodeName(const std::string& name, const char* kind) const {
    return name.empty() ? std::string(kind) + " " + std::to_string(nodes.size()) : name;
  }

  // A node about to be added: its name (the one given, or its kind and index), once the graph is
  // known to still take nodes.
  GraphNode newNode(const std::string& name, const char* kind) const {
    GraphNode n;
    n.name = nodeName(name, kind);
    requireBuilding(n.name);
    return n;
  }

  // Consumers of each tensor: node indices, one entry per input slot.
  std::vector<std::vector<uint32_t>> consumers() const {
    std::vector<std::vector<uint32_t>> c(tensors.size());
    for (uint32_t n = 0; n < nodes.size(); ++n)
      if (!nodes[n].removed)
        for (uint32_t t : nodes[n].inputs) c[t].push_back(n);
    return c;
  }

  bool isOutput(uint32_t t) const {
    return std::find(outputs.begin(), outputs.end(), t) != outputs.end();
  }

  // Node `consumer` (which read `absorbed`, produced by `producer`) disappears: the producer now
  // produces the consumer's output.
  void absorb(uint32_t producer, uint32_t consumer) {
    GraphNode& c = nodes[consumer];
    nodes[producer].output = c.output;
    tensors[c.output].producer = producer;
    c.removed = true;
  }

  void replaceUses(uint32_t from, uint32_t to) {
    for (GraphNode& n : nodes)
      for (uint32_t& t : n.inputs)
        if (t == from) t = to;
    for (uint32_t& t : outputs)
      if (t == from) t = to;
  }

  // The tensor whose image holds `t`, and the channel `t` starts at in it.
  uint32_t rootOf(uint32_t t, uint32_t* channel = nullptr) const {
    if (channel) *channel = tensors[t].channelOffset;
    return tensors[t].storedIn == kNone ? t : tensors[t].storedIn;
  }

  // The images kernels write: the roots of the live nodes' outputs, once each.
  std::vector<uint32_t> producedImages(bool tensorValues = false) const {
    std::vector<uint32_t> roots;
    for (const GraphNode& n : nodes)
      if (!n.removed && tensors[rootOf(n.output)].isTensor() == tensorValues &&
          !n.as<ConstantNode>())
        roots.push_back(rootOf(n.output));
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    return roots;
  }

  // Kernels on the longest chain from the graph's inputs to tensor t (memo per node).
  uint32_t chainLength(uint32_t t, std::vector<uint32_t>& memo) const {
    const uint32_t p = tensors[t].producer;
    if (p == kNone) return 0;
    if (memo[p] == kNone) {
      uint32_t longest = 0;
      for (uint32_t in : nodes[p].inputs) longest = std::max(longest, chainLength(in, memo));
      memo[p] = longest + 1;
    }
    return memo[p];
  }

  // optimize.cpp: the rewrites, in the order optimize() runs them.
  void optimize();
  void removeIdentities();
  void fuseAffinesAndNeurons();
  void fuseResiduals();
  // Offers every multiply without a neuron of two Image operands to fuse(node, a, b), with its
  // operands in both orders, until fuse returns true (it fused the node).
  template <class Fuse>
  void forEachPlainMultiply(Fuse&& fuse) {
    for (GraphNode& n : nodes) {
      const auto* mul = n.as<ArithmeticNode>();
      if (n.removed || !mul || mul->operation != ArithmeticOperation::multiply ||
          mul->neuron.type != NeuronType::none || n.inputs.size() != 2)
        continue;
      for (uint32_t k = 0; k < 2; ++k)
        if (fuse(n, n.inputs[k], n.inputs[1 - k])) break;
    }
  }
  void fuseSilu();
  void fuseSqueezeExcitation();
  void fuseSourceActivations();
  void removeUnused();
  // storage.cpp
  void planConcatenations(bool share);
  // lower.cpp
  void lower();
  void lowerConvolutions();
  void lowerNode(GraphNode& n, TensorDataType dataType);
  // schedule.cpp
  void schedule();
  bool lowersToTensorKernel(const GraphNode& n) const;
  uint32_t kernelsOf(const GraphNode& n) const;
};

}  // namespace vkcnn::detail
