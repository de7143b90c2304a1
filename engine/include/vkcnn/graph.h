// Graph: a network as kernels connected by named values (MPSNNGraph). Build it once, encode it
// many times. Every intermediate result is a temporary whose readCount is its number of
// consumers, so memory is recycled while the network runs.
//
// Two kinds of value: Images (the image layout: channels in 4-channel layers; the batch comes
// from the inputs at encode time) and Tensors (vkcnn/tensor.h: row-major, any rank, the batch
// included, so a graph holding them is encoded at GraphOptions::numberOfImages). A value lives as
// an Image where the layout allows and as a Tensor otherwise; where the two meet, the Graph
// inserts one conversion per value (GraphStatistics::conversions). Inputs and outputs are
// Images; temporaries of both kinds come from the command buffer's one pool.
//
// compile() (called by the first encode if not before) rewrites the network first; it is the one
// place where nodes are fused (the ONNX importer emits plain nodes):
//   - identity and dropout nodes disappear;
//   - batch normalisations and affines right after a convolution or fully-connected layer are
//     folded into its weights and bias; an affine right after another affine or a batch
//     normalisation composes with it; a scalar affine left alone is a linear neuron;
//   - a neuron right after a convolution, fully-connected or element-wise node is fused into it;
//   - a neuron right after a batch normalisation or affine that is not folded is fused into it;
//   - x * sigmoid(x) is a silu neuron (fused as above);
//   - an addition whose input is a convolution's only use is done by that convolution;
//   - a squeeze-and-excitation block (global average pool, 1x1 convolution + neuron, 1x1
//     convolution + sigmoid or hard sigmoid, multiply by the pool's input) is the pool and one
//     SqueezeExcitation kernel;
//   - nodes whose results nobody uses are dropped;
//   - concatenations become storage: a concatenation whose inputs are a run of a larger one's
//     (starting at a channel that is a multiple of 4) is a window of that one's image, so a
//     densenet block lives in one image; producers write straight into it at their channel
//     offsets (multiples of 4), and the other inputs are copied in once. A concatenation that
//     copies nothing disappears.
// Kernels are encoded in levels: a level holds the kernels whose inputs earlier levels wrote,
// after one barrier (independent branches share it).
// Thread safety: one Graph is encoded by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vkcnn/arithmetic.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/convolution.h"
#include "vkcnn/convolution_transpose.h"
#include "vkcnn/export.h"
#include "vkcnn/image.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"
#include "vkcnn/normalization.h"
#include "vkcnn/padding.h"
#include "vkcnn/pooling.h"
#include "vkcnn/rearrange.h"
#include "vkcnn/resize.h"

