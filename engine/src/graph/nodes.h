// The Graph's nodes as built: one plain parameter struct per kind (what the caller gave, and what
// optimize() rewrites), the node that holds one and, after lower(), its kernels; and the value
// record of each tensor (shape, producer, where its storage lives). Shared by every phase of the
// Graph (build, optimize, storage, lower, schedule, plan, encode); nothing here touches the device.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "vkcnn/graph.h"
#include "vkcnn/normalization.h"
#include "vkcnn/padding.h"
#include "vkcnn/pooling.h"
#include "vkcnn/rearrange.h"
#include "vkcnn/resize.h"
#include "vkcnn/squeeze_excitation.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn::detail {

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
  // Read from a .vkcnn file with its weights mapped (graph/serialize.h's readGraph): the weights
  // where the file's bytes are, which lower() reads in place of `weights` (then empty), so that
  // loading copies nothing it can map. Valid until the Graph compiles: the reader's caller keeps
  // the bytes until then (a Session does). The rewrites never see such a node (a file's graph is
  // rewritten already).
  std::span<const float> mappedWeights;
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
// A kernel the caller made (Graph::unary).
struct KernelNode {
  std::shared_ptr<UnaryKernel> kernel;
};
// Image kernels the Graph makes in lower() from plain parameters (Graph::pooling and its
// siblings, which the ONNX importer calls): the node holds only data, so building a graph makes no
// kernel and touches no device memory.
struct PoolingParameters {
  bool maximum = false;
  bool global = false;           // GlobalPoolingMax / GlobalPoolingAverage
  PoolingDescriptor descriptor;  // windowed pooling only
};
struct ChannelShuffleParameters {
  uint32_t groups = 1;
};
struct DepthToSpaceParameters {
  uint32_t blockSize = 1;
  DepthToSpace::Mode mode = DepthToSpace::Mode::DCR;
};
struct SpaceToDepthParameters {
  uint32_t blockSize = 1;
};
struct ChannelSoftmaxParameters {
  bool logarithm = false;
};
struct ConvolutionTransposeParameters {
  ConvolutionTransposeDescriptor descriptor;
  std::vector<float> weights, bias;
};
using ImageKernelParameters =
    std::variant<PoolingParameters, PadDescriptor, ResizeDescriptor, ImageWindow,
                 ChannelShuffleParameters, DepthToSpaceParameters, SpaceToDepthParameters,
                 InstanceNormalizationDescriptor, LocalResponseNormalizationDescriptor,
                 ChannelSoftmaxParameters, ConvolutionTransposeParameters>;
struct ImageKernelNode {
  ImageKernelParameters parameters;
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
// Every other Tensor kernel (softmax, reductions, matrix products, ...): plain parameters, the
// kernel made in lower() (MakeTensorKernel) like an Image kernel's, so that a built graph holds
// only data (and can be written to a .vkcnn file).
struct TensorSoftmaxParameters {
  int32_t axis = -1;
  bool logarithm = false;
};
struct TensorReductionParameters {
  TensorReductionOperation operation = TensorReductionOperation::sum;
  std::vector<int32_t> axes;
  bool keepDimensions = true;
};
struct TensorArgReductionParameters {
  bool maximum = true;
  int32_t axis = 0;
  bool keepDimensions = true, selectLastIndex = false;
};
struct TensorMatMulParameters {};
struct TensorLayerNormalizationParameters {
  int32_t axis = -1;
  float epsilon = 1e-5f;
};
struct TensorGatherParameters {
  int32_t axis = 0;
};
struct TensorPadParameters {
  TensorPaddingMode mode = TensorPaddingMode::constant;
  std::vector<int64_t> pads;
  float value = 0;
};
using TensorKernelParameters =
    std::variant<TensorSoftmaxParameters, TensorReductionParameters, TensorArgReductionParameters,
                 TensorMatMulParameters, GemmDescriptor, TensorLayerNormalizationParameters,
                 TensorResizeDescriptor, TensorGatherParameters, TensorPadParameters>;
struct TensorKernelNode {
  TensorKernelParameters parameters;
};

using NodeParameters =
    std::variant<ConvolutionNode, BatchNormalizationNode, AffineNode, NeuronNode, ArithmeticNode,
                 ConcatNode, IdentityNode, KernelNode, ToTensorNode, ToImageNode, ConstantNode,
                 TransposeNode, TensorUnaryNode, TensorBinaryNode, WhereNode, SliceNode,
                 TensorConcatNode, TensorKernelNode, SqueezeExcitationNode, ImageKernelNode>;

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

// The node's kind, for describe() and errors.
const char* kindName(const NodeParameters& p);
const char* imageKernelName(const ImageKernelParameters& p);
const char* tensorKernelName(const TensorKernelParameters& p);

// y = scale[c] * x + shift[c] of a batch normalisation, in double as the convolution folds it.
void affineOf(const BatchNormalizationParameters& p, std::vector<double>& scale,
              std::vector<double>& shift);
// The node's scale and shift, for a batch normalisation or an affine.
void affineOf(const GraphNode& n, std::vector<double>& scale, std::vector<double>& shift);

template <class T>
double channel(const std::vector<T>& v, size_t c) {
  return double(v.size() == 1 ? v[0] : v[c]);
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

}  // namespace vkcnn::detail
