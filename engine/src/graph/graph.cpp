// The Graph: nodes as built, the rewrites of compile() (the one place where batch normalisations,
// affines, neurons and residual adds are fused), concatenations turned into storage, lowering to
// kernels, the level schedule, and encoding. See vkcnn/graph.h for the contract.
#include "vkcnn/graph.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <cmath>
#include <functional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <variant>

#include "kernels/kernel_encoding.h"
#include "vkcnn/error.h"
#include "vkcnn/pooling.h"
#include "vkcnn/squeeze_excitation.h"
#include "vkcnn/tensor_ops.h"
#include "vulkan/context_impl.h"
#include "vulkan/load_clock.h"

namespace vkcnn {
namespace detail {

constexpr uint32_t kNone = UINT32_MAX;

// ---- nodes: one parameter struct per kind ------------------------------------------------------

// A convolution or fully-connected layer; optimize() folds the batch normalisations and affines
// after it into its weights and bias (its descriptor's own batchNormalization, if the caller gave
// one, stays the kernel's).
struct ConvolutionNode {
  ConvolutionDescriptor descriptor;
  std::vector<float> weights, bias;
  Padding padding;
  bool fullyConnected = false;
  uint32_t foldedBatchNormalizations = 0, foldedAffines = 0;
};
// Nodes that may take a neuron after them (optimize()).
struct BatchNormalizationNode {
  BatchNormalizationParameters parameters;
  NeuronDescriptor neuron;
};
struct AffineNode {
  std::vector<float> scale, shift;  // one value, or one per channel
  NeuronDescriptor neuron;
};
struct NeuronNode {
  NeuronDescriptor neuron;
};
struct ArithmeticNode {
  ArithmeticOperation operation = ArithmeticOperation::add;
  NeuronDescriptor neuron;
};
// A squeeze-and-excitation block after its global average pool (optimize()): inputs x and the
// pool's means.
struct SqueezeExcitationNode {
  SqueezeExcitationDescriptor descriptor;
  std::vector<float> fc1Weights, fc1Bias, fc2Weights, fc2Bias;
};
struct ConcatNode {
  std::vector<uint32_t> inputOffsets;  // channel offset of each input
  // The inputs this node copies into its storage (see planConcatenations), each with its channel
  // in the storage's root image.
  struct Copy {
    uint32_t tensor, channel, slot;  // slot: of the family's root
  };
  std::vector<Copy> copies;
};
struct IdentityNode {};
struct KernelNode {
  std::shared_ptr<UnaryKernel> kernel;
};
// Tensor values: conversions at the boundaries between Images and Tensors ([N, C, H, W]), and
// the Tensor kernels.
struct ToTensorNode {};
struct ToImageNode {};
struct ConstantNode {
  std::vector<float> values;
  Tensor tensor;  // lower()
};
struct TransposeNode {
  std::vector<uint32_t> perm;
};
struct TensorUnaryNode {
  TensorUnaryOperation operation = TensorUnaryOperation::neuron;
  NeuronDescriptor neuron;
};
struct TensorBinaryNode {
  TensorBinaryOperation operation = TensorBinaryOperation::add;
};
struct WhereNode {};
struct SliceNode {
  std::vector<int32_t> axes;
  std::vector<int64_t> starts, ends, steps;
};
struct TensorConcatNode {
  uint32_t axis = 0;
};
// Every other Tensor kernel (softmax, reductions, matrix products, ...): made with the node, as it
// needs no lowering; `run` records it from the inputs into the output.
struct TensorKernelNode {
  const char* kind = "tensor kernel";
  std::shared_ptr<TensorKernel> kernel;
  std::function<void(CommandBuffer&, TensorKernel&, const std::vector<Tensor>&, const Tensor&)> run;
};

using NodeParameters =
    std::variant<ConvolutionNode, BatchNormalizationNode, AffineNode, NeuronNode, ArithmeticNode,
                 ConcatNode, IdentityNode, KernelNode, ToTensorNode, ToImageNode, ConstantNode,
                 TransposeNode, TensorUnaryNode, TensorBinaryNode, WhereNode, SliceNode,
                 TensorConcatNode, TensorKernelNode, SqueezeExcitationNode>;

struct GraphNode {
  std::string name;
  std::vector<uint32_t> inputs;
  uint32_t output = kNone;
  bool removed = false;
  NodeParameters parameters;

  // Lowered kernels (compile()).
  std::shared_ptr<UnaryKernel> unary;
  std::shared_ptr<BinaryKernel> binary;
  std::shared_ptr<Neuron> copy;  // concat: copies the inputs no producer writes in place
  std::shared_ptr<TensorKernel> tensorKernel;

  template <class T>
  T* as() {
    return std::get_if<T>(&parameters);
  }
  template <class T>
  const T* as() const {
    return std::get_if<T>(&parameters);
  }
};

const char* kindName(const NodeParameters& p) {
  struct Names {
    const char* operator()(const ConvolutionNode& c) const {
      return c.fullyConnected ? "fully-connected" : "convolution";
    }
    const char* operator()(const BatchNormalizationNode&) const { return "batch normalization"; }
    const char* operator()(const AffineNode&) const { return "affine"; }
    const char* operator()(const NeuronNode&) const { return "neuron"; }
    const char* operator()(const ArithmeticNode&) const { return "arithmetic"; }
    const char* operator()(const ConcatNode&) const { return "concat"; }
    const char* operator()(const IdentityNode&) const { return "identity"; }
    const char* operator()(const KernelNode&) const { return "kernel"; }
    const char* operator()(const ToTensorNode&) const { return "image to tensor"; }
    const char* operator()(const ToImageNode&) const { return "tensor to image"; }
    const char* operator()(const ConstantNode&) const { return "constant"; }
    const char* operator()(const TransposeNode&) const { return "transpose"; }
    const char* operator()(const TensorUnaryNode&) const { return "tensor unary"; }
    const char* operator()(const TensorBinaryNode&) const { return "tensor binary"; }
    const char* operator()(const WhereNode&) const { return "where"; }
    const char* operator()(const SliceNode&) const { return "slice"; }
    const char* operator()(const TensorConcatNode&) const { return "tensor concat"; }
    const char* operator()(const TensorKernelNode& k) const { return k.kind; }
    const char* operator()(const SqueezeExcitationNode&) const { return "squeeze excitation"; }
  };
  return std::visit(Names{}, p);
}

// y = scale[c] * x + shift[c] of a batch normalisation, in double as the convolution folds it.
void affineOf(const BatchNormalizationParameters& p, std::vector<double>& scale,
              std::vector<double>& shift) {
  scale.resize(p.variance.size());
  shift.resize(p.variance.size());
  for (size_t c = 0; c < scale.size(); ++c) {
    const double gamma = p.gamma.empty() ? 1.0 : p.gamma[c];
    const double beta = p.beta.empty() ? 0.0 : p.beta[c];
    scale[c] = gamma / std::sqrt(double(p.variance[c]) + double(p.epsilon));
    shift[c] = beta - scale[c] * p.mean[c];
  }
}

template <class T>
double channel(const std::vector<T>& v, size_t c) {
  return double(v.size() == 1 ? v[0] : v[c]);
}

// The node's scale and shift, for a batch normalisation or an affine.
void affineOf(const GraphNode& n, std::vector<double>& scale, std::vector<double>& shift) {
  if (const auto* bn = n.as<BatchNormalizationNode>())
    return affineOf(bn->parameters, scale, shift);
  const auto& a = *n.as<AffineNode>();
  scale.assign(a.scale.begin(), a.scale.end());
  shift.assign(a.shift.begin(), a.shift.end());
}

// W = w * scale[o], B = b * scale[o] + shift[o] per output channel.
void foldInto(ConvolutionNode& c, const std::vector<double>& scale,
              const std::vector<double>& shift) {
  const uint32_t outputs = c.descriptor.outputFeatureChannels;
  const size_t perOutput = c.weights.size() / outputs;
  if (c.bias.empty()) c.bias.assign(outputs, 0.f);
  for (uint32_t o = 0; o < outputs; ++o) {
    const double s = channel(scale, o);
    for (size_t k = 0; k < perOutput; ++k) {
      float& w = c.weights[o * perOutput + k];
      w = float(w * s);
    }
    c.bias[o] = float(c.bias[o] * s + channel(shift, o));
  }
}

struct GraphTensorInfo {
  TensorShape shape;
  std::string name;
  uint32_t producer = kNone;  // node index; kNone for graph inputs
  uint32_t inputIndex = kNone;
  // This tensor lives in root tensor `storedIn`'s image from `channelOffset` on: a concatenation's
  // input written in place by its producer, or a concatenation sharing a larger one's storage.
  uint32_t storedIn = kNone;
  uint32_t channelOffset = 0;
  // A concatenation's output: the slots [firstSlot, +slotCount) of the root concatenation
  // `family` (a node index) that it covers.
  uint32_t family = kNone, firstSlot = 0, slotCount = 0;
  // Non-empty: a Tensor value of this shape (the batch included; `shape` is unused). A reshape is
  // a view: stored in its source's root (`storedIn`), written by the root's producer.
  std::vector<uint32_t> tensorShape;
  bool isTensor() const { return !tensorShape.empty(); }
};

// Runs body(0) .. body(count - 1) on up to hardware_concurrency threads, the calling one among
// them, each taking the next index (layers differ in size by orders of magnitude). Workers enrol
// in the calling thread's UploadBatch. The first exception is rethrown once all have stopped.
// VKCNN_LOAD_THREADS=N caps the threads (1: on the calling thread alone).
template <class F>
void parallelFor(ContextImpl& context, size_t count, F&& body) {
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (const char* cap = std::getenv("VKCNN_LOAD_THREADS"); cap && std::atoi(cap) > 0)
    threads = size_t(std::atoi(cap));
  threads = std::min(threads, count);
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  UploadBatch* batch = context.uploadBatches().current();
  const auto owner = std::this_thread::get_id();
  auto work = [&] {
    std::optional<UploadBatch::Enrolment> enrolment;
    if (batch && std::this_thread::get_id() != owner) enrolment.emplace(*batch);
    for (size_t i; (i = next.fetch_add(1)) < count;) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard lock(failureMutex);
        if (!failure) failure = std::current_exception();
        next = count;  // the others stop after their current item
      }
    }
  };
  std::vector<std::thread> workers;
  try {
    for (size_t t = 1; t < threads; ++t) workers.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads to be had: those there are do the work.
  }
  work();
  for (std::thread& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
}

struct GraphState {
  Context context;
  GraphOptions options;
  std::vector<GraphNode> nodes;
  std::vector<GraphTensorInfo> tensors;
  std::vector<uint32_t> inputs, outputs;
  std::vector<std::string> inputNames, outputNames;
  bool compiled = false;
  GraphStatistics statistics;
  // The schedule (compile()): live nodes in levels; the nodes of one level are independent of
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
    if (compiled)
      throw Error(ErrorCode::misuse,
                  what(node) + ": the graph is compiled; nodes can no longer be added");
  }

  // A node whose output is a Tensor of `shape`.
  GraphTensor addTensorNode(GraphNode node, std::vector<uint32_t> shape) {
    if (shape.empty() || shape.size() > kMaxTensorRank)
      throw Error(ErrorCode::invalidArgument, what(node.name) + ": a tensor of rank " +
                                                  std::to_string(shape.size()) + " (1 to " +
                                                  std::to_string(kMaxTensorRank) + ")");
    uint64_t count = 1;
    for (uint32_t d : shape) {
      if (d == 0)
        throw Error(ErrorCode::invalidArgument, what(node.name) + ": its output would be empty");
      count *= d;
      if (count > uint64_t(INT32_MAX))
        throw Error(ErrorCode::limitExceeded,
                    what(node.name) + ": its output has more than 2^31 - 1 elements");
    }
    GraphTensorInfo info;
    info.tensorShape = std::move(shape);
    info.name = node.name;
    info.producer = uint32_t(nodes.size());
    node.output = uint32_t(tensors.size());
    tensors.push_back(info);
    nodes.push_back(std::move(node));
    statistics.nodes++;
    return GraphTensor{nodes.back().output};
  }