namespace vkcnn {

namespace detail {
struct GraphState;
struct GraphAccess;  // the .vkcnn format's writer and reader (engine/src/graph/serialize.cpp)
}  // namespace detail

// Tensor kernel operations (vkcnn/tensor_ops.h, which this header leaves out: the name Tensor
// would clash with applications' own).
enum class TensorUnaryOperation : uint32_t;
enum class TensorBinaryOperation : uint32_t;
enum class TensorReductionOperation : uint32_t;
enum class TensorPaddingMode : uint32_t;
struct TensorResizeDescriptor;
struct GemmDescriptor;

// A value flowing between nodes; `id` indexes the graph's tensors.
struct GraphTensor {
  uint32_t id = UINT32_MAX;                        // UINT32_MAX: no value
  bool valid() const { return id != UINT32_MAX; }  // whether it names a value
};

// A window of an Image (Graph::window): channels [channel, channel + channels) (kWholeExtent: to
// the last) of the width x height rectangle at (x, y).
struct ImageWindow {
  uint32_t channel = 0, channels = kWholeExtent;  // the source channels copied
  uint32_t x = 0, y = 0, width = 1, height = 1;   // the source rectangle copied
};

// Shape of one image of a tensor (the batch size comes from the inputs at encode time).
struct TensorShape {
  uint32_t width = 1, height = 1, featureChannels = 1;  // pixels and channels
  bool operator==(const TensorShape&) const = default;
};

// How a Graph stores its values and whether compile() rewrites it.
struct GraphOptions {
  ChannelFormat channelFormat = ChannelFormat::float16;  // of every intermediate and output
  bool optimize = true;                                  // the rewrites listed above
  // Every convolution's ConvolutionDescriptor::accumulatorPrecision (convolution.h): float16
  // accumulators on the matrix units, where they apply, for speed at some accuracy.
  AccumulatorPrecision accumulatorPrecision = AccumulatorPrecision::float32;
  // The batch of a graph with Tensor values, which hold the batch axis (0: a graph of Images
  // only, encoded at any batch). Encoding such a graph takes inputs of this many images.
  uint32_t numberOfImages = 0;
  std::string label = "graph";  // names it in error messages
};

// What a Graph holds, and what compile() rewrote (Graph::statistics()).
struct GraphStatistics {
  uint32_t nodes = 0;    // as built
  uint32_t kernels = 0;  // after plan(): kernels encoded per run
  // What compile() did: neurons fused into their producers, batch normalisations folded into
  // weights, concatenations written in place, identities and unused nodes removed.
  uint32_t fusedNeurons = 0, foldedBatchNormalizations = 0, removedConcatenations = 0,
           removedIdentities = 0, removedUnused = 0;
  // Affines folded into a convolution or composed with the affine or batch normalisation before.
  uint32_t foldedAffines = 0;
  // Image <-> Tensor conversions (kernels) where Image and Tensor values meet.
  uint32_t conversions = 0;
  // Element-wise adds folded into the convolution producing one of their inputs, which adds the
  // other (Convolution::encodeWithResidual) and applies the add's neuron.
  uint32_t fusedResiduals = 0;
  // Mul(x, Sigmoid(x)) made one silu neuron (VKCNN_FUSE_SILU=0: not).
  uint32_t fusedSilus = 0;
  // Squeeze-and-excitation blocks (global average pool, 1x1 convolution + neuron, 1x1
  // convolution + sigmoid or hard sigmoid, multiply) run as the pool and one SqueezeExcitation
  // kernel (VKCNN_FUSE_SQUEEZE_EXCITATION=0: not).
  uint32_t fusedSqueezeExcitations = 0;
  // Batch normalisations and affines (with a ReLU or no neuron) read only by convolutions as
  // their source, applied by each as it reads (ConvolutionDescriptor::sourceActivation;
  // VKCNN_FUSE_SOURCE_ACTIVATION=0: not).
  uint32_t fusedSourceActivations = 0;
};

// A network of kernels connected by named values (the file's top comment says how it runs).
class VKCNN_API Graph {
 public:
  // An empty network on `context`; add inputs, nodes and outputs, then compile() or encode.
  explicit Graph(const Context& context, const GraphOptions& options = {});
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  // ---- building (before compile) ----
  GraphTensor input(const std::string& name, TensorShape shape);
  void output(GraphTensor tensor, const std::string& name);

  // Weights in MPS order (see convolution.h); copied.
  GraphTensor convolution(GraphTensor x, const ConvolutionDescriptor& descriptor,
                          std::vector<float> weights, std::vector<float> bias = {},
                          const Padding& padding = {}, const std::string& name = {});
  // A fully-connected layer: the kernel spans the whole input (descriptor kernel size and input
  // channels must match its shape).
  GraphTensor fullyConnected(GraphTensor x, const ConvolutionDescriptor& descriptor,
                             std::vector<float> weights, std::vector<float> bias = {},
                             const std::string& name = {});
  // Folded into the convolution before it when possible, else a per-channel scale and shift.
  GraphTensor batchNormalization(GraphTensor x, const BatchNormalizationParameters& parameters,
                                 const std::string& name = {});
  // y = scale[c] * x + shift[c]: one value each (any layout) or one per feature channel (a
  // per-channel constant Add/Sub/Mul/Div). Folded like a batch normalisation; else a 1x1
  // depthwise convolution, or a linear neuron for a scalar.
  GraphTensor affine(GraphTensor x, std::vector<float> scale, std::vector<float> shift,
                     const std::string& name = {});
  GraphTensor neuron(GraphTensor x, const NeuronDescriptor& neuron, const std::string& name = {});
  GraphTensor arithmetic(GraphTensor a, GraphTensor b, ArithmeticOperation operation,
                         const std::string& name = {});
  GraphTensor concat(const std::vector<GraphTensor>& inputs, const std::string& name = {});
  GraphTensor identity(GraphTensor x, const std::string& name = {});
  // A kernel the caller made, with one source: its destination size and channels come from the
  // kernel's destinationWidth/Height/FeatureChannels, the channels for its source channel window
  // (sourceFeatureChannelOffset / MaxCount: a channel split or slice). The Graph's own Image
  // kernels (below) hold plain parameters until compile() instead.
  GraphTensor unary(GraphTensor x, std::shared_ptr<UnaryKernel> kernel,
                    const std::string& name = {});

