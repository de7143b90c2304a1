// Graph: a network as kernels connected by named tensors (MPSNNGraph). Build it once, encode it
// many times. Every intermediate result is a TemporaryImage whose readCount is its number of
// consumers, so memory is recycled while the network runs.
//
// compile() (called by the first encode if not before) rewrites the network first; it is the one
// place where nodes are fused (the ONNX importer emits plain nodes):
//   - identity and dropout nodes disappear;
//   - batch normalisations and affines right after a convolution or fully-connected layer are
//     folded into its weights and bias; an affine right after another affine or a batch
//     normalisation composes with it; a scalar affine left alone is a linear neuron;
//   - a neuron right after a convolution, fully-connected or element-wise node is fused into it;
//   - a neuron right after a batch normalisation or affine that is not folded is fused into it;
//   - an addition whose input is a convolution's only use is done by that convolution;
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
#include "vkcnn/export.h"
#include "vkcnn/image.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"

namespace vkcnn {

namespace detail {
struct GraphState;
}

// A value flowing between nodes; `id` indexes the graph's tensors.
struct GraphTensor {
  uint32_t id = UINT32_MAX;
  bool valid() const { return id != UINT32_MAX; }
};

// Shape of one image of a tensor (the batch size comes from the inputs at encode time).
struct TensorShape {
  uint32_t width = 1, height = 1, featureChannels = 1;
  bool operator==(const TensorShape&) const = default;
};

struct GraphOptions {
  ChannelFormat channelFormat = ChannelFormat::float16;  // of every intermediate and output
  bool optimize = true;                                  // the rewrites listed above
  std::string label = "graph";
};

struct GraphStatistics {
  uint32_t nodes = 0;    // as built
  uint32_t kernels = 0;  // after compile(): kernels encoded per run
  uint32_t fusedNeurons = 0, foldedBatchNormalizations = 0, removedConcatenations = 0,
           removedIdentities = 0, removedUnused = 0;
  // Affines folded into a convolution or composed with the affine or batch normalisation before.
  uint32_t foldedAffines = 0;
  // Element-wise adds folded into the convolution producing one of their inputs, which adds the
  // other (Convolution::encodeWithResidual) and applies the add's neuron.
  uint32_t fusedResiduals = 0;
};

class VKCNN_API Graph {
 public:
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
  // Any other kernel with one source (pooling, softmax, resize, ...): its destination size and
  // channels come from the kernel's destinationWidth/Height/FeatureChannels, the channels for its
  // source channel window (sourceFeatureChannelOffset / MaxCount: a channel split or slice).
  GraphTensor unary(GraphTensor x, std::shared_ptr<UnaryKernel> kernel,
                    const std::string& name = {});

  TensorShape shape(GraphTensor tensor) const;
  const std::vector<std::string>& inputNames() const;
  const std::vector<std::string>& outputNames() const;

  void compile();
  // Encodes the network. `inputs` in input order, each with the input's shape and the same
  // numberOfImages; returns the outputs (new Images) in output order.
  std::vector<Image> encode(CommandBuffer& commandBuffer, const std::vector<Image>& inputs);
  // The same into the caller's output Images (shape and batch checked).
  void encode(CommandBuffer& commandBuffer, const std::vector<Image>& inputs,
              const std::vector<Image>& outputs);
  // A batch larger than maxNumberOfImages() split into chunks: inputs[c] and outputs[c] are chunk
  // c's Images, as for encode(). The chunks are encoded level by level together, so each level's
  // kernels of all chunks share one barrier; their temporaries are alive at the same time.
  void encodeBatch(CommandBuffer& commandBuffer, const std::vector<std::vector<Image>>& inputs,
                   const std::vector<std::vector<Image>>& outputs);

  GraphStatistics statistics() const;
  // The largest batch one encode can take on this device: every tensor's Image must fit in
  // maxImageArrayLayers ((featureChannels+3)/4 layers per image). Larger batches are encoded in
  // chunks, each with Images of its own (an ImageBatch, as in MPS).
  uint32_t maxNumberOfImages() const;
  // Bytes all intermediate tensors would take at this batch size if none shared memory (what the
  // temporary pool's peak is measured against). After compile().
  uint64_t intermediateTensorBytes(uint32_t numberOfImages) const;
  // One line per kernel after compile(), for profiles and debugging.
  std::vector<std::string> describe() const;

 private:
  std::unique_ptr<detail::GraphState> state_;
};

}  // namespace vkcnn