  // A value as a Tensor ([N, C, H, W] for an Image: one conversion per Image, shared by its
  // readers) or as an Image (a Tensor of rank 4 whose first axis is the batch).
  GraphTensor asTensor(GraphTensor t, const std::string& node) {
    const GraphTensorInfo& info = tensor(t, node);
    if (info.isTensor()) return t;
    if (auto it = tensorOf.find(t.id); it != tensorOf.end()) return GraphTensor{it->second};
    requireBatch(node);
    GraphNode n;
    n.name = info.name + " (as tensor)";
    n.inputs = {t.id};
    n.parameters = ToTensorNode{};
    const TensorShape sh = info.shape;
    GraphTensor out = addTensorNode(
        std::move(n), {options.numberOfImages, sh.featureChannels, sh.height, sh.width});
    tensorOf[t.id] = out.id;
    imageOf[out.id] = t.id;  // and back, for free
    return out;
  }
  GraphTensor asImage(GraphTensor t, const std::string& node) {
    const GraphTensorInfo& info = tensor(t, node);
    if (!info.isTensor()) return t;
    if (auto it = imageOf.find(t.id); it != imageOf.end()) return GraphTensor{it->second};
    const std::vector<uint32_t> shape = info.tensorShape;
    requireBatch(node);
    if (shape.size() != 4 || shape[0] != options.numberOfImages)
      throw Error(ErrorCode::invalidArgument,
                  what(node) + ": the tensor '" + info.name + "' " + shapeText(shape) +
                      " is not an image [N, C, H, W] of " + std::to_string(options.numberOfImages) +
                      " images; reshape it first");
    GraphNode n;
    n.name = info.name + " (as image)";
    n.inputs = {t.id};
    n.parameters = ToImageNode{};
    GraphTensor out = addNode(std::move(n), {shape[3], shape[2], shape[1]});
    imageOf[t.id] = out.id;
    tensorOf[out.id] = t.id;
    return out;
  }
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

  GraphTensor addNode(GraphNode node, TensorShape shape) {
    if (!shape.width || !shape.height || !shape.featureChannels)
      throw Error(ErrorCode::invalidArgument, what(node.name) + ": its output would be empty (" +
                                                  std::to_string(shape.width) + "x" +
                                                  std::to_string(shape.height) + "x" +
                                                  std::to_string(shape.featureChannels) + ")");
    GraphTensorInfo info;
    info.shape = shape;
    info.name = node.name;
    info.producer = uint32_t(nodes.size());
    node.output = uint32_t(tensors.size());
    tensors.push_back(info);
    nodes.push_back(std::move(node));
    statistics.nodes++;
    return GraphTensor{nodes.back().output};
  }

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

  void optimize();
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
  void planConcatenations(bool share);
  void lower();
  void schedule();
};

void GraphState::optimize() {
  // Identity and dropout.
  for (GraphNode& n : nodes) {
    if (n.removed || !n.as<IdentityNode>()) continue;
    const uint32_t in = n.inputs[0];
    if (isOutput(n.output) && (tensors[in].producer == kNone || isOutput(in))) continue;
    if (isOutput(n.output)) {
      // The identity names an output: its producer produces the output directly.
      n.removed = true;
      replaceUses(n.output, in);
      for (size_t i = 0; i < outputs.size(); ++i)
        if (outputs[i] == in) tensors[in].name = outputNames[i];
    } else {
      n.removed = true;
      replaceUses(n.output, in);
    }
    statistics.removedIdentities++;
  }
  fuseSilu();
  // Batch normalisations, affines and neurons into the node before them, in build order, so a
  // chain (convolution, batch norm, scale, shift, relu) ends in one node.
  auto consumed = consumers();
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    GraphNode& n = nodes[i];
    const bool affine = n.as<BatchNormalizationNode>() || n.as<AffineNode>();
    if (n.removed || (!affine && !n.as<NeuronNode>())) continue;
    const uint32_t in = n.inputs[0];
    const uint32_t p = tensors[in].producer;
    if (p == kNone || consumed[in].size() != 1 || isOutput(in)) {
      continue;
    }
    GraphNode& producer = nodes[p];
    auto* convolution = producer.as<ConvolutionNode>();
    const bool convolutionFree = convolution && producer.inputs.size() == 1 &&
                                 convolution->descriptor.neuron.type == NeuronType::none &&
                                 !convolution->descriptor.batchNormalization;
    if (affine) {
      std::vector<double> scale, shift;
      affineOf(n, scale, shift);
      const bool producerAffine =
          (producer.as<BatchNormalizationNode>() &&
           producer.as<BatchNormalizationNode>()->neuron.type == NeuronType::none) ||
          (producer.as<AffineNode>() && producer.as<AffineNode>()->neuron.type == NeuronType::none);
      if (convolutionFree) {
        foldInto(*convolution, scale, shift);
        if (n.as<BatchNormalizationNode>()) {
          convolution->foldedBatchNormalizations++;
          statistics.foldedBatchNormalizations++;
        } else {
          convolution->foldedAffines++;
          statistics.foldedAffines++;
        }
        absorb(p, i);
      } else if (n.as<AffineNode>() && producerAffine) {
        // Two affines compose: s2 (s1 x + t1) + t2.
        std::vector<double> firstScale, firstShift;
        affineOf(producer, firstScale, firstShift);
        const size_t count = std::max(scale.size(), firstScale.size());
        AffineNode composed;
        for (size_t c = 0; c < count; ++c) {
          composed.scale.push_back(float(channel(scale, c) * channel(firstScale, c)));
          composed.shift.push_back(
              float(channel(scale, c) * channel(firstShift, c) + channel(shift, c)));
        }
        producer.parameters = std::move(composed);
        absorb(p, i);
        statistics.foldedAffines++;
      } else if (n.as<AffineNode>() && scale.size() == 1) {
        // A scalar one is a linear neuron, which the node before may take (below).
        n.parameters =
            NeuronNode{NeuronDescriptor::of(NeuronType::linear, float(scale[0]), float(shift[0]))};
      } else {
        continue;
      }
      consumed = consumers();
      if (n.removed) continue;
    }
    const NeuronDescriptor& neuron = n.as<NeuronNode>()->neuron;
    NeuronDescriptor* into = nullptr;  // the producer's neuron slot, if free
    if (convolutionFree)
      into = &convolution->descriptor.neuron;
    else if (auto* a = producer.as<ArithmeticNode>())
      into = &a->neuron;
    else if (auto* b = producer.as<BatchNormalizationNode>())
      into = &b->neuron;  // lowered to a depthwise convolution, which takes the neuron too
    else if (auto* f = producer.as<AffineNode>())
      into = &f->neuron;
    if (!into || into->type != NeuronType::none) continue;
    *into = neuron;
    absorb(p, i);
    statistics.fusedNeurons++;
    consumed = consumers();
  }
  // A residual block's add into the convolution that produces one of its inputs: the convolution
  // adds the other (its residual) before the add's neuron, relu(bn(conv(x)) + shortcut) in one
  // kernel. Where both inputs are such convolutions (a projection shortcut), the one on the longer
  // chain takes the add, so the other still runs beside that chain. The residual's writer cannot
  // depend on the convolution (whose only reader was the add); a concatenation is left alone,
  // since several nodes may write its slots.
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    GraphNode& n = nodes[i];
    const auto* add = n.as<ArithmeticNode>();
    if (n.removed || !add || add->operation != ArithmeticOperation::add) continue;
    const TensorShape& out = tensors[n.output].shape;
    auto fusible = [&](uint32_t k) {
      const uint32_t t = n.inputs[k], r = n.inputs[1 - k];
      const uint32_t p = tensors[t].producer;
      if (t == r || p == kNone || consumed[t].size() != 1 || isOutput(t)) return false;
      const GraphNode& producer = nodes[p];
      const auto* convolution = producer.as<ConvolutionNode>();
      const TensorShape& shortcut = tensors[r].shape;
      const uint32_t writer = tensors[r].producer;
      return convolution && !convolution->fullyConnected && producer.inputs.size() == 1 &&
             convolution->descriptor.neuron.type == NeuronType::none &&
             (writer == kNone || !nodes[writer].as<ConcatNode>()) && shortcut.width == out.width &&
             shortcut.height == out.height && shortcut.featureChannels == out.featureChannels;
    };
    const bool first = fusible(0), second = fusible(1);
    if (!first && !second) continue;
    std::vector<uint32_t> memo(nodes.size(), kNone);
    const uint32_t k =
        first && second ? (chainLength(n.inputs[1], memo) > chainLength(n.inputs[0], memo) ? 1 : 0)
                        : (first ? 0 : 1);
    const uint32_t p = tensors[n.inputs[k]].producer;
    nodes[p].inputs.push_back(n.inputs[1 - k]);
    nodes[p].as<ConvolutionNode>()->descriptor.neuron = add->neuron;
    absorb(p, i);
    statistics.fusedResiduals++;
    consumed = consumers();
  }
  fuseSqueezeExcitation();
  fuseSourceActivations();
  removeUnused();
}

// A fusion is on unless its environment variable is "0" (A/B measurements).
bool fusionEnabled(const char* variable) {
  const char* v = std::getenv(variable);
  return !(v && std::string_view(v) == "0");
}

// A batch normalisation or per-channel affine, with a ReLU or no neuron, whose readers are all
// convolutions (not fully connected) that take it as their source: each applies it as it reads
// (ConvolutionDescriptor::sourceActivation), so it needs no kernel and no image of its own.
// Pre-activation networks: DenseNet-121's 62 batch normalisations before a 1x1 convolution were a
// level each at batch 1, a third of a millisecond (bench/NOTES.md, 2026-11-29, session 34). Runs
// after the neuron fusion, so that a batch normalisation after a convolution still folds into its
// weights, and after the residual and squeeze-excitation fusions, which take convolutions as they
// are. VKCNN_FUSE_SOURCE_ACTIVATION=0 leaves them alone.
void GraphState::fuseSourceActivations() {
  if (!fusionEnabled("VKCNN_FUSE_SOURCE_ACTIVATION")) return;
  auto consumed = consumers();
  for (GraphNode& n : nodes) {
    const auto* bn = n.as<BatchNormalizationNode>();
    const auto* affine = n.as<AffineNode>();
    if (n.removed || (!bn && !affine)) continue;
    const NeuronType type = bn ? bn->neuron.type : affine->neuron.type;
    const std::vector<uint32_t>& readers = consumed[n.output];
    if ((type != NeuronType::none && type != NeuronType::relu) || isOutput(n.output) ||
        readers.empty() || tensors[n.inputs[0]].isTensor())
      continue;
    const uint32_t channels = tensors[n.output].shape.featureChannels;
    const bool all = std::all_of(readers.begin(), readers.end(), [&](uint32_t r) {
      const GraphNode& reader = nodes[r];
      const auto* convolution = reader.as<ConvolutionNode>();
      return convolution && !convolution->fullyConnected &&
             !convolution->descriptor.sourceActivation && reader.inputs[0] == n.output &&
             (reader.inputs.size() < 2 || reader.inputs[1] != n.output) &&
             convolution->descriptor.inputFeatureChannels == channels;
    });
    if (!all) continue;
    std::vector<double> scale, shift;
    affineOf(n, scale, shift);
    SourceActivation activation;
    activation.neuron = type;
    for (uint32_t c = 0; c < channels; ++c) {
      activation.scale.push_back(float(channel(scale, c)));
      activation.shift.push_back(float(channel(shift, c)));
    }
    for (uint32_t r : readers) {
      nodes[r].as<ConvolutionNode>()->descriptor.sourceActivation = activation;
      nodes[r].inputs[0] = n.inputs[0];
    }
    n.removed = true;
    statistics.fusedSourceActivations++;
    consumed = consumers();
  }
}

