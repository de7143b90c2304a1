#include "vkcnn/graph.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kernels/kernel_encoding.h"
#include "vkcnn/error.h"

namespace vkcnn {
namespace detail {

enum class NodeKind {
  convolution,
  fullyConnected,
  batchNormalization,
  neuron,
  arithmetic,
  concat,
  identity,
  unary,
};

const char* toString(NodeKind kind) {
  switch (kind) {
    case NodeKind::convolution:
      return "convolution";
    case NodeKind::fullyConnected:
      return "fully-connected";
    case NodeKind::batchNormalization:
      return "batch normalization";
    case NodeKind::neuron:
      return "neuron";
    case NodeKind::arithmetic:
      return "arithmetic";
    case NodeKind::concat:
      return "concat";
    case NodeKind::identity:
      return "identity";
    case NodeKind::unary:
      return "kernel";
  }
  return "node";
}

constexpr uint32_t kNone = UINT32_MAX;

struct GraphNode {
  NodeKind kind = NodeKind::unary;
  std::string name;
  std::vector<uint32_t> inputs;
  uint32_t output = kNone;
  bool removed = false;

  ConvolutionDescriptor convolution;  // convolution, fullyConnected
  std::vector<float> weights, bias;
  Padding padding;
  BatchNormalizationParameters batchNormalization;
  NeuronDescriptor neuron;  // neuron; fused into convolution / arithmetic
  ArithmeticOperation operation = ArithmeticOperation::add;

  // Lowered kernels (compile()).
  std::shared_ptr<UnaryKernel> unary;
  std::shared_ptr<BinaryKernel> binary;
  std::shared_ptr<Neuron> copy;        // concat: copies the inputs it could not absorb
  std::vector<bool> copiedInput;       // concat: which inputs are copied at encode
  std::vector<uint32_t> inputOffsets;  // concat: channel offset of each input
};

struct GraphTensorInfo {
  TensorShape shape;
  std::string name;
  uint32_t producer = kNone;  // node index; kNone for graph inputs
  uint32_t inputIndex = kNone;
  // Concatenation removed: this tensor lives in `storedIn`'s image from `channelOffset` on.
  uint32_t storedIn = kNone;
  uint32_t channelOffset = 0;
};

struct GraphState {
  Context context;
  GraphOptions options;
  std::vector<GraphNode> nodes;
  std::vector<GraphTensorInfo> tensors;
  std::vector<uint32_t> inputs, outputs;
  std::vector<std::string> inputNames, outputNames;
  bool compiled = false;
  GraphStatistics statistics;

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