  // Image kernels the Graph makes when it compiles, from plain parameters (the descriptors of
  // vkcnn/pooling.h, padding.h, resize.h, rearrange.h, normalization.h, convolution_transpose.h):
  // the node holds the data, lower() the one kernel. Same semantics as the kernel of that name.
  // Windowed max or average pooling (PoolingMax, PoolingAverage).
  GraphTensor pooling(GraphTensor x, bool maximum, const PoolingDescriptor& descriptor,
                      const std::string& name = {});
  // The max or mean of each channel's plane, 1x1xC (GlobalPoolingMax, GlobalPoolingAverage).
  GraphTensor globalPooling(GraphTensor x, bool maximum, const std::string& name = {});
  GraphTensor padImage(GraphTensor x, const PadDescriptor& descriptor,
                       const std::string& name = {});
  GraphTensor resizeImage(GraphTensor x, const ResizeDescriptor& descriptor,
                          const std::string& name = {});
  // A copy of a window of x: channels [channel, channel + channels) (kWholeExtent: to the last)
  // of the width x height rectangle at (x, y).
  GraphTensor window(GraphTensor x, const ImageWindow& window, const std::string& name = {});
  GraphTensor channelShuffle(GraphTensor x, uint32_t groups, const std::string& name = {});
  GraphTensor depthToSpace(GraphTensor x, uint32_t blockSize, DepthToSpace::Mode mode,
                           const std::string& name = {});
  GraphTensor spaceToDepth(GraphTensor x, uint32_t blockSize, const std::string& name = {});
  GraphTensor instanceNormalization(GraphTensor x, const InstanceNormalizationDescriptor& d,
                                    const std::string& name = {});
  GraphTensor localResponseNormalization(GraphTensor x,
                                         const LocalResponseNormalizationDescriptor& d,
                                         const std::string& name = {});
  // Softmax or log-softmax over the channels of each pixel (Softmax, LogSoftmax).
  GraphTensor channelSoftmax(GraphTensor x, bool logarithm, const std::string& name = {});
  // weights and bias as ConvolutionTranspose takes them (convolutionTransposeWeightsFromOnnx).
  GraphTensor convolutionTranspose(GraphTensor x, const ConvolutionTransposeDescriptor& d,
                                   std::vector<float> weights, std::vector<float> bias = {},
                                   const std::string& name = {});

  // ---- Tensor values ----
  // Values that leave the image layout live as Tensors (row-major, the batch included). An Image
  // given to these is converted once to a Tensor [N, C, H, W]; a Tensor given to the Image nodes
  // above must be [N, C, H, W] with N = GraphOptions::numberOfImages and is converted back. Both
  // conversions are counted in GraphStatistics::conversions; Graph outputs are Images.
  // A constant Tensor (weights of a broadcast operand, a mask); copied.
  GraphTensor constant(std::vector<uint32_t> shape, std::vector<float> values,
                       const std::string& name = {});
  // The same elements in row-major order under another shape: a view, no kernel.
  GraphTensor reshape(GraphTensor x, std::vector<uint32_t> shape, const std::string& name = {});
  // ONNX Transpose: output axis i is input axis perm[i].
  GraphTensor transpose(GraphTensor x, std::vector<uint32_t> perm, const std::string& name = {});
  GraphTensor tensorUnary(GraphTensor x, TensorUnaryOperation operation,
                          const std::string& name = {});
  GraphTensor tensorNeuron(GraphTensor x, const NeuronDescriptor& neuron,
                           const std::string& name = {});
  // Numpy broadcasting at any rank.
  GraphTensor tensorBinary(GraphTensor a, GraphTensor b, TensorBinaryOperation operation,
                           const std::string& name = {});
  GraphTensor where(GraphTensor condition, GraphTensor x, GraphTensor y,
                    const std::string& name = {});
  // ONNX Slice: per listed axis, elements start, start + step, ... before end (negative indices
  // count from the end and are clamped; a negative step walks backwards).
  GraphTensor slice(GraphTensor x, std::vector<int32_t> axes, std::vector<int64_t> starts,
                    std::vector<int64_t> ends, std::vector<int64_t> steps,
                    const std::string& name = {});
  // Concatenation along any axis (inputs of one rank, equal elsewhere).
  GraphTensor concat(const std::vector<GraphTensor>& inputs, uint32_t axis,
                     const std::string& name = {});
  // Softmax or log-softmax along `axis` (negative: from the end).
  GraphTensor softmax(GraphTensor x, int32_t axis, bool logarithm = false,
                      const std::string& name = {});
  // ONNX Reduce* over `axes` (empty: every axis), kept as extent 1 or dropped.
  GraphTensor reduction(GraphTensor x, TensorReductionOperation operation,
                        std::vector<int32_t> axes, bool keepDimensions = true,
                        const std::string& name = {});
  // ONNX ArgMax / ArgMin along `axis`, the indices as floats.
  GraphTensor argReduction(GraphTensor x, bool maximum, int32_t axis, bool keepDimensions = true,
                           bool selectLastIndex = false, const std::string& name = {});
  // numpy matmul: batch axes broadcast, rank-1 operands as a row / a column.
  GraphTensor matMul(GraphTensor a, GraphTensor b, const std::string& name = {});
  // ONNX Gemm; `c` may be invalid (no bias) or broadcast to [M, N].
  GraphTensor gemm(GraphTensor a, GraphTensor b, GraphTensor c, const GemmDescriptor& descriptor,
                   const std::string& name = {});
  // ONNX LayerNormalization over the axes from `axis` on; `bias` may be invalid.
  GraphTensor layerNormalization(GraphTensor x, GraphTensor scale, GraphTensor bias, int32_t axis,
                                 float epsilon, const std::string& name = {});
  // ONNX Resize on any axes (TensorResize).
  GraphTensor resize(GraphTensor x, const TensorResizeDescriptor& descriptor,
                     const std::string& name = {});
  // ONNX Gather along `axis` (indices: integers held as floats).
  GraphTensor gather(GraphTensor data, GraphTensor indices, int32_t axis,
                     const std::string& name = {});
  // ONNX Pad of every axis: pads = [begins..., ends...] (negative: crop).
  GraphTensor pad(GraphTensor x, TensorPaddingMode mode, std::vector<int64_t> pads, float value = 0,
                  const std::string& name = {});
  // The value as a Tensor / as an Image (the conversions the nodes above insert; idempotent).
  GraphTensor toTensor(GraphTensor value);
  GraphTensor toImage(GraphTensor value);
  bool isTensor(GraphTensor value) const;
  // A Tensor value's shape (empty for an Image).
  std::vector<uint32_t> tensorShape(GraphTensor value) const;

