// The node helpers every phase shares: kind names and the affine of a batch normalisation or an
// affine node (optimize() folds and composes it, lower() makes a depthwise convolution of it).
#include "graph/nodes.h"

#include <cmath>

namespace vkcnn::detail {

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
    const char* operator()(const TensorKernelNode& k) const {
      return tensorKernelName(k.parameters);
    }
    const char* operator()(const SqueezeExcitationNode&) const { return "squeeze excitation"; }
    const char* operator()(const ImageKernelNode& k) const { return imageKernelName(k.parameters); }
  };
  return std::visit(Names{}, p);
}

const char* imageKernelName(const ImageKernelParameters& p) {
  struct Names {
    const char* operator()(const PoolingParameters& p) const {
      return p.global ? (p.maximum ? "global pooling max" : "global pooling average")
                      : (p.maximum ? "pooling max" : "pooling average");
    }
    const char* operator()(const PadDescriptor&) const { return "pad"; }
    const char* operator()(const ResizeDescriptor&) const { return "resize"; }
    const char* operator()(const ImageWindow&) const { return "window"; }
    const char* operator()(const ChannelShuffleParameters&) const { return "channel shuffle"; }
    const char* operator()(const DepthToSpaceParameters&) const { return "depth to space"; }
    const char* operator()(const SpaceToDepthParameters&) const { return "space to depth"; }
    const char* operator()(const InstanceNormalizationDescriptor&) const {
      return "instance normalization";
    }
    const char* operator()(const LocalResponseNormalizationDescriptor&) const {
      return "local response normalization";
    }
    const char* operator()(const ChannelSoftmaxParameters& s) const {
      return s.logarithm ? "log-softmax" : "softmax";
    }
    const char* operator()(const ConvolutionTransposeParameters&) const {
      return "convolution transpose";
    }
  };
  return std::visit(Names{}, p);
}

const char* tensorKernelName(const TensorKernelParameters& p) {
  struct Names {
    const char* operator()(const TensorSoftmaxParameters& s) const {
      return s.logarithm ? "log-softmax" : "softmax";
    }
    const char* operator()(const TensorReductionParameters&) const { return "reduction"; }
    const char* operator()(const TensorArgReductionParameters& a) const {
      return a.maximum ? "argmax" : "argmin";
    }
    const char* operator()(const TensorMatMulParameters&) const { return "matmul"; }
    const char* operator()(const GemmDescriptor&) const { return "gemm"; }
    const char* operator()(const TensorLayerNormalizationParameters&) const {
      return "layer normalization";
    }
    const char* operator()(const TensorResizeDescriptor&) const { return "tensor resize"; }
    const char* operator()(const TensorGatherParameters&) const { return "gather"; }
    const char* operator()(const TensorPadParameters&) const { return "tensor pad"; }
  };
  return std::visit(Names{}, p);
}

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

void affineOf(const GraphNode& n, std::vector<double>& scale, std::vector<double>& shift) {
  if (const auto* bn = n.as<BatchNormalizationNode>())
    return affineOf(bn->parameters, scale, shift);
  const auto& a = *n.as<AffineNode>();
  scale.assign(a.scale.begin(), a.scale.end());
  shift.assign(a.shift.begin(), a.shift.end());
}

}  // namespace vkcnn::detail