// x * sigmoid(x), as ONNX exports SiLU (Mul(x, Sigmoid(x))), becomes one silu neuron, which the
// neuron fusion then puts into the node producing x. VKCNN_FUSE_SILU=0 leaves it alone.
void GraphState::fuseSilu() {
  if (!fusionEnabled("VKCNN_FUSE_SILU")) return;
  auto consumed = consumers();
  forEachPlainMultiply([&](GraphNode& n, uint32_t s, uint32_t x) {
    const uint32_t p = tensors[s].producer;
    if (p == kNone || nodes[p].removed || consumed[s].size() != 1 || isOutput(s) ||
        tensors[s].isTensor() || tensors[x].isTensor())
      return false;
    const auto* sigmoid = nodes[p].as<NeuronNode>();
    if (!sigmoid || sigmoid->neuron.type != NeuronType::sigmoid || nodes[p].inputs[0] != x)
      return false;
    nodes[p].removed = true;
    n.inputs = {x};
    n.parameters = NeuronNode{NeuronDescriptor::of(NeuronType::silu)};
    statistics.fusedSilus++;
    consumed = consumers();
    return true;
  });
}

// A squeeze-and-excitation block, GlobalAveragePool -> 1x1 convolution + neuron -> 1x1
// convolution + sigmoid or hard sigmoid -> multiply with the pool's input (either operand order),
// becomes the pool and one SqueezeExcitation kernel, when nothing else reads the block's
// intermediate values and every shape is exactly that (1x1 maps, C -> R -> C channels, groups 1,
// no residual, a small MLP). VKCNN_FUSE_SQUEEZE_EXCITATION=0 leaves it alone.
void GraphState::fuseSqueezeExcitation() {
  if (!fusionEnabled("VKCNN_FUSE_SQUEEZE_EXCITATION")) return;
  // Each of the kernel's workgroups recomputes the MLP: beyond this many fc1 weights (C x R) that
  // costs more than the dispatches it saves (bench/NOTES.md, 2026-11-25), and the block stays as
  // it is. VKCNN_SE_MAX_WEIGHTS=N moves the limit (measurements).
  uint64_t maxWeights = SqueezeExcitation::kFusedWeightLimit;
  if (const char* v = std::getenv("VKCNN_SE_MAX_WEIGHTS"); v && *v)
    maxWeights = std::strtoull(v, nullptr, 10);
  auto consumed = consumers();
  auto onlyUse = [&](uint32_t t) {
    return tensors[t].producer != kNone && consumed[t].size() == 1 && !isOutput(t) &&
           !tensors[t].isTensor() && tensors[t].storedIn == kNone;
  };
  auto isOneByOne = [&](uint32_t t, uint32_t channels) {
    const TensorShape& s = tensors[t].shape;
    return s.width == 1 && s.height == 1 && s.featureChannels == channels;
  };
  // The 1x1 convolution of `inputs` -> `outputs` channels producing t, with a neuron the kernel
  // takes, or null.
  auto pointwise = [&](uint32_t t, uint32_t inputs, uint32_t outputs) -> const ConvolutionNode* {
    const GraphNode& p = nodes[tensors[t].producer];
    const auto* c = p.as<ConvolutionNode>();
    if (!c || p.removed || p.inputs.size() != 1 || !isOneByOne(t, outputs) ||
        !isOneByOne(p.inputs[0], inputs))
      return nullptr;
    const ConvolutionDescriptor& d = c->descriptor;
    const NeuronType type = d.neuron.type;
    if (d.kernelWidth != 1 || d.kernelHeight != 1 || d.groups != 1 || d.batchNormalization ||
        d.inputFeatureChannels != inputs || d.outputFeatureChannels != outputs ||
        type == NeuronType::prelu || type == NeuronType::power || type == NeuronType::exponential ||
        type == NeuronType::logarithm || c->weights.size() != size_t(inputs) * outputs ||
        (!c->bias.empty() && c->bias.size() != outputs))
      return nullptr;
    return c;
  };
  forEachPlainMultiply([&](GraphNode& n, uint32_t gate, uint32_t x) {
    if (tensors[x].isTensor() || !onlyUse(gate)) return false;
    const TensorShape shape = tensors[x].shape;
    const uint32_t C = shape.featureChannels;
    if (C > SqueezeExcitation::kMaxFeatureChannels || tensors[n.output].shape != shape)
      return false;
    if (nodes[tensors[gate].producer].inputs.empty()) return false;
    const uint32_t hidden = nodes[tensors[gate].producer].inputs[0];
    const uint32_t R = tensors[hidden].shape.featureChannels;
    if (tensors[hidden].isTensor() || R > SqueezeExcitation::kMaxReducedChannels ||
        uint64_t(R) * C > maxWeights || !onlyUse(hidden))
      return false;
    const ConvolutionNode* fc2 = pointwise(gate, R, C);
    const NeuronType gateType = fc2 ? fc2->descriptor.neuron.type : NeuronType::none;
    if (!fc2 || (gateType != NeuronType::sigmoid && gateType != NeuronType::hardSigmoid))
      return false;
    const ConvolutionNode* fc1 = pointwise(hidden, C, R);
    if (!fc1) return false;
    const uint32_t mean = nodes[tensors[hidden].producer].inputs[0];
    if (!onlyUse(mean)) return false;
    const GraphNode& pool = nodes[tensors[mean].producer];
    const auto* poolKernel = pool.as<KernelNode>();
    const auto* average =
        poolKernel ? dynamic_cast<const GlobalPoolingAverage*>(poolKernel->kernel.get()) : nullptr;
    if (!average || pool.removed || pool.inputs[0] != x || average->sourceFeatureChannelOffset ||
        average->sourceFeatureChannelMaxCount < C || average->offset.x || average->offset.y ||
        average->offset.z)
      return false;
    SqueezeExcitationNode se;
    se.descriptor = {C, R, fc1->descriptor.neuron, fc2->descriptor.neuron};
    se.fc1Weights = fc1->weights;
    se.fc1Bias = fc1->bias;
    se.fc2Weights = fc2->weights;
    se.fc2Bias = fc2->bias;
    nodes[tensors[hidden].producer].removed = true;
    nodes[tensors[gate].producer].removed = true;
    n.inputs = {x, mean};
    n.parameters = std::move(se);
    statistics.fusedSqueezeExcitations++;
    consumed = consumers();
    return true;
  });
}

void GraphState::removeUnused() {
  // From the back, so chains disappear whole.
  for (uint32_t i = uint32_t(nodes.size()); i-- > 0;) {
    GraphNode& n = nodes[i];
    if (n.removed || isOutput(n.output)) continue;
    bool used = false;
    // Any node: a fused residual's writer may come after its reader in build order.
    for (uint32_t c = 0; c < nodes.size() && !used; ++c)
      if (c != i && !nodes[c].removed)
        for (uint32_t t : nodes[c].inputs) used = used || rootOf(t) == n.output;  // or a view
    if (!used) {
      n.removed = true;
      statistics.removedUnused++;
    }
  }
}

// Concatenations become storage: each family of concatenations gets one image, the root's, that
// its producers write into at their channel offsets.
//
// A concatenation whose inputs are a run of a larger one's inputs starting at a channel that is a
// multiple of 4 is a window of that one's image (densenet: every layer reads the concatenation
// of all earlier features of its block, a prefix of the block's final concatenation). An input
// produced by a kernel is written in place by that kernel when it starts at a multiple of 4, is
// not a graph output, not stored elsewhere already and appears once in the root; its other
// readers read it from there. Each remaining slot of the root is copied by the family member
// that covers it and comes first in build order (a topological order), so the copy happens before
// any reader of a window that contains it. Every region of a root is written once: nothing in it
// is overwritten while still needed.
void GraphState::planConcatenations(bool share) {
  std::vector<uint32_t> concats;
  for (uint32_t i = 0; i < nodes.size(); ++i)
    if (!nodes[i].removed && nodes[i].as<ConcatNode>()) concats.push_back(i);
  // The container of each concatenation: the largest other one holding its inputs as an aligned
  // run (equal ones: the first). Graph outputs keep their own images.
  std::vector<uint32_t> container(nodes.size(), kNone), at(nodes.size(), 0);
  auto offsets = [&](uint32_t i) -> const std::vector<uint32_t>& {
    return nodes[i].as<ConcatNode>()->inputOffsets;
  };
  auto larger = [&](uint32_t a, uint32_t b) {  // a is a larger container than b
    const size_t na = nodes[a].inputs.size(), nb = nodes[b].inputs.size();
    return na != nb ? na > nb : a < b;
  };
  for (uint32_t a : share ? concats : std::vector<uint32_t>{}) {
    const GraphNode& A = nodes[a];
    if (isOutput(A.output)) continue;
    for (uint32_t b : concats) {
      const GraphNode& B = nodes[b];
      if (b == a || !larger(b, a) || (container[a] != kNone && !larger(b, container[a]))) continue;
      for (size_t j = 0; j + A.inputs.size() <= B.inputs.size(); ++j)
        if (offsets(b)[j] % 4 == 0 &&
            std::equal(A.inputs.begin(), A.inputs.end(), B.inputs.begin() + j)) {
          container[a] = b;
          at[a] = uint32_t(j);
          break;
        }
    }
  }
  // Members point straight at their root (containers' containers are larger, so this ends).
  for (uint32_t a : concats) {
    uint32_t root = a, slot = 0;
    while (container[root] != kNone) {
      slot += at[root];
      root = container[root];
    }
    GraphTensorInfo& t = tensors[nodes[a].output];
    t.family = root;
    t.firstSlot = slot;
    t.slotCount = uint32_t(nodes[a].inputs.size());
    if (root != a) {
      t.storedIn = nodes[root].output;
      t.channelOffset = offsets(root)[slot];
    }
  }
  // Inputs written in place.
  std::vector<std::vector<bool>> absorbed(nodes.size());
  for (uint32_t r : concats) {
    if (tensors[nodes[r].output].family != r) continue;
    const GraphNode& R = nodes[r];
    absorbed[r].assign(R.inputs.size(), false);
    for (size_t k = 0; k < R.inputs.size() && share; ++k) {
      const uint32_t t = R.inputs[k];
      const uint32_t p = tensors[t].producer;
      if (p == kNone || nodes[p].removed || nodes[p].as<ConcatNode>() ||
          nodes[p].as<ToImageNode>() || isOutput(t) || offsets(r)[k] % 4 != 0 ||
          tensors[t].storedIn != kNone || std::count(R.inputs.begin(), R.inputs.end(), t) != 1)
        continue;
      tensors[t].storedIn = R.output;
      tensors[t].channelOffset = offsets(r)[k];
      absorbed[r][k] = true;
    }
  }
  // Copies, each by the first member covering its slot.
  for (uint32_t a : concats) {
    const GraphTensorInfo& t = tensors[nodes[a].output];
    const GraphNode& R = nodes[t.family];
    for (uint32_t k = t.firstSlot; k < t.firstSlot + t.slotCount; ++k) {
      if (absorbed[t.family][k]) continue;
      bool first = true;
      for (uint32_t b : concats) {
        const GraphTensorInfo& u = tensors[nodes[b].output];
        if (b < a && u.family == t.family && u.firstSlot <= k && k < u.firstSlot + u.slotCount)
          first = false;
      }
      if (first)
        nodes[a].as<ConcatNode>()->copies.push_back({R.inputs[k], offsets(t.family)[k], k});
    }
  }
  for (uint32_t a : concats)
    if (nodes[a].as<ConcatNode>()->copies.empty()) {
      nodes[a].removed = true;
      statistics.removedConcatenations++;
    }
}

