// optimize(): the one owner of fusion. Rewrites the built nodes before storage planning and
// lowering: identities disappear; batch normalisations and affines fold into the convolution
// before them or compose; neurons fuse into their producer; x * sigmoid(x) is silu; a residual
// add joins its convolution; a squeeze-and-excitation block is one node; a normalisation read only
// by convolutions becomes their source activation; unused nodes go. Parameters only: no kernel and
// no device memory is made here. vkcnn/graph.h lists the rules for callers.
#include <algorithm>

#include "graph/state.h"
#include "vkcnn/pooling.h"
#include "vkcnn/squeeze_excitation.h"
#include "vulkan/overrides.h"

namespace vkcnn::detail {

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

void GraphState::optimize() {
  removeIdentities();
  fuseSilu();
  fuseAffinesAndNeurons();
  fuseResiduals();
  fuseSqueezeExcitation();
  fuseSourceActivations();
  removeUnused();
}

// Identity and dropout.
void GraphState::removeIdentities() {
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
}

// Batch normalisations, affines and neurons into the node before them, in build order, so a
// chain (convolution, batch norm, scale, shift, relu) ends in one node.
void GraphState::fuseAffinesAndNeurons() {
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
}

// A residual block's add into the convolution that produces one of its inputs: the convolution
// adds the other (its residual) before the add's neuron, relu(bn(conv(x)) + shortcut) in one
// kernel. Where both inputs are such convolutions (a projection shortcut), the one on the longer
// chain takes the add, so the other still runs beside that chain. The residual's writer cannot
// depend on the convolution (whose only reader was the add); a concatenation is left alone,
// since several nodes may write its slots.
void GraphState::fuseResiduals() {
  auto consumed = consumers();
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
  if (!overrides(context).fuseSourceActivation) return;
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
  if (!overrides(context).fuseSilu) return;
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
namespace {

// A global average pool over all `channels` of its whole input: the Graph's own, or a caller's
// kernel reading no window.
bool wholeAverage(const GraphNode& pool, uint32_t channels) {
  if (const auto* image = pool.as<ImageKernelNode>()) {
    const auto* p = std::get_if<PoolingParameters>(&image->parameters);
    return p && p->global && !p->maximum;
  }
  const auto* kernel = pool.as<KernelNode>();
  const auto* average =
      kernel ? dynamic_cast<const GlobalPoolingAverage*>(kernel->kernel.get()) : nullptr;
  return average && !average->sourceFeatureChannelOffset &&
         average->sourceFeatureChannelMaxCount >= channels && !average->offset.x &&
         !average->offset.y && !average->offset.z;
}

}  // namespace

void GraphState::fuseSqueezeExcitation() {
  if (!overrides(context).fuseSqueezeExcitation) return;
  // Each of the kernel's workgroups recomputes the MLP: beyond this many fc1 weights (C x R) that
  // costs more than the dispatches it saves (bench/NOTES.md, 2026-11-25), and the block stays as
  // it is. VKCNN_SE_MAX_WEIGHTS=N moves the limit (measurements).
  const uint64_t maxWeights =
      overrides(context).squeezeExcitationMaxWeights.value_or(SqueezeExcitation::kFusedWeightLimit);
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
    if (!wholeAverage(pool, C) || pool.removed || pool.inputs[0] != x) return false;
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

}  // namespace vkcnn::detail
