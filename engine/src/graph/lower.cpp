// lower(): the one place a Graph's nodes become kernels. Convolutions and fully-connected layers
// are built first on several threads (their weight packing and uploads are most of a load), then
// every other node in build order, each from its plain parameters; user kernels (KernelNode) are
// taken as they are. Runs inside compile()'s UploadBatch.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "graph/state.h"
#include "vkcnn/convolution_transpose.h"
#include "vkcnn/normalization.h"
#include "vkcnn/padding.h"
#include "vkcnn/pooling.h"
#include "vkcnn/rearrange.h"
#include "vkcnn/resize.h"
#include "vkcnn/softmax.h"
#include "vkcnn/tensor_ops.h"
#include "vulkan/context_impl.h"
#include "vulkan/overrides.h"

namespace vkcnn::detail {

// Runs body(0) .. body(count - 1) on up to hardware_concurrency threads, the calling one among
// them, each taking the next index (layers differ in size by orders of magnitude). Workers enrol
// in the calling thread's UploadBatch. The first exception is rethrown once all have stopped.
// VKCNN_LOAD_THREADS=N caps the threads (1: on the calling thread alone).
template <class F>
void parallelFor(ContextImpl& context, size_t count, F&& body) {
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (const uint32_t cap = processOverrides().loadThreads) threads = cap;
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

namespace {

// A copy of a channel window and a rectangle of its source (Graph::window): a Neuron of type none
// whose destination is the rectangle's size.
class WindowCopy : public Neuron {
 public:
  WindowCopy(const Context& context, const ImageWindow& w)
      : Neuron(context, NeuronDescriptor{}), width_(w.width), height_(w.height) {
    sourceFeatureChannelOffset = w.channel;
    sourceFeatureChannelMaxCount = w.channels;
    offset.x = int32_t(w.x);
    offset.y = int32_t(w.y);
  }
  uint32_t destinationWidth(uint32_t) const override { return width_; }
  uint32_t destinationHeight(uint32_t) const override { return height_; }

 private:
  uint32_t width_, height_;
};

// The kernel of an Image kernel node: the one place the Graph's own Image kernels are made.
struct MakeImageKernel {
  const Context& context;
  using Made = std::shared_ptr<UnaryKernel>;
  Made operator()(const PoolingParameters& p) const {
    if (p.global)
      return p.maximum ? Made(std::make_shared<GlobalPoolingMax>(context))
                       : Made(std::make_shared<GlobalPoolingAverage>(context));
    return p.maximum ? Made(std::make_shared<PoolingMax>(context, p.descriptor))
                     : Made(std::make_shared<PoolingAverage>(context, p.descriptor));
  }
  Made operator()(const PadDescriptor& d) const { return std::make_shared<Pad>(context, d); }
  Made operator()(const ResizeDescriptor& d) const { return std::make_shared<Resize>(context, d); }
  Made operator()(const ImageWindow& w) const { return std::make_shared<WindowCopy>(context, w); }
  Made operator()(const ChannelShuffleParameters& p) const {
    return std::make_shared<ChannelShuffle>(context, p.groups);
  }
  Made operator()(const DepthToSpaceParameters& p) const {
    return std::make_shared<DepthToSpace>(context, p.blockSize, p.mode);
  }
  Made operator()(const SpaceToDepthParameters& p) const {
    return std::make_shared<SpaceToDepth>(context, p.blockSize);
  }
  Made operator()(const InstanceNormalizationDescriptor& d) const {
    return std::make_shared<InstanceNormalization>(context, d);
  }
  Made operator()(const LocalResponseNormalizationDescriptor& d) const {
    return std::make_shared<LocalResponseNormalization>(context, d);
  }
  Made operator()(const ChannelSoftmaxParameters& p) const {
    return p.logarithm ? Made(std::make_shared<LogSoftmax>(context))
                       : Made(std::make_shared<Softmax>(context));
  }
  Made operator()(const ConvolutionTransposeParameters& p) const {
    return std::make_shared<ConvolutionTranspose>(context, p.descriptor, p.weights, p.bias);
  }
};

// The kernel of a Tensor kernel node: the one place the Graph's own Tensor kernels are made.
struct MakeTensorKernel {
  const Context& context;
  using Made = std::shared_ptr<TensorKernel>;
  Made operator()(const TensorSoftmaxParameters& p) const {
    return std::make_shared<TensorSoftmax>(context, p.axis, p.logarithm);
  }
  Made operator()(const TensorReductionParameters& p) const {
    return std::make_shared<TensorReduction>(context, p.operation, p.axes, p.keepDimensions);
  }
  Made operator()(const TensorArgReductionParameters& p) const {
    return std::make_shared<TensorArgReduction>(context, p.maximum, p.axis, p.keepDimensions,
                                                p.selectLastIndex);
  }
  Made operator()(const TensorMatMulParameters&) const {
    return std::make_shared<TensorMatMul>(context);
  }
  Made operator()(const GemmDescriptor& d) const {
    return std::make_shared<TensorGemm>(context, d);
  }
  Made operator()(const TensorLayerNormalizationParameters& p) const {
    return std::make_shared<TensorLayerNormalization>(context, p.axis, p.epsilon);
  }
  Made operator()(const TensorResizeDescriptor& d) const {
    return std::make_shared<TensorResize>(context, d);
  }
  Made operator()(const TensorGatherParameters& p) const {
    return std::make_shared<TensorGather>(context, p.axis);
  }
  Made operator()(const TensorPadParameters& p) const {
    return std::make_shared<TensorPad>(context, p.mode, p.pads, p.value);
  }
};

}  // namespace

// The kernels' own rules, so a shape is never computed twice: a convolution transpose's from its
// descriptor (its kernel uploads weights), an instance normalisation keeps its source's (its kernel
// uploads gamma and beta), a window is its rectangle and channel window (a Neuron, which binds a
// device buffer), and every other kernel, whose constructor only checks and keeps its parameters,
// answers as a probe that is then dropped. None of this waits for the device.
TensorShape GraphState::imageKernelShape(const ImageKernelParameters& parameters, TensorShape in,
                                         const std::string& node) const {
  if (const auto* t = std::get_if<ConvolutionTransposeParameters>(&parameters)) {
    const ConvolutionTransposeDescriptor& d = t->descriptor;
    return {ConvolutionTranspose::destinationSize(d, in.width, true, what(node)),
            ConvolutionTranspose::destinationSize(d, in.height, false, what(node)),
            d.outputFeatureChannels};
  }
  if (std::holds_alternative<InstanceNormalizationDescriptor>(parameters)) return in;
  if (const auto* w = std::get_if<ImageWindow>(&parameters))
    return {w->width, w->height, channelWindow(w->channel, w->channels, in, node)};
  return kernelShape(*std::visit(MakeImageKernel{context}, parameters), in, node);
}

void GraphState::lower() {
  lowerConvolutions();
  const TensorDataType dataType = options.channelFormat == ChannelFormat::float16
                                      ? TensorDataType::float16
                                      : TensorDataType::float32;
  for (GraphNode& n : nodes)
    if (!n.removed) lowerNode(n, dataType);
}

void GraphState::lowerConvolutions() {
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
    descriptor.accumulatorPrecision = options.accumulatorPrecision;
    const std::span<const float> weights =
        c->mappedWeights.empty() ? std::span<const float>(c->weights) : c->mappedWeights;
    if (c->fullyConnected) {
      n.unary = std::make_shared<FullyConnected>(context, descriptor, weights, c->bias);
    } else {
      auto k = std::make_shared<Convolution>(context, descriptor, weights, c->bias);
      k->padding = c->padding;
      n.unary = k;
    }
  });
}