void GraphState::lower() {
  // Convolutions first, on several threads: folding and repacking their weights on the host is
  // most of building a network, and each layer is independent of the others. Their uploads join
  // the compile's UploadBatch (each worker enrols in it).
  std::vector<GraphNode*> convolutions;
  for (GraphNode& n : nodes)
    if (!n.removed && n.as<ConvolutionNode>()) convolutions.push_back(&n);
  parallelFor(*context.impl(), convolutions.size(), [&](size_t i) {
    GraphNode& n = *convolutions[i];
    const auto* c = n.as<ConvolutionNode>();
    ConvolutionDescriptor descriptor = c->descriptor;
    descriptor.destinationFormat = options.channelFormat;  // no float16 copies in float32
    if (c->fullyConnected) {
      n.unary = std::make_shared<FullyConnected>(context, descriptor, c->weights, c->bias);
    } else {
      auto k = std::make_shared<Convolution>(context, descriptor, c->weights, c->bias);
      k->padding = c->padding;
      n.unary = k;
    }
  });
  const TensorDataType dataType = options.channelFormat == ChannelFormat::float16
                                      ? TensorDataType::float16
                                      : TensorDataType::float32;
  for (GraphNode& n : nodes) {
    if (n.removed) continue;
    const uint32_t channels = tensors[n.output].shape.featureChannels;
    // A batch normalisation or affine of its own: a 1x1 depthwise convolution (a scalar without a
    // neuron: a linear neuron).
    auto depthwise = [&](const std::vector<double>& scale, const std::vector<double>& shift,
                         const NeuronDescriptor& neuron) {
      std::vector<float> weights(channels), bias(channels);
      for (uint32_t c = 0; c < channels; ++c) {
        weights[c] = float(channel(scale, c));
        bias[c] = float(channel(shift, c));
      }
      ConvolutionDescriptor d = ConvolutionDescriptor::depthwise(1, 1, channels);
      d.neuron = neuron;
      n.unary = std::make_shared<Convolution>(context, d, weights, bias);
    };
    if (n.as<ConvolutionNode>()) {
      // built above, in parallel
    } else if (const auto* b = n.as<BatchNormalizationNode>()) {
      std::vector<double> scale, shift;
      affineOf(b->parameters, scale, shift);
      depthwise(scale, shift, b->neuron);
    } else if (const auto* a = n.as<AffineNode>()) {
      if (a->scale.size() == 1 && a->neuron.type == NeuronType::none)
        n.unary = std::make_shared<Neuron>(
            context, NeuronDescriptor::of(NeuronType::linear, a->scale[0], a->shift[0]));
      else
        depthwise({a->scale.begin(), a->scale.end()}, {a->shift.begin(), a->shift.end()},
                  a->neuron);
    } else if (const auto* neuron = n.as<NeuronNode>()) {
      n.unary = std::make_shared<Neuron>(context, neuron->neuron);
    } else if (n.as<IdentityNode>()) {
      n.unary = std::make_shared<Neuron>(context, NeuronDescriptor{});
    } else if (const auto* arithmetic = n.as<ArithmeticNode>()) {
      n.binary = std::make_shared<Arithmetic>(context, arithmetic->operation, arithmetic->neuron);
    } else if (const auto* se = n.as<SqueezeExcitationNode>()) {
      n.binary = std::make_shared<SqueezeExcitation>(context, se->descriptor, se->fc1Weights,
                                                     se->fc1Bias, se->fc2Weights, se->fc2Bias);
    } else if (n.as<ConcatNode>()) {
      n.copy = std::make_shared<Neuron>(context, NeuronDescriptor{});
    } else if (const auto* kernel = n.as<KernelNode>()) {
      n.unary = kernel->kernel;
    } else if (n.as<ToTensorNode>()) {
      auto k = std::make_shared<ImageToTensor>(context, TensorLayout::NCHW);
      k->dataType = dataType;
      n.tensorKernel = k;
      statistics.conversions++;
    } else if (n.as<ToImageNode>()) {
      auto k = std::make_shared<TensorToImage>(context, TensorLayout::NCHW);
      k->channelFormat = options.channelFormat;
      n.tensorKernel = k;
      statistics.conversions++;
    } else if (auto* constant = n.as<ConstantNode>()) {
      TensorDescriptor d{tensors[n.output].tensorShape, dataType, n.name};
      constant->tensor = Tensor(context, d);
      constant->tensor.writeFloats(constant->values);
      continue;  // no kernel
    } else if (const auto* transpose = n.as<TransposeNode>()) {
      n.tensorKernel = std::make_shared<TensorTranspose>(context, transpose->perm);
    } else if (const auto* unary = n.as<TensorUnaryNode>()) {
      n.tensorKernel = unary->operation == TensorUnaryOperation::neuron
                           ? std::make_shared<TensorUnary>(context, unary->neuron)
                           : std::make_shared<TensorUnary>(context, unary->operation);
    } else if (const auto* binary = n.as<TensorBinaryNode>()) {
      n.tensorKernel = std::make_shared<TensorBinary>(context, binary->operation);
    } else if (n.as<WhereNode>()) {
      n.tensorKernel = std::make_shared<TensorWhere>(context);
    } else if (const auto* k = n.as<TensorKernelNode>()) {
      n.tensorKernel = k->kernel;
    } else {  // slice, tensor concat: copies
      n.tensorKernel = std::make_shared<TensorCopy>(context);
    }
    if (n.tensorKernel) n.tensorKernel->label = n.name;
    if (n.unary) n.unary->label = n.name;
    if (n.binary) n.binary->label = n.name;
    if (n.copy) n.copy->label = n.name;
    const auto* concat = n.as<ConcatNode>();
    const auto* tensorConcat = n.as<TensorConcatNode>();
    statistics.kernels += concat         ? uint32_t(concat->copies.size())
                          : tensorConcat ? uint32_t(n.inputs.size())
                                         : 1;
  }
}

// Levels by list scheduling: a node goes one level after the last level that writes what it
// reads, so independent kernels (inception branches, a residual block's shortcut) share a
// barrier. Build order is topological except for a fused residual, whose writer may come after
// the convolution that reads it.
void GraphState::schedule() {
  // The nodes that write each tensor's region: its producer, or for a concatenation, whoever
  // writes each of its slots (the producer in place, or the member that copies it).
  std::vector<std::vector<uint32_t>> slotWriters(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    const auto* concat = n.as<ConcatNode>();
    if (!concat || tensors[n.output].family != i) continue;
    slotWriters[i].assign(n.inputs.size(), kNone);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const GraphTensorInfo& in = tensors[n.inputs[k]];
      if (in.storedIn == n.output && in.channelOffset == concat->inputOffsets[k])
        slotWriters[i][k] = in.producer;
    }
  }
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    if (n.removed || !n.as<ConcatNode>()) continue;
    for (const ConcatNode::Copy& c : n.as<ConcatNode>()->copies)
      slotWriters[tensors[n.output].family][c.slot] = i;
  }
  auto writers = [&](uint32_t t, std::vector<uint32_t>& out) {
    const GraphTensorInfo& info = tensors[t];
    if (info.family != kNone) {
      for (uint32_t k = info.firstSlot; k < info.firstSlot + info.slotCount; ++k)
        out.push_back(slotWriters[info.family][k]);
    } else if (info.producer != kNone) {
      out.push_back(info.producer);
    }
  };
  std::vector<std::vector<uint32_t>> dependencies(nodes.size());
  rootReads.assign(tensors.size(), 0);
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    if (n.removed) continue;
    std::vector<uint32_t> reads;
    if (const auto* concat = n.as<ConcatNode>()) {
      // One copy kernel per input: each reads it once.
      for (const ConcatNode::Copy& c : concat->copies) {
        reads.push_back(c.tensor);
        rootReads[rootOf(c.tensor)]++;
      }
    } else if (n.tensorKernel) {
      // Tensor kernels read each source once, the same one twice too.
      reads = n.inputs;
      for (uint32_t t : reads) rootReads[rootOf(t)]++;
    } else {
      reads = n.inputs;
      // A kernel reading one image through both sources reads it once.
      std::vector<uint32_t> roots;
      for (uint32_t t : reads) roots.push_back(rootOf(t));
      std::sort(roots.begin(), roots.end());
      roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
      for (uint32_t r : roots) rootReads[r]++;
    }
    for (uint32_t t : reads) writers(t, dependencies[i]);
    for (uint32_t d : dependencies[i])
      if (d == kNone || d == i || nodes[d].removed)
        throw Error(ErrorCode::misuse,
                    what(n.name) + ": internal error: the scheduler found no writer of an input");
  }
  // Longest paths. Dependencies point backwards in build order except a fused residual's writer,
  // so a few passes settle; more passes than nodes would mean a cycle.
  std::vector<uint32_t> level(nodes.size(), 0);
  for (size_t pass = 0;; ++pass) {
    if (pass > nodes.size())
      throw Error(ErrorCode::misuse,
                  "graph '" + options.label + "': internal error: the scheduler found a cycle");
    bool changed = false;
    for (uint32_t i = 0; i < nodes.size(); ++i)
      for (uint32_t d : dependencies[i])
        if (level[i] < level[d] + 1) {
          level[i] = level[d] + 1;
          changed = true;
        }
    if (!changed) break;
  }
  levels.clear();
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].removed) continue;
    if (levels.size() <= level[i]) levels.resize(level[i] + 1);
    levels[level[i]].push_back(i);
  }
}

// One Tensor kernel (or a conversion) of a node; `imageView` and `tensorView` give an input's
// Image or Tensor.
template <class ImageView, class TensorView>
void encodeTensorNode(CommandBuffer& cb, const GraphNode& n, std::vector<Image>& images,
                      std::vector<Tensor>& values, ImageView& imageView, TensorView& tensorView) {
  if (n.as<ConstantNode>()) return;  // uploaded at compile()
  auto in = [&](size_t k) -> const Tensor& { return tensorView(n.inputs[k]); };
  const Tensor& out = values[n.output];
  if (n.as<ToTensorNode>()) {
    static_cast<ImageToTensor&>(*n.tensorKernel).encode(cb, imageView(images, n.inputs[0]), out);
  } else if (n.as<ToImageNode>()) {
    static_cast<TensorToImage&>(*n.tensorKernel).encode(cb, in(0), imageView(images, n.output));
  } else if (n.as<TransposeNode>()) {
    static_cast<TensorTranspose&>(*n.tensorKernel).encode(cb, in(0), out);
  } else if (n.as<TensorUnaryNode>()) {
    static_cast<TensorUnary&>(*n.tensorKernel).encode(cb, in(0), out);
  } else if (n.as<TensorBinaryNode>()) {
    static_cast<TensorBinary&>(*n.tensorKernel).encode(cb, in(0), in(1), out);
  } else if (n.as<WhereNode>()) {
    static_cast<TensorWhere&>(*n.tensorKernel).encode(cb, in(0), in(1), in(2), out);
  } else if (const auto* slice = n.as<SliceNode>()) {
    Tensor source = in(0);
    for (size_t k = 0; k < slice->axes.size(); ++k)
      source = source.slice(slice->axes[k], slice->starts[k], slice->ends[k], slice->steps[k]);
    static_cast<TensorCopy&>(*n.tensorKernel).encode(cb, source, out);
  } else if (const auto* concat = n.as<TensorConcatNode>()) {
    int64_t offset = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Tensor& part = in(k);
      const int64_t extent = part.shape()[concat->axis];
      static_cast<TensorCopy&>(*n.tensorKernel)
          .encode(cb, part, out.slice(int32_t(concat->axis), offset, offset + extent));
      offset += extent;
    }
  } else if (const auto* k = n.as<TensorKernelNode>()) {
    std::vector<Tensor> sources;
    for (size_t i = 0; i < n.inputs.size(); ++i) sources.push_back(in(i));
    k->run(cb, *n.tensorKernel, sources, out);
  }
}

}  // namespace detail

using detail::ConcatNode;
using detail::encodeTensorNode;
using detail::GraphNode;
using detail::kNone;
using detail::LoadPhase;
using detail::PhaseTimer;

Graph::Graph(const Context& context, const GraphOptions& options)
    : state_(std::make_unique<detail::GraphState>(detail::GraphState{context, options})) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

GraphTensor Graph::input(const std::string& name, TensorShape shape) {
  auto& s = *state_;
  s.requireBuilding(name);
  if (!shape.width || !shape.height || !shape.featureChannels)
    throw Error(ErrorCode::invalidArgument, s.what(name) + ": an input needs a non-empty shape");
  detail::GraphTensorInfo info;
  info.shape = shape;
  info.name = name;
  info.inputIndex = uint32_t(s.inputs.size());
  s.tensors.push_back(info);
  s.inputs.push_back(uint32_t(s.tensors.size() - 1));
  s.inputNames.push_back(name);
  return GraphTensor{uint32_t(s.tensors.size() - 1)};
}

void Graph::output(GraphTensor tensor, const std::string& name) {
  auto& s = *state_;
  s.requireBuilding(name);
  tensor = s.asImage(tensor, name);
  s.outputs.push_back(tensor.id);
  s.outputNames.push_back(name);
}