  // An Image value's shape.
  TensorShape shape(GraphTensor tensor) const;
  const std::vector<std::string>& inputNames() const;
  const std::vector<std::string>& outputNames() const;

  // The part of compile() that needs no device: the rewrites, concatenation storage and the
  // schedule. Afterwards statistics() and describe() show the graph as it will run, and no node
  // can be added. compile() calls it; calling it first is optional (idempotent).
  void plan();
  // Rewrites the network (the fusions above; plan()) and makes its kernels (weights packed and
  // uploaded); the first encode calls it if it was not called.
  void compile();
  // Encodes the network. `inputs` in input order, each with the input's shape and the same
  // numberOfImages; returns the outputs (new Images) in output order.
  std::vector<Image> encode(CommandBuffer& commandBuffer, const std::vector<Image>& inputs);
  // The same into the caller's output Images (shape and batch checked).
  void encode(CommandBuffer& commandBuffer, const std::vector<Image>& inputs,
              const std::vector<Image>& outputs);
  // A batch larger than maxNumberOfImages() split into chunks: inputs[c] and outputs[c] are chunk
  // c's Images, as for encode(). The whole batch is encoded level by level, so each level's
  // kernels share one barrier. Intermediate images are split along the batch only where their
  // own channels need it (the array-layer limit), not by the chunks: a kernel runs once per
  // range of images in which none of its images changes piece.
  void encodeBatch(CommandBuffer& commandBuffer, const std::vector<std::vector<Image>>& inputs,
                   const std::vector<std::vector<Image>>& outputs);

  // Nodes, kernels and what compile() fused or removed.
  GraphStatistics statistics() const;
  // The largest batch one encode can take on this device: each input's and output's Image must
  // fit in maxImageArrayLayers ((featureChannels+3)/4 layers per image); in a graph with Tensor
  // values, every image's. Larger batches are encoded in chunks, each with Images of its own (an
  // ImageBatch, as in MPS).
  uint32_t maxNumberOfImages() const;
  // Bytes all intermediate tensors would take at this batch size if none shared memory (what the
  // temporary pool's peak is measured against). After plan().
  uint64_t intermediateTensorBytes(uint32_t numberOfImages) const;
  // One line per kernel after plan(), for profiles and debugging.
  std::vector<std::string> describe() const;

 private:
  friend struct detail::GraphAccess;
  std::unique_ptr<detail::GraphState> state_;
};

}  // namespace vkcnn
