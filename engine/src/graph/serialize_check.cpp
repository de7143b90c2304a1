// The checks of a Graph read from a .vkcnn file (serialize.h's checkGraph) that need more than one
// record: every value a node reads has a live producer (or is a graph input), each node's output
// is its own, each node kind has its number of inputs and the kinds of values (Image or Tensor) it
// takes, the parameters that index values fit them (axes, permutations, channel offsets), and the
// nodes form no cycle and no chain deeper than planning's recursion allows. What these checks leave
// (a destination's exact extents) is the kernels' to check when they encode, as for any caller's
// images; nothing here trusts the file.
#include <algorithm>
#include <numeric>

#include "graph/serialize.h"
#include "graph/state.h"

namespace vkcnn::detail {
namespace {

using Fail = std::function<void(uint32_t, const std::string&)>;

std::string count(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// The inputs a node of this kind takes: [least, most], and whether they and the output are
// Tensors.
struct Arity {
  size_t least, most;
  bool tensorInputs, tensorOutput;
};

Arity arityOf(const NodeParameters& p) {
  constexpr size_t many = 4096;
  if (std::holds_alternative<ConvolutionNode>(p)) return {1, 2, false, false};
  if (std::holds_alternative<ArithmeticNode>(p) || std::holds_alternative<SqueezeExcitationNode>(p))
    return {2, 2, false, false};
  if (std::holds_alternative<ConcatNode>(p)) return {1, many, false, false};
  if (std::holds_alternative<ToTensorNode>(p)) return {1, 1, false, true};
  if (std::holds_alternative<ToImageNode>(p)) return {1, 1, true, false};
  if (std::holds_alternative<ConstantNode>(p)) return {0, 0, true, true};
  if (std::holds_alternative<TensorBinaryNode>(p)) return {2, 2, true, true};
  if (std::holds_alternative<WhereNode>(p)) return {3, 3, true, true};
  if (std::holds_alternative<TensorConcatNode>(p)) return {1, many, true, true};
  if (const auto* k = std::get_if<TensorKernelNode>(&p)) {
    const TensorKernelParameters& t = k->parameters;
    if (std::holds_alternative<TensorMatMulParameters>(t) ||
        std::holds_alternative<TensorGatherParameters>(t))
      return {2, 2, true, true};
    if (std::holds_alternative<GemmDescriptor>(t) ||
        std::holds_alternative<TensorLayerNormalizationParameters>(t))
      return {2, 3, true, true};
    return {1, 1, true, true};
  }
  if (std::holds_alternative<TransposeNode>(p) || std::holds_alternative<TensorUnaryNode>(p) ||
      std::holds_alternative<SliceNode>(p))
    return {1, 1, true, true};
  return {1, 1, false, false};  // batch normalisation, affine, neuron, identity, Image kernels
}

// The parameters of node i that index its values' axes or channels.
void checkIndexing(const GraphState& s, uint32_t i, const Fail& fail) {
  const GraphNode& n = s.nodes[i];
  const GraphTensorInfo& out = s.tensors[n.output];
  auto rank = [&](size_t k) { return s.tensors[n.inputs[k]].tensorShape.size(); };
  if (const auto* c = n.as<ConcatNode>()) {
    if (c->inputOffsets.size() != n.inputs.size())
      fail(i, count(c->inputOffsets.size(), "input offset") + " for " +
                  count(n.inputs.size(), "input"));
    uint64_t channel = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (c->inputOffsets[k] != channel)
        fail(i, "input " + std::to_string(k) + " is at channel " +
                    std::to_string(c->inputOffsets[k]) + ", not " + std::to_string(channel));
      channel += s.tensors[n.inputs[k]].shape.featureChannels;
    }
    if (channel != out.shape.featureChannels)
      fail(i, "the inputs have " + std::to_string(channel) + " channels, the output " +
                  std::to_string(out.shape.featureChannels));
  } else if (const auto* t = n.as<TransposeNode>()) {
    std::vector<uint32_t> sorted = t->perm;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> identity(rank(0));
    std::iota(identity.begin(), identity.end(), 0u);
    if (sorted != identity || out.tensorShape.size() != rank(0))
      fail(i, "perm is not a permutation of the input's " + std::to_string(rank(0)) + " axes");
  } else if (const auto* slice = n.as<SliceNode>()) {
    for (int32_t a : slice->axes)
      if (a < 0 || size_t(a) >= rank(0) || out.tensorShape.size() != rank(0))
        fail(i, "axis " + std::to_string(a) + " of a rank-" + std::to_string(rank(0)) + " input");
  } else if (const auto* concat = n.as<TensorConcatNode>()) {
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (concat->axis >= rank(k) || rank(k) != out.tensorShape.size())
        fail(i, "axis " + std::to_string(concat->axis) + " of a rank-" + std::to_string(rank(k)) +
                    " input, into a rank-" + std::to_string(out.tensorShape.size()) + " output");
  } else if (const auto* c = n.as<ConstantNode>()) {
    uint64_t elements = 1;
    for (uint32_t d : out.tensorShape) elements *= d;
    if (c->values.size() != elements)
      fail(i, count(c->values.size(), "value") + " for " + count(elements, "element"));
  } else if (const auto* k = n.as<TensorKernelNode>()) {
    const auto* pad = std::get_if<TensorPadParameters>(&k->parameters);
    if (pad && pad->pads.size() != 2 * rank(0))
      fail(i, count(pad->pads.size(), "pad") + " for a rank-" + std::to_string(rank(0)) + " input");
  }
}

// Where value t comes from: a graph input, or a live node whose output it is (or, for a view, its
// root's).
void checkSource(const GraphState& s, uint32_t t, uint32_t reader, const Fail& fail) {
  const GraphTensorInfo& v = s.tensors[t];
  const uint32_t root = v.storedIn == kNone ? t : v.storedIn;
  if (v.producer == kNone) {
    if (v.inputIndex == kNone)
      fail(reader, "value " + std::to_string(t) + " has no producer and is no graph input");
    return;
  }
  const GraphNode& p = s.nodes[v.producer];
  if (p.removed || p.output != root)
    fail(reader, "value " + std::to_string(t) + " names node " + std::to_string(v.producer) +
                     " as its producer, which does not produce it");
}

void checkValues(const GraphState& s, const Fail& fail) {
  for (uint32_t t = 0; t < s.tensors.size(); ++t) {
    const GraphTensorInfo& v = s.tensors[t];
    if (v.storedIn == kNone) continue;
    const GraphTensorInfo& root = s.tensors[v.storedIn];
    uint64_t a = 1, b = 1;
    for (uint32_t d : v.tensorShape) a *= d;
    for (uint32_t d : root.tensorShape) b *= d;
    if (!v.isTensor() || !root.isTensor() || root.storedIn != kNone || a != b)
      fail(kNone, "value " + std::to_string(t) + " is no view of value " +
                      std::to_string(v.storedIn) + " (a reshape of a Tensor of as many elements)");
  }
  if (s.hasTensors() && !s.options.numberOfImages)
    fail(kNone, "Tensor values without the options' number of images");
  if (s.outputs.empty()) fail(kNone, "the graph has no outputs");
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    const GraphTensorInfo& v = s.tensors[s.inputs[k]];
    if (v.isTensor() || v.producer != kNone || v.inputIndex != k)
      fail(kNone, "input " + std::to_string(k) +
                      " is no Image without a producer, or is listed "
                      "twice");
  }
  for (uint32_t t : s.outputs) {
    if (s.tensors[t].isTensor())
      fail(kNone, "output value " + std::to_string(t) + " is a Tensor, not an Image");
    checkSource(s, t, kNone, fail);
  }
}

// Kahn's algorithm over the live nodes: every node's producers come before it.
void checkAcyclic(const GraphState& s, const Fail& fail) {
  const size_t count = s.nodes.size();
  std::vector<uint32_t> waiting(count, 0);
  std::vector<std::vector<uint32_t>> readers(count);
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < count; ++i) {
    if (s.nodes[i].removed) continue;
    for (uint32_t t : s.nodes[i].inputs)
      if (const uint32_t p = s.tensors[t].producer; p != kNone) {
        ++waiting[i];
        readers[p].push_back(i);
      }
    if (!waiting[i]) ready.push_back(i);
  }
  // The longest chain too: planning walks it recursively (GraphState::chainLength), so a file may
  // not make it deeper than a thread's stack holds.
  constexpr uint32_t kMaxChain = 16384;
  std::vector<uint32_t> chain(count, 1);
  size_t done = 0;
  while (!ready.empty()) {
    const uint32_t i = ready.back();
    ready.pop_back();
    ++done;
    if (chain[i] > kMaxChain)
      fail(i, "it ends a chain of more than " + std::to_string(kMaxChain) +
                  " nodes, beyond what this vkcnn plans");
    for (uint32_t r : readers[i]) {
      chain[r] = std::max(chain[r], chain[i] + 1);
      if (!--waiting[r]) ready.push_back(r);
    }
  }
  const size_t live = size_t(
      std::count_if(s.nodes.begin(), s.nodes.end(), [](const GraphNode& n) { return !n.removed; }));
  if (done != live)
    fail(kNone, "the nodes form a cycle (" + std::to_string(live - done) + " nodes on it)");
}

}  // namespace