GraphTensor Graph::convolution(GraphTensor x, const ConvolutionDescriptor& d,
                               std::vector<float> weights, std::vector<float> bias,
                               const Padding& padding, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "convolution");
  x = s.asImage(x, n.name);
  const TensorShape in = s.tensor(x, n.name).shape;
  if (in.featureChannels != d.inputFeatureChannels)
    throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": the convolution takes " +
                                                std::to_string(d.inputFeatureChannels) +
                                                " channels but its input has " +
                                                std::to_string(in.featureChannels));
  if (!d.strideInPixelsX || !d.strideInPixelsY || !d.kernelWidth || !d.kernelHeight)
    throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": zero kernel size or stride");
  TensorShape out{detail::windowedOutputSize(in.width, d.strideInPixelsX, d.dilatedKernelWidth(),
                                             padding, true, s.what(n.name)),
                  detail::windowedOutputSize(in.height, d.strideInPixelsY, d.dilatedKernelHeight(),
                                             padding, false, s.what(n.name)),
                  d.outputFeatureChannels};
  n.inputs = {x.id};
  n.parameters = detail::ConvolutionNode{d, std::move(weights), std::move(bias), padding};
  return s.addNode(std::move(n), out);
}

GraphTensor Graph::fullyConnected(GraphTensor x, const ConvolutionDescriptor& d,
                                  std::vector<float> weights, std::vector<float> bias,
                                  const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "fully-connected");
  x = s.asImage(x, n.name);
  const TensorShape in = s.tensor(x, n.name).shape;
  if (in.featureChannels != d.inputFeatureChannels || in.width != d.kernelWidth ||
      in.height != d.kernelHeight)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": the fully-connected layer spans " +
                    std::to_string(d.kernelWidth) + "x" + std::to_string(d.kernelHeight) + "x" +
                    std::to_string(d.inputFeatureChannels) + " but its input is " +
                    std::to_string(in.width) + "x" + std::to_string(in.height) + "x" +
                    std::to_string(in.featureChannels));
  n.inputs = {x.id};
  n.parameters = detail::ConvolutionNode{d, std::move(weights), std::move(bias), {}, true};
  return s.addNode(std::move(n), {1, 1, d.outputFeatureChannels});
}

GraphTensor Graph::batchNormalization(GraphTensor x, const BatchNormalizationParameters& p,
                                      const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "batch normalization");
  x = s.asImage(x, n.name);
  const TensorShape in = s.tensor(x, n.name).shape;
  auto sized = [&](const std::vector<float>& v, bool optional) {
    return (optional && v.empty()) || v.size() == in.featureChannels;
  };
  if (!sized(p.mean, false) || !sized(p.variance, false) || !sized(p.gamma, true) ||
      !sized(p.beta, true))
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": batch normalization parameters need " +
                    std::to_string(in.featureChannels) + " values each (mean " +
                    std::to_string(p.mean.size()) + ", variance " +
                    std::to_string(p.variance.size()) + ", gamma " +
                    std::to_string(p.gamma.size()) + ", beta " + std::to_string(p.beta.size()) +
                    ")");
  for (size_t c = 0; c < p.variance.size(); ++c)
    if (!(double(p.variance[c]) + double(p.epsilon) > 0))
      throw Error(ErrorCode::invalidArgument,
                  s.what(n.name) + ": batch normalization variance[" + std::to_string(c) +
                      "] + epsilon is " +
                      std::to_string(double(p.variance[c]) + double(p.epsilon)) + " (must be > 0)");
  n.inputs = {x.id};
  n.parameters = detail::BatchNormalizationNode{p, {}};
  return s.addNode(std::move(n), in);
}

GraphTensor Graph::affine(GraphTensor x, std::vector<float> scale, std::vector<float> shift,
                          const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "affine");
  x = s.asImage(x, n.name);
  const TensorShape in = s.tensor(x, n.name).shape;
  if (scale.size() != shift.size() || (scale.size() != 1 && scale.size() != in.featureChannels))
    throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": " + std::to_string(scale.size()) +
                                                " scales and " + std::to_string(shift.size()) +
                                                " shifts for " +
                                                std::to_string(in.featureChannels) +
                                                " channels (give one of each, or one per channel)");
  n.inputs = {x.id};
  n.parameters = detail::AffineNode{std::move(scale), std::move(shift), {}};
  return s.addNode(std::move(n), in);
}

GraphTensor Graph::neuron(GraphTensor x, const NeuronDescriptor& neuron, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "neuron");
  x = s.asImage(x, n.name);
  const TensorShape in = s.tensor(x, n.name).shape;
  n.inputs = {x.id};
  n.parameters = detail::NeuronNode{neuron};
  return s.addNode(std::move(n), in);
}

GraphTensor Graph::arithmetic(GraphTensor a, GraphTensor b, ArithmeticOperation operation,
                              const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "arithmetic");
  a = s.asImage(a, n.name);
  b = s.asImage(b, n.name);
  const TensorShape sa = s.tensor(a, n.name).shape, sb = s.tensor(b, n.name).shape;
  const bool spatialOk =
      (sb.width == sa.width && sb.height == sa.height) || (sb.width == 1 && sb.height == 1);
  const bool channelsOk = sb.featureChannels == sa.featureChannels || sb.featureChannels == 1;
  if (!spatialOk || !channelsOk)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": cannot broadcast " + std::to_string(sb.width) + "x" +
                    std::to_string(sb.height) + "x" + std::to_string(sb.featureChannels) +
                    " onto " + std::to_string(sa.width) + "x" + std::to_string(sa.height) + "x" +
                    std::to_string(sa.featureChannels));
  n.inputs = {a.id, b.id};
  n.parameters = detail::ArithmeticNode{operation, {}};
  return s.addNode(std::move(n), sa);
}

GraphTensor Graph::concat(const std::vector<GraphTensor>& inputs, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "concat");
  if (inputs.empty()) throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": no inputs");
  TensorShape out = s.tensor(s.asImage(inputs[0], n.name), n.name).shape;
  out.featureChannels = 0;
  detail::ConcatNode concat;
  for (GraphTensor t : inputs) {
    t = s.asImage(t, n.name);
    const TensorShape in = s.tensor(t, n.name).shape;
    if (in.width != out.width || in.height != out.height)
      throw Error(ErrorCode::invalidArgument,
                  s.what(n.name) + ": inputs differ in size (" + std::to_string(in.width) + "x" +
                      std::to_string(in.height) + " vs " + std::to_string(out.width) + "x" +
                      std::to_string(out.height) + ")");
    n.inputs.push_back(t.id);
    concat.inputOffsets.push_back(out.featureChannels);
    out.featureChannels += in.featureChannels;
  }
  n.parameters = std::move(concat);
  return s.addNode(std::move(n), out);
}

GraphTensor Graph::identity(GraphTensor x, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "identity");
  n.parameters = detail::IdentityNode{};
  x = s.asImage(x, n.name);
  const TensorShape in = s.tensor(x, n.name).shape;
  n.inputs = {x.id};
  return s.addNode(std::move(n), in);
}

GraphTensor Graph::unary(GraphTensor x, std::shared_ptr<UnaryKernel> kernel,
                         const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name.empty() && kernel ? kernel->label : name, "kernel");
  if (!kernel) throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": the kernel is null");
  x = s.asImage(x, n.name);
  const TensorShape in = s.tensor(x, n.name).shape;
  // The kernel reads its source channel window (a channel split or slice reads part of it).
  const uint32_t first = kernel->sourceFeatureChannelOffset;
  if (first >= in.featureChannels)
    throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": sourceFeatureChannelOffset " +
                                                std::to_string(first) + " is beyond the input's " +
                                                std::to_string(in.featureChannels) + " channels");
  const uint32_t window =
      std::min(in.featureChannels - first, kernel->sourceFeatureChannelMaxCount);
  TensorShape out{kernel->destinationWidth(in.width), kernel->destinationHeight(in.height),
                  kernel->destinationFeatureChannels(window)};
  n.inputs = {x.id};
  n.parameters = detail::KernelNode{std::move(kernel)};
  return s.addNode(std::move(n), out);
}

GraphTensor Graph::constant(std::vector<uint32_t> shape, std::vector<float> values,
                            const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "constant");
  uint64_t count = 1;
  for (uint32_t d : shape) count *= d;
  if (values.size() != count)
    throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": " + std::to_string(values.size()) +
                                                " values for shape " +
                                                detail::GraphState::shapeText(shape));
  n.parameters = detail::ConstantNode{std::move(values), {}};
  return s.addTensorNode(std::move(n), std::move(shape));
}

GraphTensor Graph::reshape(GraphTensor x, std::vector<uint32_t> shape, const std::string& name) {
  auto& s = *state_;
  const std::string label = s.nodeName(name, "reshape");
  s.requireBuilding(label);
  x = s.asTensor(x, label);
  const detail::GraphTensorInfo& in = s.tensors[x.id];
  uint64_t count = 1, inCount = 1;
  for (uint32_t d : shape) count *= d;
  for (uint32_t d : in.tensorShape) inCount *= d;
  if (shape.empty() || shape.size() > kMaxTensorRank || count != inCount)
    throw Error(ErrorCode::invalidArgument,
                s.what(label) + ": " + detail::GraphState::shapeText(in.tensorShape) +
                    " cannot become " + detail::GraphState::shapeText(shape));
  detail::GraphTensorInfo view;
  view.tensorShape = std::move(shape);
  view.name = label;
  view.producer = in.producer;
  view.storedIn = s.rootOf(x.id);
  s.tensors.push_back(view);
  return GraphTensor{uint32_t(s.tensors.size() - 1)};
}

GraphTensor Graph::transpose(GraphTensor x, std::vector<uint32_t> perm, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "transpose");
  x = s.asTensor(x, n.name);
  const std::vector<uint32_t> in = s.tensors[x.id].tensorShape;
  std::vector<bool> seen(in.size(), false);
  bool valid = perm.size() == in.size();
  std::vector<uint32_t> out;
  for (uint32_t p : perm) {
    valid = valid && p < in.size() && !seen[p];
    if (!valid) break;
    seen[p] = true;
    out.push_back(in[p]);
  }
  if (!valid)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": perm " + detail::GraphState::shapeText(perm) +
                    " is not a permutation of the " + std::to_string(in.size()) + " axes");
  n.inputs = {x.id};
  n.parameters = detail::TransposeNode{std::move(perm)};
  return s.addTensorNode(std::move(n), std::move(out));
}

GraphTensor Graph::tensorUnary(GraphTensor x, TensorUnaryOperation operation,
                               const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor unary");
  x = s.asTensor(x, n.name);
  n.inputs = {x.id};
  n.parameters = detail::TensorUnaryNode{operation, {}};
  return s.addTensorNode(std::move(n), s.tensors[x.id].tensorShape);
}

GraphTensor Graph::tensorNeuron(GraphTensor x, const NeuronDescriptor& neuron,
                                const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor neuron");
  if (neuron.type == NeuronType::prelu)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": PReLU on a tensor is tensorBinary(prelu) with its slopes");
  x = s.asTensor(x, n.name);
  n.inputs = {x.id};
  n.parameters = detail::TensorUnaryNode{TensorUnaryOperation::neuron, neuron};
  return s.addTensorNode(std::move(n), s.tensors[x.id].tensorShape);
}

GraphTensor Graph::tensorBinary(GraphTensor a, GraphTensor b, TensorBinaryOperation operation,
                                const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor binary");
  a = s.asTensor(a, n.name);
  b = s.asTensor(b, n.name);
  std::vector<uint32_t> out =
      broadcastShape(s.tensors[a.id].tensorShape, s.tensors[b.id].tensorShape, s.what(n.name));
  n.inputs = {a.id, b.id};
  n.parameters = detail::TensorBinaryNode{operation};
  return s.addTensorNode(std::move(n), std::move(out));
}

GraphTensor Graph::where(GraphTensor condition, GraphTensor x, GraphTensor y,
                         const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "where");
  condition = s.asTensor(condition, n.name);
  x = s.asTensor(x, n.name);
  y = s.asTensor(y, n.name);
  std::vector<uint32_t> out =
      broadcastShape(broadcastShape(s.tensors[condition.id].tensorShape,
                                    s.tensors[x.id].tensorShape, s.what(n.name)),
                     s.tensors[y.id].tensorShape, s.what(n.name));
  n.inputs = {condition.id, x.id, y.id};
  n.parameters = detail::WhereNode{};
  return s.addTensorNode(std::move(n), std::move(out));
}