  std::string nodeName(const std::string& name, NodeKind kind) const {
    return name.empty() ? std::string(toString(kind)) + " " + std::to_string(nodes.size()) : name;
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

  void optimize();
  void lower();
};

void GraphState::optimize() {
  // Identity and dropout.
  for (GraphNode& n : nodes) {
    if (n.removed || n.kind != NodeKind::identity) continue;
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
  // Batch normalisation and neurons into the node before them.
  auto consumed = consumers();
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    GraphNode& n = nodes[i];
    if (n.removed || (n.kind != NodeKind::batchNormalization && n.kind != NodeKind::neuron))
      continue;
    const uint32_t in = n.inputs[0];
    const uint32_t p = tensors[in].producer;
    if (p == kNone || consumed[in].size() != 1 || isOutput(in)) continue;
    GraphNode& producer = nodes[p];
    const bool convolutionLike =
        producer.kind == NodeKind::convolution || producer.kind == NodeKind::fullyConnected;
    if (n.kind == NodeKind::batchNormalization && convolutionLike &&
        !producer.convolution.batchNormalization &&
        producer.convolution.neuron.type == NeuronType::none) {
      producer.convolution.batchNormalization = n.batchNormalization;
      absorb(p, i);
      statistics.foldedBatchNormalizations++;
    } else if (n.kind == NodeKind::neuron && convolutionLike &&
               producer.convolution.neuron.type == NeuronType::none) {
      producer.convolution.neuron = n.neuron;
      absorb(p, i);
      statistics.fusedNeurons++;
    } else if (n.kind == NodeKind::neuron && producer.kind == NodeKind::arithmetic &&
               producer.neuron.type == NeuronType::none) {
      producer.neuron = n.neuron;
      absorb(p, i);
      statistics.fusedNeurons++;
    } else {
      continue;
    }
    consumed = consumers();
  }
  // Concatenation: producers write into the concatenated image at their channel offsets.
  consumed = consumers();
  for (GraphNode& c : nodes) {
    if (c.removed || c.kind != NodeKind::concat) continue;
    bool all = true;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      const uint32_t t = c.inputs[k];
      const uint32_t p = tensors[t].producer;
      const bool absorbable = p != kNone && nodes[p].kind != NodeKind::concat &&
                              consumed[t].size() == 1 && !isOutput(t) &&
                              c.inputOffsets[k] % 4 == 0 && tensors[t].storedIn == kNone;
      c.copiedInput[k] = !absorbable;
      if (absorbable) {
        tensors[t].storedIn = c.output;
        tensors[t].channelOffset = c.inputOffsets[k];
      }
      all &= absorbable;
    }
    if (all) {
      c.removed = true;
      statistics.removedConcatenations++;
    }
  }
  // Nodes nobody reads (from the back, so chains disappear whole).
  for (uint32_t i = uint32_t(nodes.size()); i-- > 0;) {
    GraphNode& n = nodes[i];
    if (n.removed) continue;
    consumed = consumers();
    uint32_t root = n.output;
    while (tensors[root].storedIn != kNone) root = tensors[root].storedIn;
    const bool used = !consumed[n.output].empty() || isOutput(n.output) ||
                      (root != n.output && (!consumed[root].empty() || isOutput(root)));
    if (!used) {
      n.removed = true;
      statistics.removedUnused++;
    }
  }
}

void GraphState::lower() {
  for (GraphNode& n : nodes) {
    if (n.removed) continue;
    switch (n.kind) {
      case NodeKind::convolution: {
        auto k = std::make_shared<Convolution>(context, n.convolution, n.weights, n.bias);
        k->padding = n.padding;
        n.unary = k;
        break;
      }
      case NodeKind::fullyConnected:
        n.unary = std::make_shared<FullyConnected>(context, n.convolution, n.weights, n.bias);
        break;
      case NodeKind::batchNormalization: {
        // Not after a convolution: a 1x1 depthwise convolution that folds the same parameters.
        const uint32_t c = tensors[n.inputs[0]].shape.featureChannels;
        ConvolutionDescriptor d = ConvolutionDescriptor::depthwise(1, 1, c);
        d.batchNormalization = n.batchNormalization;
        n.unary = std::make_shared<Convolution>(context, d, std::vector<float>(c, 1.0f));
        break;
      }
      case NodeKind::neuron:
        n.unary = std::make_shared<Neuron>(context, n.neuron);
        break;
      case NodeKind::identity:
        n.unary = std::make_shared<Neuron>(context, NeuronDescriptor{});
        break;
      case NodeKind::arithmetic:
        n.binary = std::make_shared<Arithmetic>(context, n.operation, n.neuron);
        break;
      case NodeKind::concat:
        n.copy = std::make_shared<Neuron>(context, NeuronDescriptor{});
        break;
      case NodeKind::unary:
        break;
    }
    if (n.unary) n.unary->label = n.name;
    if (n.binary) n.binary->label = n.name;
    if (n.copy) n.copy->label = n.name;
    statistics.kernels +=
        n.kind == NodeKind::concat
            ? uint32_t(std::count(n.copiedInput.begin(), n.copiedInput.end(), true))
            : 1;
  }
}

}  // namespace detail

using detail::GraphNode;
using detail::kNone;
using detail::NodeKind;

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
  s.tensor(tensor, name);
  s.outputs.push_back(tensor.id);
  s.outputNames.push_back(name);
}

GraphTensor Graph::convolution(GraphTensor x, const ConvolutionDescriptor& d,
                               std::vector<float> weights, std::vector<float> bias,
                               const Padding& padding, const std::string& name) {
  auto& s = *state_;
  GraphNode n;
  n.kind = NodeKind::convolution;
  n.name = s.nodeName(name, n.kind);
  s.requireBuilding(n.name);
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
  n.convolution = d;
  n.weights = std::move(weights);
  n.bias = std::move(bias);
  n.padding = padding;
  return s.addNode(std::move(n), out);
}

GraphTensor Graph::fullyConnected(GraphTensor x, const ConvolutionDescriptor& d,
                                  std::vector<float> weights, std::vector<float> bias,
                                  const std::string& name) {
  auto& s = *state_;
  GraphNode n;
  n.kind = NodeKind::fullyConnected;
  n.name = s.nodeName(name, n.kind);
  s.requireBuilding(n.name);
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
  n.convolution = d;
  n.weights = std::move(weights);
  n.bias = std::move(bias);
  return s.addNode(std::move(n), {1, 1, d.outputFeatureChannels});
}

GraphTensor Graph::batchNormalization(GraphTensor x, const BatchNormalizationParameters& p,
                                      const std::string& name) {
  auto& s = *state_;
  GraphNode n;
  n.kind = NodeKind::batchNormalization;
  n.name = s.nodeName(name, n.kind);
  s.requireBuilding(n.name);
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
  n.inputs = {x.id};
  n.batchNormalization = p;
  return s.addNode(std::move(n), in);
}

