// Building a Graph with Image values: the node builders that check their inputs' shapes and
// record a plain node (no kernel is made before lower()), the conversions between Images and
// Tensors, graph inputs and outputs, and the queries on values. Tensor builders: build_tensor.cpp.
#include <algorithm>
#include <string>

#include "graph/state.h"
#include "kernels/kernel_encoding.h"
#include "vkcnn/error.h"

namespace vkcnn::detail {

GraphTensor GraphState::addTensorNode(GraphNode node, std::vector<uint32_t> shape) {
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
  return append(std::move(node), std::move(info));
}

GraphTensor GraphState::append(GraphNode node, GraphTensorInfo info) {
  info.name = node.name;
  info.producer = uint32_t(nodes.size());
  node.output = uint32_t(tensors.size());
  tensors.push_back(std::move(info));
  nodes.push_back(std::move(node));
  statistics.nodes++;
  return GraphTensor{nodes.back().output};
}

GraphTensor GraphState::asTensor(GraphTensor t, const std::string& node) {
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

GraphTensor GraphState::asImage(GraphTensor t, const std::string& node) {
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

GraphTensor GraphState::addNode(GraphNode node, TensorShape shape) {
  if (!shape.width || !shape.height || !shape.featureChannels)
    throw Error(ErrorCode::invalidArgument, what(node.name) + ": its output would be empty (" +
                                                std::to_string(shape.width) + "x" +
                                                std::to_string(shape.height) + "x" +
                                                std::to_string(shape.featureChannels) + ")");
  GraphTensorInfo info;
  info.shape = shape;
  return append(std::move(node), std::move(info));
}

uint32_t GraphState::channelWindow(uint32_t first, uint32_t maxCount, TensorShape in,
                                   const std::string& node) const {
  if (first >= in.featureChannels)
    throw Error(ErrorCode::invalidArgument, what(node) + ": sourceFeatureChannelOffset " +
                                                std::to_string(first) + " is beyond the input's " +
                                                std::to_string(in.featureChannels) + " channels");
  return std::min(in.featureChannels - first, maxCount);
}

TensorShape GraphState::kernelShape(const UnaryKernel& kernel, TensorShape in,
                                    const std::string& node) const {
  // The kernel reads its source channel window (a channel split or slice reads part of it).
  const uint32_t window = channelWindow(kernel.sourceFeatureChannelOffset,
                                        kernel.sourceFeatureChannelMaxCount, in, node);
  return {kernel.destinationWidth(in.width), kernel.destinationHeight(in.height),
          kernel.destinationFeatureChannels(window)};
}

GraphTensor GraphState::addImageKernel(GraphTensor x, ImageKernelParameters parameters,
                                       const std::string& name) {
  GraphNode n = newNode(name, imageKernelName(parameters));
  x = asImage(x, n.name);
  const TensorShape out = imageKernelShape(parameters, tensor(x, n.name).shape, n.name);
  n.inputs = {x.id};
  n.parameters = ImageKernelNode{std::move(parameters)};
  return addNode(std::move(n), out);
}

}  // namespace vkcnn::detail

namespace vkcnn {

using detail::GraphNode;

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
  const TensorShape out = s.kernelShape(*kernel, s.tensor(x, n.name).shape, n.name);
  n.inputs = {x.id};
  n.parameters = detail::KernelNode{std::move(kernel)};
  return s.addNode(std::move(n), out);
}

GraphTensor Graph::pooling(GraphTensor x, bool maximum, const PoolingDescriptor& d,
                           const std::string& name) {
  return state_->addImageKernel(x, detail::PoolingParameters{maximum, false, d}, name);
}

GraphTensor Graph::globalPooling(GraphTensor x, bool maximum, const std::string& name) {
  return state_->addImageKernel(x, detail::PoolingParameters{maximum, true, {}}, name);
}

GraphTensor Graph::padImage(GraphTensor x, const PadDescriptor& d, const std::string& name) {
  return state_->addImageKernel(x, d, name);
}

GraphTensor Graph::resizeImage(GraphTensor x, const ResizeDescriptor& d, const std::string& name) {
  return state_->addImageKernel(x, d, name);
}

GraphTensor Graph::window(GraphTensor x, const ImageWindow& w, const std::string& name) {
  return state_->addImageKernel(x, w, name);
}

GraphTensor Graph::channelShuffle(GraphTensor x, uint32_t groups, const std::string& name) {
  return state_->addImageKernel(x, detail::ChannelShuffleParameters{groups}, name);
}

GraphTensor Graph::depthToSpace(GraphTensor x, uint32_t blockSize, DepthToSpace::Mode mode,
                                const std::string& name) {
  return state_->addImageKernel(x, detail::DepthToSpaceParameters{blockSize, mode}, name);
}

GraphTensor Graph::spaceToDepth(GraphTensor x, uint32_t blockSize, const std::string& name) {
  return state_->addImageKernel(x, detail::SpaceToDepthParameters{blockSize}, name);
}

GraphTensor Graph::instanceNormalization(GraphTensor x, const InstanceNormalizationDescriptor& d,
                                         const std::string& name) {
  return state_->addImageKernel(x, d, name);
}

GraphTensor Graph::localResponseNormalization(GraphTensor x,
                                              const LocalResponseNormalizationDescriptor& d,
                                              const std::string& name) {
  return state_->addImageKernel(x, d, name);
}

GraphTensor Graph::channelSoftmax(GraphTensor x, bool logarithm, const std::string& name) {
  return state_->addImageKernel(x, detail::ChannelSoftmaxParameters{logarithm}, name);
}

GraphTensor Graph::convolutionTranspose(GraphTensor x, const ConvolutionTransposeDescriptor& d,
                                        std::vector<float> weights, std::vector<float> bias,
                                        const std::string& name) {
  return state_->addImageKernel(
      x, detail::ConvolutionTransposeParameters{d, std::move(weights), std::move(bias)}, name);
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

}  // namespace vkcnn
