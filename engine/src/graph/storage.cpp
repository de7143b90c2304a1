// Storage: concatenations become windows of one image per family that producers write into in
// place (planConcatenations), and the sizes of the images a Graph writes (maxNumberOfImages,
// intermediateTensorBytes). Decides where values live; allocates nothing.
#include <algorithm>

#include "graph/state.h"
#include "vkcnn/context.h"

namespace vkcnn::detail {

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

}  // namespace vkcnn::detail

namespace vkcnn {

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

}  // namespace vkcnn