GraphTensor Graph::slice(GraphTensor x, std::vector<int32_t> axes, std::vector<int64_t> starts,
                         std::vector<int64_t> ends, std::vector<int64_t> steps,
                         const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "slice");
  x = s.asTensor(x, n.name);
  if (starts.size() != axes.size() || ends.size() != axes.size() || steps.size() != axes.size())
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": axes, starts, ends and steps differ in length");
  // The output shape from a host-side view of the same shape (Tensor::slice does the clamping).
  const std::vector<uint32_t>& in = s.tensors[x.id].tensorShape;
  std::vector<uint32_t> out = in;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int32_t rank = int32_t(in.size());
    const int32_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank)
      throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": axis " + std::to_string(axes[k]) +
                                                  " of a rank-" + std::to_string(rank) + " tensor");
    const int64_t dim = in[size_t(axis)], step = steps[k];
    if (step == 0) throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": a step of 0");
    // As Tensor::slice clamps (ONNX Slice).
    auto resolve = [&](int64_t v) {
      if (v < 0) v = v < -dim ? (step > 0 ? 0 : -1) : v + dim;
      if (step > 0) return std::clamp<int64_t>(v, 0, dim);
      return std::clamp<int64_t>(v, -1, dim - 1);
    };
    const int64_t first = resolve(starts[k]), last = resolve(ends[k]);
    const int64_t count = step > 0 ? (last > first ? (last - first + step - 1) / step : 0)
                                   : (first > last ? (first - last - step - 1) / -step : 0);
    if (count <= 0)
      throw Error(ErrorCode::invalidArgument,
                  s.what(n.name) + ": the slice of axis " + std::to_string(axis) + " is empty");
    out[size_t(axis)] = uint32_t(count);
    axes[k] = axis;
  }
  n.inputs = {x.id};
  n.parameters =
      detail::SliceNode{std::move(axes), std::move(starts), std::move(ends), std::move(steps)};
  return s.addTensorNode(std::move(n), std::move(out));
}

GraphTensor Graph::concat(const std::vector<GraphTensor>& inputs, uint32_t axis,
                          const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor concat");
  if (inputs.empty()) throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": no inputs");
  std::vector<uint32_t> out;
  for (GraphTensor t : inputs) {
    t = s.asTensor(t, n.name);
    const std::vector<uint32_t>& in = s.tensors[t.id].tensorShape;
    if (out.empty()) {
      if (axis >= in.size())
        throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": axis " + std::to_string(axis) +
                                                    " of a rank-" + std::to_string(in.size()) +
                                                    " tensor");
      out = in;
    } else {
      bool fits = in.size() == out.size();
      for (size_t k = 0; fits && k < in.size(); ++k) fits = k == axis || in[k] == out[k];
      if (!fits)
        throw Error(ErrorCode::invalidArgument,
                    s.what(n.name) + ": " + detail::GraphState::shapeText(in) +
                        " does not concatenate with " + detail::GraphState::shapeText(out) +
                        " along axis " + std::to_string(axis));
      out[axis] += in[axis];
    }
    n.inputs.push_back(t.id);
  }
  n.parameters = detail::TensorConcatNode{axis};
  return s.addTensorNode(std::move(n), std::move(out));
}

namespace detail {
namespace {

// The node's axis in [0, rank), or an Error naming it.
uint32_t graphAxis(const GraphState& s, const std::string& node, int64_t axis, size_t rank) {
  const int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    throw Error(ErrorCode::invalidArgument, s.what(node) + ": axis " + std::to_string(axis) +
                                                " is outside a rank-" + std::to_string(rank) +
                                                " tensor");
  return uint32_t(axis < 0 ? axis + r : axis);
}

template <class K>
using Run = std::function<void(CommandBuffer&, K&, const std::vector<Tensor>&, const Tensor&)>;

// A TensorKernelNode of kernel `k` on `inputs` (Images are converted), its output `shape`.
template <class K>
GraphTensor addKernel(GraphState& s, GraphNode& n, const char* kind, std::shared_ptr<K> k,
                      const std::vector<GraphTensor>& inputs, std::vector<uint32_t> shape,
                      Run<K> run) {
  for (GraphTensor t : inputs) n.inputs.push_back(t.id);
  TensorKernelNode p;
  p.kind = kind;
  p.kernel = std::move(k);
  p.run = [run = std::move(run)](CommandBuffer& cb, TensorKernel& kernel,
                                 const std::vector<Tensor>& in,
                                 const Tensor& out) { run(cb, static_cast<K&>(kernel), in, out); };
  n.parameters = std::move(p);
  return s.addTensorNode(std::move(n), std::move(shape));
}

}  // namespace
}  // namespace detail

GraphTensor Graph::softmax(GraphTensor x, int32_t axis, bool logarithm, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, logarithm ? "log-softmax" : "softmax");
  x = s.asTensor(x, n.name);
  std::vector<uint32_t> shape = s.tensors[x.id].tensorShape;
  detail::graphAxis(s, n.name, axis, shape.size());
  return detail::addKernel<TensorSoftmax>(
      s, n, logarithm ? "log-softmax" : "softmax",
      std::make_shared<TensorSoftmax>(s.context, axis, logarithm), {x}, std::move(shape),
      [](CommandBuffer& cb, TensorSoftmax& k, const std::vector<Tensor>& in, const Tensor& out) {
        k.encode(cb, in[0], out);
      });
}

GraphTensor Graph::reduction(GraphTensor x, TensorReductionOperation operation,
                             std::vector<int32_t> axes, bool keepDimensions,
                             const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "reduction");
  x = s.asTensor(x, n.name);
  const std::vector<uint32_t> in = s.tensors[x.id].tensorShape;
  std::vector<bool> reduced(in.size(), axes.empty());
  for (int32_t a : axes) {
    const uint32_t k = detail::graphAxis(s, n.name, a, in.size());
    if (reduced[k])
      throw Error(ErrorCode::invalidArgument,
                  s.what(n.name) + ": axis " + std::to_string(a) + " is listed twice");
    reduced[k] = true;
  }
  std::vector<uint32_t> out;
  for (size_t k = 0; k < in.size(); ++k)
    if (!reduced[k])
      out.push_back(in[k]);
    else if (keepDimensions)
      out.push_back(1);
  if (out.empty()) out = {1};
  return detail::addKernel<TensorReduction>(
      s, n, "reduction",
      std::make_shared<TensorReduction>(s.context, operation, std::move(axes), keepDimensions), {x},
      std::move(out),
      [](CommandBuffer& cb, TensorReduction& k, const std::vector<Tensor>& in, const Tensor& out) {
        k.encode(cb, in[0], out);
      });
}

GraphTensor Graph::argReduction(GraphTensor x, bool maximum, int32_t axis, bool keepDimensions,
                                bool selectLastIndex, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, maximum ? "argmax" : "argmin");
  x = s.asTensor(x, n.name);
  std::vector<uint32_t> out = s.tensors[x.id].tensorShape;
  const uint32_t a = detail::graphAxis(s, n.name, axis, out.size());
  if (keepDimensions)
    out[a] = 1;
  else
    out.erase(out.begin() + a);
  if (out.empty()) out = {1};
  return detail::addKernel<TensorArgReduction>(
      s, n, maximum ? "argmax" : "argmin",
      std::make_shared<TensorArgReduction>(s.context, maximum, axis, keepDimensions,
                                           selectLastIndex),
      {x}, std::move(out),
      [](CommandBuffer& cb, TensorArgReduction& k, const std::vector<Tensor>& in,
         const Tensor& out) { k.encode(cb, in[0], out); });
}

GraphTensor Graph::matMul(GraphTensor a, GraphTensor b, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "matmul");
  a = s.asTensor(a, n.name);
  b = s.asTensor(b, n.name);
  std::vector<uint32_t> sa = s.tensors[a.id].tensorShape, sb = s.tensors[b.id].tensorShape;
  const bool rowA = sa.size() == 1, columnB = sb.size() == 1;
  if (rowA) sa.insert(sa.begin(), 1);
  if (columnB) sb.push_back(1);
  const uint32_t m = sa[sa.size() - 2], k = sa.back(), kb = sb[sb.size() - 2], cols = sb.back();
  if (k != kb)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": " + detail::GraphState::shapeText(s.tensors[a.id].tensorShape) +
                    " and " + detail::GraphState::shapeText(s.tensors[b.id].tensorShape) +
                    " do not multiply");
  const std::vector<uint32_t> batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  std::vector<uint32_t> out = batchA.empty()   ? batchB
                              : batchB.empty() ? batchA
                                               : broadcastShape(batchA, batchB, s.what(n.name));
  if (!rowA) out.push_back(m);
  if (!columnB) out.push_back(cols);
  if (out.empty()) out = {1};
  return detail::addKernel<TensorMatMul>(
      s, n, "matmul", std::make_shared<TensorMatMul>(s.context), {a, b}, std::move(out),
      [](CommandBuffer& cb, TensorMatMul& k, const std::vector<Tensor>& in, const Tensor& out) {
        k.encode(cb, in[0], in[1], out);
      });
}

GraphTensor Graph::gemm(GraphTensor a, GraphTensor b, GraphTensor c, const GemmDescriptor& d,
                        const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "gemm");
  a = s.asTensor(a, n.name);
  b = s.asTensor(b, n.name);
  const std::vector<uint32_t>&sa = s.tensors[a.id].tensorShape, &sb = s.tensors[b.id].tensorShape;
  if (sa.size() != 2 || sb.size() != 2)
    throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": Gemm multiplies matrices, not " +
                                                detail::GraphState::shapeText(sa) + " and " +
                                                detail::GraphState::shapeText(sb));
  const uint32_t m = d.transposeA ? sa[1] : sa[0], k = d.transposeA ? sa[0] : sa[1];
  const uint32_t kb = d.transposeB ? sb[1] : sb[0], cols = d.transposeB ? sb[0] : sb[1];
  if (k != kb)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": " + detail::GraphState::shapeText(sa) + " and " +
                    detail::GraphState::shapeText(sb) + " do not multiply");
  std::vector<GraphTensor> inputs = {a, b};
  if (c.valid()) inputs.push_back(s.asTensor(c, n.name));
  return detail::addKernel<TensorGemm>(
      s, n, "gemm", std::make_shared<TensorGemm>(s.context, d), inputs, {m, cols},
      [](CommandBuffer& cb, TensorGemm& k, const std::vector<Tensor>& in, const Tensor& out) {
        k.encode(cb, in[0], in[1], in.size() > 2 ? in[2] : Tensor(), out);
      });
}

GraphTensor Graph::layerNormalization(GraphTensor x, GraphTensor scale, GraphTensor bias,
                                      int32_t axis, float epsilon, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "layer normalization");
  x = s.asTensor(x, n.name);
  std::vector<uint32_t> shape = s.tensors[x.id].tensorShape;
  detail::graphAxis(s, n.name, axis, shape.size());
  std::vector<GraphTensor> inputs = {x, s.asTensor(scale, n.name)};
  if (bias.valid()) inputs.push_back(s.asTensor(bias, n.name));
  return detail::addKernel<TensorLayerNormalization>(
      s, n, "layer normalization",
      std::make_shared<TensorLayerNormalization>(s.context, axis, epsilon), inputs,
      std::move(shape),
      [](CommandBuffer& cb, TensorLayerNormalization& k, const std::vector<Tensor>& in,
         const Tensor& out) { k.encode(cb, in[0], in[1], in.size() > 2 ? in[2] : Tensor(), out); });
}