void GraphState::lowerNode(GraphNode& n, TensorDataType dataType) {
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
      depthwise({a->scale.begin(), a->scale.end()}, {a->shift.begin(), a->shift.end()}, a->neuron);
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
  } else if (const auto* image = n.as<ImageKernelNode>()) {
    n.unary = std::visit(MakeImageKernel{context}, image->parameters);
  } else if (n.as<ToTensorNode>()) {
    auto k = std::make_shared<ImageToTensor>(context, TensorLayout::NCHW);
    k->dataType = dataType;
    n.tensorKernel = k;
  } else if (n.as<ToImageNode>()) {
    auto k = std::make_shared<TensorToImage>(context, TensorLayout::NCHW);
    k->channelFormat = options.channelFormat;
    n.tensorKernel = k;
  } else if (auto* constant = n.as<ConstantNode>()) {
    TensorDescriptor d{tensors[n.output].tensorShape, dataType, n.name};
    constant->tensor = Tensor(context, d);
    constant->tensor.writeFloats(constant->values);
    return;  // no kernel
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
    n.tensorKernel = std::visit(MakeTensorKernel{context}, k->parameters);
  } else {  // slice, tensor concat: copies
    n.tensorKernel = std::make_shared<TensorCopy>(context);
  }
  if (n.tensorKernel) n.tensorKernel->label = n.name;
  if (n.unary) n.unary->label = n.name;
  if (n.binary) n.binary->label = n.name;
  if (n.copy) n.copy->label = n.name;
}

}  // namespace vkcnn::detail