void checkGraph(const GraphState& s, const Fail& fail) {
  checkValues(s, fail);
  for (uint32_t i = 0; i < s.nodes.size(); ++i) {
    const GraphNode& n = s.nodes[i];
    if (n.removed) continue;
    const GraphTensorInfo& out = s.tensors[n.output];
    if (out.producer != i || out.storedIn != kNone || out.inputIndex != kNone)
      fail(i, "its output, value " + std::to_string(n.output) + ", is not its own");
    const Arity a = arityOf(n.parameters);
    if (n.inputs.size() < a.least || n.inputs.size() > a.most)
      fail(i, "node kind '" + std::string(kindName(n.parameters)) + "' with " +
                  count(n.inputs.size(), "input"));
    if (out.isTensor() != a.tensorOutput)
      fail(i, std::string("its output is ") + (out.isTensor() ? "a Tensor" : "an Image"));
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (s.tensors[n.inputs[k]].isTensor() != a.tensorInputs)
        fail(i, "input " + std::to_string(k) + " is " +
                    (a.tensorInputs ? "an Image, not a Tensor" : "a Tensor, not an Image"));
      checkSource(s, n.inputs[k], i, fail);
    }
    checkIndexing(s, i, fail);
  }
  checkAcyclic(s, fail);
}

}  // namespace vkcnn::detail