GraphTensor Graph::resize(GraphTensor x, const TensorResizeDescriptor& d, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor resize");
  x = s.asTensor(x, n.name);
  const std::vector<uint32_t> in = s.tensors[x.id].tensorShape;
  const size_t rank = in.size();
  const bool crop = d.coordinateTransformation == TensorCoordinateTransformation::tfCropAndResize;
  if ((!d.sizes.empty() && d.sizes.size() != rank) ||
      (d.sizes.empty() && d.scales.size() != rank) ||
      (!d.scales.empty() && d.scales.size() != rank) ||
      (crop && !d.roi.empty() && d.roi.size() != 2 * rank))
    throw Error(ErrorCode::invalidArgument, s.what(n.name) +
                                                ": sizes, scales or roi do not match the rank-" +
                                                std::to_string(rank) + " source");
  std::vector<uint32_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    if (!d.sizes.empty()) {
      out[k] = d.sizes[k];
      continue;
    }
    const double roi = crop && !d.roi.empty() ? double(d.roi[rank + k] - d.roi[k]) : 1.0;
    const double extent = double(in[k]) * roi * double(d.scales[k]);
    if (!(extent >= 1) || extent > double(INT32_MAX))
      throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": axis " + std::to_string(k) +
                                                  " would have " + std::to_string(extent) +
                                                  " elements");
    out[k] = uint32_t(std::floor(extent));
  }
  return detail::addKernel<TensorResize>(
      s, n, "tensor resize", std::make_shared<TensorResize>(s.context, d), {x}, std::move(out),
      [](CommandBuffer& cb, TensorResize& k, const std::vector<Tensor>& in, const Tensor& out) {
        k.encode(cb, in[0], out);
      });
}

GraphTensor Graph::gather(GraphTensor data, GraphTensor indices, int32_t axis,
                          const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "gather");
  data = s.asTensor(data, n.name);
  indices = s.asTensor(indices, n.name);
  const std::vector<uint32_t>&sd = s.tensors[data.id].tensorShape,
        &si = s.tensors[indices.id].tensorShape;
  const uint32_t a = detail::graphAxis(s, n.name, axis, sd.size());
  std::vector<uint32_t> out(sd.begin(), sd.begin() + a);
  out.insert(out.end(), si.begin(), si.end());
  out.insert(out.end(), sd.begin() + a + 1, sd.end());
  return detail::addKernel<TensorGather>(
      s, n, "gather", std::make_shared<TensorGather>(s.context, axis), {data, indices},
      std::move(out),
      [](CommandBuffer& cb, TensorGather& k, const std::vector<Tensor>& in, const Tensor& out) {
        k.encode(cb, in[0], in[1], out);
      });
}

GraphTensor Graph::pad(GraphTensor x, TensorPaddingMode mode, std::vector<int64_t> pads,
                       float value, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor pad");
  x = s.asTensor(x, n.name);
  const std::vector<uint32_t> in = s.tensors[x.id].tensorShape;
  if (pads.size() != 2 * in.size())
    throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": " + std::to_string(pads.size()) +
                                                " pads for a rank-" + std::to_string(in.size()) +
                                                " tensor");
  std::vector<uint32_t> out(in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    const int64_t e = int64_t(in[k]) + pads[k] + pads[k + in.size()];
    if (e < 1 || e > INT32_MAX)
      throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": axis " + std::to_string(k) +
                                                  " would have " + std::to_string(e) + " elements");
    out[k] = uint32_t(e);
  }
  return detail::addKernel<TensorPad>(
      s, n, "tensor pad", std::make_shared<TensorPad>(s.context, mode, std::move(pads), value), {x},
      std::move(out),
      [](CommandBuffer& cb, TensorPad& k, const std::vector<Tensor>& in, const Tensor& out) {
        k.encode(cb, in[0], out);
      });
}

GraphTensor Graph::toTensor(GraphTensor value) {
  state_->requireBuilding("toTensor");
  return state_->asTensor(value, "toTensor");
}

GraphTensor Graph::toImage(GraphTensor value) {
  state_->requireBuilding("toImage");
  return state_->asImage(value, "toImage");
}

bool Graph::isTensor(GraphTensor value) const {
  return state_->tensor(value, "isTensor").isTensor();
}

std::vector<uint32_t> Graph::tensorShape(GraphTensor value) const {
  return state_->tensor(value, "tensorShape").tensorShape;
}

TensorShape Graph::shape(GraphTensor tensor) const {
  return state_->tensor(tensor, "shape").shape;
}
const std::vector<std::string>& Graph::inputNames() const {
  return state_->inputNames;
}
const std::vector<std::string>& Graph::outputNames() const {
  return state_->outputNames;
}
GraphStatistics Graph::statistics() const {
  return state_->statistics;
}

void Graph::compile() {
  auto& s = *state_;
  if (s.compiled) return;
  if (s.outputs.empty())
    throw Error(ErrorCode::invalidArgument, "graph '" + s.options.label + "' has no outputs");
  {
    PhaseTimer timer(s.context.impl()->loadClock(), LoadPhase::optimize);
    if (s.options.optimize) s.optimize();
    s.planConcatenations(s.options.optimize);
  }
  {
    PhaseTimer timer(s.context.impl()->loadClock(), LoadPhase::lower);
    detail::UploadBatch uploads(*s.context.impl());
    s.lower();
    uploads.finish();
  }
  s.schedule();
  s.compiled = true;
}

uint32_t Graph::maxNumberOfImages() const {
  const auto& s = *state_;
  const uint32_t layers = s.context.capabilities().maxImageArrayLayers;
  uint32_t most = layers;
  // Intermediate images are split along the batch where they need it (encodeBatch); Tensor
  // values' conversions take the whole batch, so there every image must fit.
  std::vector<uint32_t> images = s.hasTensors() ? s.producedImages() : std::vector<uint32_t>{};
  images.insert(images.end(), s.inputs.begin(), s.inputs.end());
  images.insert(images.end(), s.outputs.begin(), s.outputs.end());
  for (uint32_t t : images)
    most = std::min(most, layers / ((s.tensors[t].shape.featureChannels + 3) / 4));
  return most;
}

uint64_t Graph::intermediateTensorBytes(uint32_t numberOfImages) const {
  const auto& s = *state_;
  uint64_t total = 0;
  for (uint32_t root : s.producedImages()) {
    if (s.isOutput(root)) continue;
    const TensorShape& t = s.tensors[root].shape;
    total += uint64_t(t.width) * t.height * ((t.featureChannels + 3) / 4) * 4 *
             bytesPerChannel(s.options.channelFormat) * numberOfImages;
  }
  for (uint32_t root : s.producedImages(true)) {  // Tensors: their own batch
    uint64_t count = 1;
    for (uint32_t d : s.tensors[root].tensorShape) count *= d;
    total += count * bytesPerChannel(s.options.channelFormat);
  }
  return total;
}

std::vector<std::string> Graph::describe() const {
  std::vector<std::string> lines;
  const auto& s = *state_;
  for (const GraphNode& n : s.nodes) {
    if (n.removed) continue;
    std::ostringstream line;
    line << n.name << " (" << detail::kindName(n.parameters);
    const NeuronDescriptor* neuron = nullptr;
    if (const auto* c = n.as<detail::ConvolutionNode>()) {
      if (c->descriptor.batchNormalization || c->foldedBatchNormalizations) line << " + batch norm";
      if (c->foldedAffines) line << " + affine";
      if (const auto& a = c->descriptor.sourceActivation)
        line << " + source activation" << (a->neuron == NeuronType::relu ? " (relu)" : "");
      if (n.inputs.size() > 1) line << " + residual '" << s.tensors[n.inputs[1]].name << "'";
      neuron = &c->descriptor.neuron;
    } else if (const auto* a = n.as<detail::ArithmeticNode>()) {
      neuron = &a->neuron;
    } else if (const auto* b = n.as<detail::BatchNormalizationNode>()) {
      neuron = &b->neuron;
    } else if (const auto* f = n.as<detail::AffineNode>()) {
      neuron = &f->neuron;
    } else if (const auto* se = n.as<detail::SqueezeExcitationNode>()) {
      line << " " << se->descriptor.featureChannels << " -> " << se->descriptor.reducedChannels
           << " + " << toString(se->descriptor.inner.type) << " -> "
           << se->descriptor.featureChannels << " + " << toString(se->descriptor.gate.type);
    } else if (const auto* concat = n.as<detail::ConcatNode>()) {
      line << ", copies " << concat->copies.size() << " of " << n.inputs.size() << " inputs";
    }
    if (neuron && neuron->type != NeuronType::none) line << " + " << toString(neuron->type);
    const auto& out = s.tensors[n.output];
    if (out.isTensor())
      line << ") -> tensor " << detail::GraphState::shapeText(out.tensorShape);
    else
      line << ") -> " << out.shape.width << "x" << out.shape.height << "x"
           << out.shape.featureChannels;
    if (out.storedIn != kNone)
      line << " at channel " << out.channelOffset << " of '" << s.tensors[out.storedIn].name << "'";
    lines.push_back(line.str());
  }
  return lines;
}

std::vector<Image> Graph::encode(CommandBuffer& commandBuffer, const std::vector<Image>& inputs) {
  compile();
  auto& s = *state_;
  const uint32_t batch = inputs.empty() || !inputs[0].valid() ? 1 : inputs[0].numberOfImages();
  std::vector<Image> outputs;
  for (uint32_t t : s.outputs) {
    const TensorShape& shape = s.tensors[t].shape;
    ImageDescriptor d{shape.width, shape.height, shape.featureChannels, batch,
                      s.options.channelFormat};
    d.label = s.tensors[t].name;
    outputs.emplace_back(s.context, d);
  }
  encode(commandBuffer, inputs, outputs);
  return outputs;
}

void Graph::encode(CommandBuffer& commandBuffer, const std::vector<Image>& inputs,
                   const std::vector<Image>& outputs) {
  encodeBatch(commandBuffer, {inputs}, {outputs});
}