GraphTensor Graph::neuron(GraphTensor x, const NeuronDescriptor& neuron, const std::string& name) {
  auto& s = *state_;
  GraphNode n;
  n.kind = NodeKind::neuron;
  n.name = s.nodeName(name, n.kind);
  s.requireBuilding(n.name);
  const TensorShape in = s.tensor(x, n.name).shape;
  n.inputs = {x.id};
  n.neuron = neuron;
  return s.addNode(std::move(n), in);
}

GraphTensor Graph::arithmetic(GraphTensor a, GraphTensor b, ArithmeticOperation operation,
                              const std::string& name) {
  auto& s = *state_;
  GraphNode n;
  n.kind = NodeKind::arithmetic;
  n.name = s.nodeName(name, n.kind);
  s.requireBuilding(n.name);
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
  n.operation = operation;
  return s.addNode(std::move(n), sa);
}

GraphTensor Graph::concat(const std::vector<GraphTensor>& inputs, const std::string& name) {
  auto& s = *state_;
  GraphNode n;
  n.kind = NodeKind::concat;
  n.name = s.nodeName(name, n.kind);
  s.requireBuilding(n.name);
  if (inputs.empty()) throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": no inputs");
  TensorShape out = s.tensor(inputs[0], n.name).shape;
  out.featureChannels = 0;
  for (GraphTensor t : inputs) {
    const TensorShape in = s.tensor(t, n.name).shape;
    if (in.width != out.width || in.height != out.height)
      throw Error(ErrorCode::invalidArgument,
                  s.what(n.name) + ": inputs differ in size (" + std::to_string(in.width) + "x" +
                      std::to_string(in.height) + " vs " + std::to_string(out.width) + "x" +
                      std::to_string(out.height) + ")");
    n.inputs.push_back(t.id);
    n.inputOffsets.push_back(out.featureChannels);
    out.featureChannels += in.featureChannels;
  }
  n.copiedInput.assign(inputs.size(), true);
  return s.addNode(std::move(n), out);
}

GraphTensor Graph::identity(GraphTensor x, const std::string& name) {
  auto& s = *state_;
  GraphNode n;
  n.kind = NodeKind::identity;
  n.name = s.nodeName(name, n.kind);
  s.requireBuilding(n.name);
  const TensorShape in = s.tensor(x, n.name).shape;
  n.inputs = {x.id};
  return s.addNode(std::move(n), in);
}

GraphTensor Graph::unary(GraphTensor x, std::shared_ptr<UnaryKernel> kernel,
                         const std::string& name) {
  auto& s = *state_;
  GraphNode n;
  n.kind = NodeKind::unary;
  n.name = s.nodeName(name.empty() && kernel ? kernel->label : name, n.kind);
  s.requireBuilding(n.name);
  if (!kernel) throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": the kernel is null");
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
  n.unary = std::move(kernel);
  return s.addNode(std::move(n), out);
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
  if (s.options.optimize) s.optimize();
  s.lower();
  s.compiled = true;
}

uint32_t Graph::maxNumberOfImages() const {
  const auto& s = *state_;
  const uint32_t layers = s.context.capabilities().maxImageArrayLayers;
  uint32_t most = layers;
  for (uint32_t t = 0; t < s.tensors.size(); ++t) {
    const detail::GraphTensorInfo& info = s.tensors[t];
    const bool alive = info.producer == kNone || !s.nodes[info.producer].removed || s.isOutput(t);
    if (!alive || info.storedIn != kNone) continue;
    most = std::min(most, layers / ((info.shape.featureChannels + 3) / 4));
  }
  return most;
}

uint64_t Graph::intermediateTensorBytes(uint32_t numberOfImages) const {
  const auto& s = *state_;
  uint64_t total = 0;
  for (const GraphNode& n : s.nodes) {
    if (n.removed || s.isOutput(n.output) || s.tensors[n.output].storedIn != kNone) continue;
    const TensorShape& t = s.tensors[n.output].shape;
    total += uint64_t(t.width) * t.height * ((t.featureChannels + 3) / 4) * 4 *
             bytesPerChannel(s.options.channelFormat) * numberOfImages;
  }
  return total;
}

