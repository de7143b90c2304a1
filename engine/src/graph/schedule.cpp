// schedule(): the live nodes in levels by list scheduling, per root image the number of kernels
// reading it (its readCount as a temporary), and the kernels a run encodes. Part of plan(): it
// reads only the nodes' kinds, not their kernels, so it runs before lower().
#include <algorithm>

#include "graph/state.h"

namespace vkcnn::detail {

// Whether lower() makes the node a Tensor kernel (a conversion included): the nodes whose output
// is a Tensor, but constants, and the conversions back to an Image.
bool GraphState::lowersToTensorKernel(const GraphNode& n) const {
  return n.as<ToImageNode>() || (tensors[n.output].isTensor() && !n.as<ConstantNode>());
}

// The kernels a live node encodes per run: a copy per concatenated input it copies, one per
// input of a Tensor concatenation, none for a constant, else one.
uint32_t GraphState::kernelsOf(const GraphNode& n) const {
  if (const auto* concat = n.as<ConcatNode>()) return uint32_t(concat->copies.size());
  if (n.as<TensorConcatNode>()) return uint32_t(n.inputs.size());
  return n.as<ConstantNode>() ? 0 : 1;
}

// Levels by list scheduling: a node goes one level after the last level that writes what it
// reads, so independent kernels (inception branches, a residual block's shortcut) share a
// barrier. Build order is topological except for a fused residual, whose writer may come after
// the convolution that reads it.
void GraphState::schedule() {
  // The nodes that write each tensor's region: its producer, or for a concatenation, whoever
  // writes each of its slots (the producer in place, or the member that copies it).
  std::vector<std::vector<uint32_t>> slotWriters(nodes.size());
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    const auto* concat = n.as<ConcatNode>();
    if (!concat || tensors[n.output].family != i) continue;
    slotWriters[i].assign(n.inputs.size(), kNone);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const GraphTensorInfo& in = tensors[n.inputs[k]];
      if (in.storedIn == n.output && in.channelOffset == concat->inputOffsets[k])
        slotWriters[i][k] = in.producer;
    }
  }
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    if (n.removed || !n.as<ConcatNode>()) continue;
    for (const ConcatNode::Copy& c : n.as<ConcatNode>()->copies)
      slotWriters[tensors[n.output].family][c.slot] = i;
  }
  auto writers = [&](uint32_t t, std::vector<uint32_t>& out) {
    const GraphTensorInfo& info = tensors[t];
    if (info.family != kNone) {
      for (uint32_t k = info.firstSlot; k < info.firstSlot + info.slotCount; ++k)
        out.push_back(slotWriters[info.family][k]);
    } else if (info.producer != kNone) {
      out.push_back(info.producer);
    }
  };
  std::vector<std::vector<uint32_t>> dependencies(nodes.size());
  rootReads.assign(tensors.size(), 0);
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    if (n.removed) continue;
    statistics.kernels += kernelsOf(n);
    if (n.as<ToTensorNode>() || n.as<ToImageNode>()) statistics.conversions++;
    std::vector<uint32_t> reads;
    if (const auto* concat = n.as<ConcatNode>()) {
      // One copy kernel per input: each reads it once.
      for (const ConcatNode::Copy& c : concat->copies) {
        reads.push_back(c.tensor);
        rootReads[rootOf(c.tensor)]++;
      }
    } else if (lowersToTensorKernel(n)) {
      // Tensor kernels read each source once, the same one twice too.
      reads = n.inputs;
      for (uint32_t t : reads) rootReads[rootOf(t)]++;
    } else {
      reads = n.inputs;
      // A kernel reading one image through both sources reads it once.
      std::vector<uint32_t> roots;
      for (uint32_t t : reads) roots.push_back(rootOf(t));
      std::sort(roots.begin(), roots.end());
      roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
      for (uint32_t r : roots) rootReads[r]++;
    }
    for (uint32_t t : reads) writers(t, dependencies[i]);
    for (uint32_t d : dependencies[i])
      if (d == kNone || d == i || nodes[d].removed)
        throw Error(ErrorCode::misuse,
                    what(n.name) + ": internal error: the scheduler found no writer of an input");
  }
  // Longest paths. Dependencies point backwards in build order except a fused residual's writer,
  // so a few passes settle; more passes than nodes would mean a cycle.
  std::vector<uint32_t> level(nodes.size(), 0);
  for (size_t pass = 0;; ++pass) {
    if (pass > nodes.size())
      throw Error(ErrorCode::misuse,
                  "graph '" + options.label + "': internal error: the scheduler found a cycle");
    bool changed = false;
    for (uint32_t i = 0; i < nodes.size(); ++i)
      for (uint32_t d : dependencies[i])
        if (level[i] < level[d] + 1) {
          level[i] = level[d] + 1;
          changed = true;
        }
    if (!changed) break;
  }
  levels.clear();
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].removed) continue;
    if (levels.size() <= level[i]) levels.resize(level[i] + 1);
    levels[level[i]].push_back(i);
  }
}

}  // namespace vkcnn::detail