void Graph::encodeBatch(CommandBuffer& commandBuffer, const std::vector<std::vector<Image>>& inputs,
                        const std::vector<std::vector<Image>>& outputs) {
  compile();
  auto& s = *state_;
  const std::string what = "graph '" + s.options.label + "'";
  if (inputs.size() != outputs.size())
    throw Error(ErrorCode::invalidArgument, what + ": " + std::to_string(inputs.size()) +
                                                " chunks of inputs but " +
                                                std::to_string(outputs.size()) + " of outputs");
  // Every image value is held in pieces along the batch: the caller's chunks for inputs and
  // outputs; for the values kernels write, as many images per piece as the array-layer limit
  // allows for that value alone. A kernel runs once per segment of the batch in which none of
  // its images changes piece, so narrow layers cover the whole batch in one dispatch and only
  // the wide ones (a 2048-channel map takes 512 layers per image) are split.
  struct Piece {
    Image image;
    uint32_t first = 0, count = 0;
  };
  std::vector<std::vector<Piece>> pieces(s.tensors.size());
  std::vector<std::vector<uint32_t>> starts(s.tensors.size());  // each piece's first image
  std::vector<char> given(s.tensors.size(), 0);                 // an input's or output's Images
  std::vector<uint32_t> chunkFirst(inputs.size());
  uint32_t total = 0;
  for (size_t chunk = 0; chunk < inputs.size(); ++chunk) {
    const std::vector<Image>& in = inputs[chunk];
    const std::vector<Image>& out = outputs[chunk];
    const std::string where = inputs.size() > 1 ? what + " chunk " + std::to_string(chunk) : what;
    if (in.size() != s.inputs.size())
      throw Error(ErrorCode::invalidArgument, where + " takes " + std::to_string(s.inputs.size()) +
                                                  " inputs, " + std::to_string(in.size()) +
                                                  " given");
    if (out.size() != s.outputs.size())
      throw Error(ErrorCode::invalidArgument, where + " has " + std::to_string(s.outputs.size()) +
                                                  " outputs, " + std::to_string(out.size()) +
                                                  " given");
    const uint32_t batch = in.empty() ? 1 : in[0].numberOfImages();
    chunkFirst[chunk] = total;
    auto checkShape = [&](const Image& image, uint32_t t, const std::string& role,
                          const std::string& name) {
      const TensorShape& shape = s.tensors[t].shape;
      if (!image.valid() || image.width() != shape.width || image.height() != shape.height ||
          image.featureChannels() != shape.featureChannels || image.numberOfImages() != batch)
        throw Error(
            ErrorCode::invalidArgument,
            where + " " + role + " '" + name + "' must be " + std::to_string(shape.width) + "x" +
                std::to_string(shape.height) + "x" + std::to_string(shape.featureChannels) +
                " with " + std::to_string(batch) + " images, got " +
                (image.valid()
                     ? std::to_string(image.width()) + "x" + std::to_string(image.height()) + "x" +
                           std::to_string(image.featureChannels()) + " with " +
                           std::to_string(image.numberOfImages()) + " images"
                     : std::string("an empty image")));
    };
    // An output tensor may be listed twice, or be an input: the first Image holds it and the
    // others are copies (below).
    auto give = [&](uint32_t t, const Image& image) {
      if (pieces[t].size() > chunk) return;
      given[t] = 1;
      pieces[t].push_back({image, total, batch});
      starts[t].push_back(total);
    };
    for (size_t i = 0; i < in.size(); ++i) {
      checkShape(in[i], s.inputs[i], "input", s.inputNames[i]);
      give(s.inputs[i], in[i]);
    }
    for (size_t i = 0; i < out.size(); ++i) {
      checkShape(out[i], s.outputs[i], "output", s.outputNames[i]);
      give(s.outputs[i], out[i]);
    }
    total += batch;
  }
  // Tensor values: one chunk of GraphOptions::numberOfImages images.
  const bool tensorValues = s.hasTensors();
  if (tensorValues) {
    if (inputs.size() != 1)
      throw Error(ErrorCode::invalidArgument,
                  what +
                      " holds Tensor values, which take the whole batch: encode it in one "
                      "chunk");
    if (total != s.options.numberOfImages)
      throw Error(ErrorCode::invalidArgument, what + " holds Tensor values of a batch of " +
                                                  std::to_string(s.options.numberOfImages) +
                                                  " images; " + std::to_string(total) + " given");
  }
  // The pieces of the images kernels write. Equal pieces where a divisor of the batch comes
  // close to the limit, so the pieces of neighbouring values line up.
  const uint32_t layers = s.context.capabilities().maxImageArrayLayers;
  for (uint32_t root : s.producedImages()) {
    if (given[root]) continue;
    const uint32_t perImage = (s.tensors[root].shape.featureChannels + 3) / 4;
    // Tensor values' conversions take the whole batch; an image too large for the device is
    // reported when its temporary is made.
    const uint32_t most = tensorValues ? total : std::max(1u, layers / perImage);
    uint32_t size = std::min(most, total);
    if (size < total) {
      uint32_t divisor = size;
      while (total % divisor) --divisor;
      if (2 * divisor > size) size = divisor;
    }
    for (uint32_t first = 0; first < total; first += size) starts[root].push_back(first);
  }
  // Where a tensor's images live: its own (an input or output) or a window of its root's
  // (channels start at multiples of 4).
  auto homeOf = [&](uint32_t t, uint32_t* channel) {
    if (given[t]) {
      *channel = 0;
      return t;
    }
    return s.rootOf(t, channel);
  };
  auto pieceOf = [&](uint32_t root, uint32_t first) {
    const std::vector<uint32_t>& st = starts[root];
    return uint32_t(std::upper_bound(st.begin(), st.end(), first) - st.begin() - 1);
  };
  auto pieceCount = [&](uint32_t root, uint32_t k) {
    return (k + 1 < starts[root].size() ? starts[root][k + 1] : total) - starts[root][k];
  };
  // The segments a node runs in: every boundary of the pieces it reads or writes.
  auto segmentsOf = [&](const GraphNode& n) {
    std::vector<uint32_t> bounds{total};
    uint32_t channel = 0;
    auto add = [&](uint32_t root) {
      bounds.insert(bounds.end(), starts[root].begin(), starts[root].end());
    };
    add(s.rootOf(n.output));
    for (uint32_t t : n.inputs) add(homeOf(t, &channel));
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    return bounds;  // segment k: [bounds[k], bounds[k+1])
  };
  // Reads per piece, counted as the kernels consume them: a copy per concatenated input, any
  // other kernel once per distinct image it reads.
  std::vector<std::vector<uint32_t>> pieceReads(s.tensors.size());
  for (uint32_t root = 0; root < s.tensors.size(); ++root)
    pieceReads[root].assign(starts[root].size(), 0);
  for (const GraphNode& n : s.nodes) {
    if (n.removed || n.as<detail::ConstantNode>()) continue;
    if (tensorValues) break;  // one piece each: the scheduler's counts (below)
    const std::vector<uint32_t> bounds = segmentsOf(n);
    for (size_t k = 0; k + 1 < bounds.size(); ++k) {
      std::vector<uint32_t> homes;
      uint32_t channel = 0;
      if (const auto* concat = n.as<ConcatNode>()) {
        for (const ConcatNode::Copy& c : concat->copies)
          homes.push_back(homeOf(c.tensor, &channel));
      } else {
        for (uint32_t t : n.inputs) homes.push_back(homeOf(t, &channel));
        std::sort(homes.begin(), homes.end());
        homes.erase(std::unique(homes.begin(), homes.end()), homes.end());
      }
      for (uint32_t h : homes) pieceReads[h][pieceOf(h, bounds[k])]++;
    }
  }
  if (tensorValues)
    for (uint32_t root = 0; root < s.tensors.size(); ++root)
      if (!pieceReads[root].empty()) pieceReads[root][0] = s.rootReads[root];
  // Tensor t's images [first, first + count): a view of the piece holding them.
  auto view = [&](uint32_t t, uint32_t first, uint32_t count) {
    uint32_t channel = 0;
    const uint32_t home = homeOf(t, &channel);
    const Piece& piece = pieces[home][pieceOf(home, first)];
    Image image = piece.image;
    const uint32_t channels = s.tensors[t].shape.featureChannels;
    if (channel != 0 || channels != image.featureChannels())
      image = image.subImage({channel, channels});
    if (first != piece.first || count != piece.count)
      image = image.batchRepresentation({first - piece.first, count});
    return image;
  };
  // Tensor graphs hold every image in one piece; their conversions take it through these.
  std::vector<Image> whole(s.tensors.size());
  auto wholeView = [&](std::vector<Image>& images, uint32_t t) -> const Image& {
    if (!images[t].valid()) images[t] = view(t, 0, total);
    return images[t];
  };
  std::vector<Tensor> values(s.tensors.size());
  auto tensorView = [&](uint32_t t) -> const Tensor& {
    if (values[t].valid()) return values[t];
    const std::vector<uint32_t>& shape = s.tensors[t].tensorShape;
    values[t] = values[s.rootOf(t)].reshape(std::vector<int64_t>(shape.begin(), shape.end()));
    return values[t];
  };
  const TensorDataType dataType = s.options.channelFormat == ChannelFormat::float16
                                      ? TensorDataType::float16
                                      : TensorDataType::float32;
  // Level by level: a level's kernels over the whole batch share one barrier.
  for (const std::vector<uint32_t>& level : s.levels) {
    // The level's new images first, laid out in one barrier; memory the level's reads give back
    // goes to the next level, so no kernel of this one has to wait for another.
    std::vector<Image> fresh;
    for (uint32_t i : level) {
      const uint32_t root = s.rootOf(s.nodes[i].output);
      if (const auto* constant = s.nodes[i].as<detail::ConstantNode>()) {
        values[root] = constant->tensor;
        continue;
      }
      if (s.tensors[root].isTensor()) {
        if (values[root].valid()) continue;
        TemporaryTensor temporary(commandBuffer,
                                  {s.tensors[root].tensorShape, dataType, s.tensors[root].name});
        temporary.setReadCount(std::max(s.rootReads[root], 1u));
        values[root] = temporary;
        continue;
      }
      if (given[root] || !pieces[root].empty()) continue;
      const TensorShape& shape = s.tensors[root].shape;
      for (uint32_t k = 0; k < starts[root].size(); ++k) {
        const uint32_t count = pieceCount(root, k);
        ImageDescriptor d{shape.width, shape.height, shape.featureChannels, count,
                          s.options.channelFormat};
        d.label = s.tensors[root].name;
        if (starts[root].size() > 1)
          d.label +=
              " [images " + std::to_string(starts[root][k]) + "+" + std::to_string(count) + "]";
        TemporaryImage temporary(commandBuffer, d);
        temporary.setReadCount(std::max(pieceReads[root][k], 1u));
        pieces[root].push_back({temporary, starts[root][k], count});
        fresh.push_back(temporary);
      }
    }
    detail::prepareDestinations(*commandBuffer.impl(), fresh);
    for (uint32_t i : level) {
      const GraphNode& n = s.nodes[i];
      if (n.tensorKernel || n.as<detail::ConstantNode>()) {
        encodeTensorNode(commandBuffer, n, whole, values, wholeView, tensorView);
        continue;
      }
      const std::vector<uint32_t> bounds = segmentsOf(n);
      // A convolution encodes a batch's pieces at once: they run side by side, its configuration
      // chosen for all of them sharing the device (bench/NOTES.md, 2026-11-27), and F(4x4,3x3)
      // runs its GEMMs once for all of them (Convolution::encodeBatch).
      if (auto* convolution = dynamic_cast<Convolution*>(n.unary.get())) {
        uint32_t offset = 0;
        const uint32_t root = s.rootOf(n.output, &offset);
        std::vector<Image> sources, destinations, residuals;
        for (size_t k = 0; k + 1 < bounds.size(); ++k) {
          const uint32_t first = bounds[k], count = bounds[k + 1] - bounds[k];
          sources.push_back(view(n.inputs[0], first, count));
          destinations.push_back(view(root, first, count));
          // A convolution with a residual (optimize()).
          if (n.inputs.size() > 1) residuals.push_back(view(n.inputs[1], first, count));
        }
        convolution->destinationFeatureChannelOffset = offset;
        convolution->encodeBatch(commandBuffer, sources, destinations, residuals);
        continue;
      }
      // A fully connected layer over several pieces reads its weights once for all of them.
      auto* fullyConnected = dynamic_cast<FullyConnected*>(n.unary.get());
      if (fullyConnected && bounds.size() > 2 && n.inputs.size() == 1) {
        uint32_t offset = 0;
        const uint32_t root = s.rootOf(n.output, &offset);
        std::vector<Image> sources, destinations;
        for (size_t k = 0; k + 1 < bounds.size(); ++k) {
          sources.push_back(view(n.inputs[0], bounds[k], bounds[k + 1] - bounds[k]));
          destinations.push_back(view(root, bounds[k], bounds[k + 1] - bounds[k]));
        }
        fullyConnected->destinationFeatureChannelOffset = offset;
        fullyConnected->encodeBatch(commandBuffer, sources, destinations);
        continue;
      }
      for (size_t k = 0; k + 1 < bounds.size(); ++k) {
        const uint32_t first = bounds[k], count = bounds[k + 1] - bounds[k];
        uint32_t offset = 0;
        const uint32_t root = s.rootOf(n.output, &offset);
        const Image out = view(root, first, count);
        if (const auto* concat = n.as<ConcatNode>()) {
          for (const ConcatNode::Copy& c : concat->copies) {
            n.copy->destinationFeatureChannelOffset = c.channel;
            n.copy->encode(commandBuffer, view(c.tensor, first, count), out);
          }
        } else if (n.binary) {
          n.binary->destinationFeatureChannelOffset = offset;
          n.binary->encode(commandBuffer, view(n.inputs[0], first, count),
                           view(n.inputs[1], first, count), out);
        } else {
          n.unary->destinationFeatureChannelOffset = offset;
          n.unary->encode(commandBuffer, view(n.inputs[0], first, count), out);
        }
      }
    }
  }
  // Outputs that are graph inputs, or listed twice, are copies.
  for (size_t chunk = 0; chunk < outputs.size(); ++chunk)
    for (size_t i = 0; i < outputs[chunk].size(); ++i) {
      const Image& destination = outputs[chunk][i];
      const Image produced = view(s.outputs[i], chunkFirst[chunk], destination.numberOfImages());
      if (produced.storage() == destination.storage()) continue;
      Neuron copy(s.context, NeuronDescriptor{});
      copy.label = s.outputNames[i];
      copy.encode(commandBuffer, produced, destination);
    }
}

}  // namespace vkcnn
