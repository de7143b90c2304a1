// Encoding a compiled Graph: level by level, each level's new images laid out in one barrier,
// each kernel once per segment of the batch plan (plan.h), convolutions and fully-connected layers
// over all their pieces at once, Tensor kernels over the whole batch. The caller's Images are
// checked here, in the caller's terms (chunk, input or output name).
#include <algorithm>
#include <string>
#include <type_traits>
#include <variant>

#include "graph/plan.h"
#include "graph/state.h"
#include "kernels/kernel_encoding.h"
#include "vkcnn/error.h"
#include "vkcnn/tensor_ops.h"
#include "vulkan/context_impl.h"

namespace vkcnn::detail {
namespace {

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
    TensorKernel& kernel = *n.tensorKernel;
    const size_t count = n.inputs.size();
    auto optional = [&](size_t i) { return i < count ? in(i) : Tensor(); };
    std::visit(
        [&](const auto& p) {
          using P = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<P, TensorSoftmaxParameters>)
            static_cast<TensorSoftmax&>(kernel).encode(cb, in(0), out);
          else if constexpr (std::is_same_v<P, TensorReductionParameters>)
            static_cast<TensorReduction&>(kernel).encode(cb, in(0), out);
          else if constexpr (std::is_same_v<P, TensorArgReductionParameters>)
            static_cast<TensorArgReduction&>(kernel).encode(cb, in(0), out);
          else if constexpr (std::is_same_v<P, TensorMatMulParameters>)
            static_cast<TensorMatMul&>(kernel).encode(cb, in(0), in(1), out);
          else if constexpr (std::is_same_v<P, GemmDescriptor>)
            static_cast<TensorGemm&>(kernel).encode(cb, in(0), in(1), optional(2), out);
          else if constexpr (std::is_same_v<P, TensorLayerNormalizationParameters>)
            static_cast<TensorLayerNormalization&>(kernel).encode(cb, in(0), in(1), optional(2),
                                                                  out);
          else if constexpr (std::is_same_v<P, TensorResizeDescriptor>)
            static_cast<TensorResize&>(kernel).encode(cb, in(0), out);
          else if constexpr (std::is_same_v<P, TensorGatherParameters>)
            static_cast<TensorGather&>(kernel).encode(cb, in(0), in(1), out);
          else
            static_cast<TensorPad&>(kernel).encode(cb, in(0), out);
        },
        k->parameters);
  }
}

// Chunk `where`'s Images against the graph's inputs and outputs: counts, shapes, one batch.
void checkChunk(const GraphState& s, const std::string& where, const std::vector<Image>& in,
                const std::vector<Image>& out) {
  if (in.size() != s.inputs.size())
    throw Error(ErrorCode::invalidArgument, where + " takes " + std::to_string(s.inputs.size()) +
                                                " inputs, " + std::to_string(in.size()) + " given");
  if (out.size() != s.outputs.size())
    throw Error(ErrorCode::invalidArgument, where + " has " + std::to_string(s.outputs.size()) +
                                                " outputs, " + std::to_string(out.size()) +
                                                " given");
  const uint32_t batch = in.empty() ? 1 : in[0].numberOfImages();
  auto checkShape = [&](const Image& image, uint32_t t, const std::string& role,
                        const std::string& name) {
    const TensorShape& shape = s.tensors[t].shape;
    if (!image.valid() || image.width() != shape.width || image.height() != shape.height ||
        image.featureChannels() != shape.featureChannels || image.numberOfImages() != batch)
      throw Error(ErrorCode::invalidArgument,
                  where + " " + role + " '" + name + "' must be " + std::to_string(shape.width) +
                      "x" + std::to_string(shape.height) + "x" +
                      std::to_string(shape.featureChannels) + " with " + std::to_string(batch) +
                      " images, got " +
                      (image.valid()
                           ? std::to_string(image.width()) + "x" + std::to_string(image.height()) +
                                 "x" + std::to_string(image.featureChannels()) + " with " +
                                 std::to_string(image.numberOfImages()) + " images"
                           : std::string("an empty image")));
  };
  for (size_t i = 0; i < in.size(); ++i) checkShape(in[i], s.inputs[i], "input", s.inputNames[i]);
  for (size_t i = 0; i < out.size(); ++i)
    checkShape(out[i], s.outputs[i], "output", s.outputNames[i]);
}

// The Images of one encode, laid out as the plan says, and the kernels recorded into them.
class BatchEncoder {
 public:
  BatchEncoder(GraphState& s, CommandBuffer& commandBuffer, const BatchPlan& plan,
               const std::vector<std::vector<Image>>& inputs,
               const std::vector<std::vector<Image>>& outputs)
      : s(s),
        commandBuffer(commandBuffer),
        plan(plan),
        pieces(s.tensors.size()),
        whole(s.tensors.size()),
        values(s.tensors.size()),
        dataType(s.options.channelFormat == ChannelFormat::float16 ? TensorDataType::float16
                                                                   : TensorDataType::float32) {
    // The caller's Images, as the plan gave them (the first Image of a tensor listed twice).
    for (size_t chunk = 0; chunk < inputs.size(); ++chunk) {
      const uint32_t first = plan.chunkFirst[chunk];
      const uint32_t batch = inputs[chunk].empty() ? 1 : inputs[chunk][0].numberOfImages();
      auto give = [&](uint32_t t, const Image& image) {
        if (pieces[t].size() > chunk) return;
        pieces[t].push_back({image, first, batch});
      };
      for (size_t i = 0; i < inputs[chunk].size(); ++i) give(s.inputs[i], inputs[chunk][i]);
      for (size_t i = 0; i < outputs[chunk].size(); ++i) give(s.outputs[i], outputs[chunk][i]);
    }
  }