std::vector<std::string> Graph::describe() const {
  std::vector<std::string> lines;
  const auto& s = *state_;
  for (const GraphNode& n : s.nodes) {
    if (n.removed) continue;
    std::ostringstream line;
    line << n.name << " (" << detail::toString(n.kind);
    if ((n.kind == NodeKind::convolution || n.kind == NodeKind::fullyConnected)) {
      if (n.convolution.batchNormalization) line << " + batch norm";
      if (n.convolution.neuron.type != NeuronType::none)
        line << " + " << toString(n.convolution.neuron.type);
    }
    if (n.kind == NodeKind::arithmetic && n.neuron.type != NeuronType::none)
      line << " + " << toString(n.neuron.type);
    const auto& out = s.tensors[n.output];
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
  compile();
  auto& s = *state_;
  const std::string what = "graph '" + s.options.label + "'";
  if (inputs.size() != s.inputs.size())
    throw Error(ErrorCode::invalidArgument, what + " takes " + std::to_string(s.inputs.size()) +
                                                " inputs, " + std::to_string(inputs.size()) +
                                                " given");
  if (outputs.size() != s.outputs.size())
    throw Error(ErrorCode::invalidArgument, what + " has " + std::to_string(s.outputs.size()) +
                                                " outputs, " + std::to_string(outputs.size()) +
                                                " given");
  const uint32_t batch = inputs.empty() ? 1 : inputs[0].numberOfImages();
  std::vector<Image> images(s.tensors.size());
  auto checkShape = [&](const Image& image, uint32_t t, const std::string& role,
                        const std::string& name) {
    const TensorShape& shape = s.tensors[t].shape;
    if (!image.valid() || image.width() != shape.width || image.height() != shape.height ||
        image.featureChannels() != shape.featureChannels || image.numberOfImages() != batch)
      throw Error(ErrorCode::invalidArgument,
                  what + " " + role + " '" + name + "' must be " + std::to_string(shape.width) +
                      "x" + std::to_string(shape.height) + "x" +
                      std::to_string(shape.featureChannels) + " with " + std::to_string(batch) +
                      " images, got " +
                      (image.valid()
                           ? std::to_string(image.width()) + "x" + std::to_string(image.height()) +
                                 "x" + std::to_string(image.featureChannels()) + " with " +
                                 std::to_string(image.numberOfImages()) + " images"
                           : std::string("an empty image")));
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkShape(inputs[i], s.inputs[i], "input", s.inputNames[i]);
    images[s.inputs[i]] = inputs[i];
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    checkShape(outputs[i], s.outputs[i], "output", s.outputNames[i]);

  // Reads of each tensor's image (its root's, for tensors stored in a concatenation).
  auto consumed = s.consumers();
  std::vector<uint32_t> reads(s.tensors.size(), 0);
  for (uint32_t n = 0; n < s.nodes.size(); ++n) {
    const GraphNode& node = s.nodes[n];
    if (node.removed) continue;
    if (node.kind == NodeKind::concat) {
      for (size_t k = 0; k < node.inputs.size(); ++k)
        if (node.copiedInput[k]) reads[node.inputs[k]]++;
    } else {
      std::vector<uint32_t> unique = node.inputs;
      std::sort(unique.begin(), unique.end());
      unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
      for (uint32_t t : unique) reads[t]++;
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    // An output tensor may be listed twice, or be an input: copy it there.
    images[s.outputs[i]] = images[s.outputs[i]].valid() ? images[s.outputs[i]] : outputs[i];
  }

  auto destination = [&](uint32_t t, uint32_t& offset) -> Image {
    uint32_t root = t;
    offset = 0;
    while (s.tensors[root].storedIn != kNone) {
      offset += s.tensors[root].channelOffset;
      root = s.tensors[root].storedIn;
    }
    if (!images[root].valid()) {
      const TensorShape& shape = s.tensors[root].shape;
      ImageDescriptor d{shape.width, shape.height, shape.featureChannels, batch,
                        s.options.channelFormat};
      d.label = s.tensors[root].name;
      TemporaryImage temporary(commandBuffer, d);
      temporary.setReadCount(std::max(reads[root], 1u));
      images[root] = temporary;
    }
    return images[root];
  };

  for (const GraphNode& n : s.nodes) {
    if (n.removed) continue;
    uint32_t offset = 0;
    Image out = destination(n.output, offset);
    if (n.kind == NodeKind::concat) {
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (!n.copiedInput[k]) continue;
        n.copy->destinationFeatureChannelOffset = offset + n.inputOffsets[k];
        n.copy->encode(commandBuffer, images[n.inputs[k]], out);
      }
    } else if (n.binary) {
      n.binary->destinationFeatureChannelOffset = offset;
      n.binary->encode(commandBuffer, images[n.inputs[0]], images[n.inputs[1]], out);
    } else {
      n.unary->destinationFeatureChannelOffset = offset;
      n.unary->encode(commandBuffer, images[n.inputs[0]], out);
    }
  }
  // Outputs that are graph inputs, or listed twice, are copies.
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Image& produced = images[s.outputs[i]];
    if (produced.storage() == outputs[i].storage()) continue;
    Neuron copy(s.context, NeuronDescriptor{});
    copy.label = s.outputNames[i];
    copy.encode(commandBuffer, produced, outputs[i]);
  }
  (void)consumed;
}

}  // namespace vkcnn