  // Level by level: a level's kernels over the whole batch share one barrier.
  void encodeLevel(const std::vector<uint32_t>& level) {
    prepareDestinations(*commandBuffer.impl(), allocate(level));
    for (uint32_t i : level) encodeNode(s.nodes[i]);
  }

  // Outputs that are graph inputs, or listed twice, are copies.
  void copyOutputs(const std::vector<std::vector<Image>>& outputs) {
    for (size_t chunk = 0; chunk < outputs.size(); ++chunk)
      for (size_t i = 0; i < outputs[chunk].size(); ++i) {
        const Image& destination = outputs[chunk][i];
        const Image produced =
            view(s.outputs[i], plan.chunkFirst[chunk], destination.numberOfImages());
        if (produced.storage() == destination.storage()) continue;
        Neuron copy(s.context, NeuronDescriptor{});
        copy.label = s.outputNames[i];
        copy.encode(commandBuffer, produced, destination);
      }
  }

 private:
  struct Piece {
    Image image;
    uint32_t first = 0, count = 0;
  };

  // Tensor t's images [first, first + count): a view of the piece holding them.
  Image view(uint32_t t, uint32_t first, uint32_t count) const {
    uint32_t channel = 0;
    const uint32_t home = plan.homeOf(t, &channel);
    const Piece& piece = pieces[home][plan.pieceOf(home, first)];
    Image image = piece.image;
    const uint32_t channels = s.tensors[t].shape.featureChannels;
    if (channel != 0 || channels != image.featureChannels())
      image = image.subImage({channel, channels});
    if (first != piece.first || count != piece.count)
      image = image.batchRepresentation({first - piece.first, count});
    return image;
  }

  // The level's new images, to be laid out in one barrier; memory the level's reads give back
  // goes to the next level, so no kernel of this one has to wait for another.
  std::vector<Image> allocate(const std::vector<uint32_t>& level) {
    std::vector<Image> fresh;
    for (uint32_t i : level) {
      const uint32_t root = s.rootOf(s.nodes[i].output);
      if (const auto* constant = s.nodes[i].as<ConstantNode>()) {
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
      if (plan.given[root] || !pieces[root].empty()) continue;
      const TensorShape& shape = s.tensors[root].shape;
      const std::vector<uint32_t>& starts = plan.starts[root];
      for (uint32_t k = 0; k < starts.size(); ++k) {
        const uint32_t count = plan.pieceCount(root, k);
        ImageDescriptor d{shape.width, shape.height, shape.featureChannels, count,
                          s.options.channelFormat};
        d.label = s.tensors[root].name;
        if (starts.size() > 1)
          d.label += " [images " + std::to_string(starts[k]) + "+" + std::to_string(count) + "]";
        TemporaryImage temporary(commandBuffer, d);
        temporary.setReadCount(std::max(plan.pieceReads[root][k], 1u));
        pieces[root].push_back({temporary, starts[k], count});
        fresh.push_back(temporary);
      }
    }
    return fresh;
  }

  void encodeNode(const GraphNode& n) {
    if (n.tensorKernel || n.as<ConstantNode>()) {
      // Tensor graphs hold every image in one piece; their conversions take it through these.
      auto wholeView = [this](std::vector<Image>& images, uint32_t t) -> const Image& {
        if (!images[t].valid()) images[t] = view(t, 0, plan.total);
        return images[t];
      };
      auto tensorView = [this](uint32_t t) -> const Tensor& {
        if (values[t].valid()) return values[t];
        const std::vector<uint32_t>& shape = s.tensors[t].tensorShape;
        values[t] = values[s.rootOf(t)].reshape(std::vector<int64_t>(shape.begin(), shape.end()));
        return values[t];
      };
      encodeTensorNode(commandBuffer, n, whole, values, wholeView, tensorView);
      return;
    }
    const std::vector<uint32_t> bounds = plan.segmentsOf(n);
    if (encodeAllPieces(n, bounds)) return;
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

  // A convolution or fully-connected layer encoded over all its segments at once; false for any
  // other node.
  bool encodeAllPieces(const GraphNode& n, const std::vector<uint32_t>& bounds) {
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
      return true;
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
      return true;
    }
    return false;
  }

  GraphState& s;
  CommandBuffer& commandBuffer;
  const BatchPlan& plan;
  std::vector<std::vector<Piece>> pieces;  // per root tensor
  std::vector<Image> whole;                // Tensor graphs: each image over the whole batch
  std::vector<Tensor> values;
  TensorDataType dataType;
};

}  // namespace
}  // namespace vkcnn::detail

namespace vkcnn {

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
  std::vector<uint32_t> chunkImages;
  uint32_t total = 0;
  for (size_t chunk = 0; chunk < inputs.size(); ++chunk) {
    const std::string where = inputs.size() > 1 ? what + " chunk " + std::to_string(chunk) : what;
    detail::checkChunk(s, where, inputs[chunk], outputs[chunk]);
    chunkImages.push_back(inputs[chunk].empty() ? 1 : inputs[chunk][0].numberOfImages());
    total += chunkImages.back();
  }
  if (s.hasTensors()) {
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
  const detail::BatchPlan plan =
      detail::planBatch(s, chunkImages, s.context.capabilities().maxImageArrayLayers);
  detail::BatchEncoder encoder(s, commandBuffer, plan, inputs, outputs);
  for (const std::vector<uint32_t>& level : s.levels) encoder.encodeLevel(level);
  encoder.copyOutputs(outputs);
}

}  // namespace vkcnn
