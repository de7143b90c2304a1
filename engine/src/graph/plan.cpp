// planBatch(): the batch plan of plan.h, from the planned GraphState and the chunks' sizes.
#include "graph/plan.h"

#include <algorithm>

namespace vkcnn::detail {

uint32_t BatchPlan::homeOf(uint32_t t, uint32_t* channel) const {
  if (given[t]) {
    *channel = 0;
    return t;
  }
  return graph->rootOf(t, channel);
}

uint32_t BatchPlan::pieceOf(uint32_t root, uint32_t first) const {
  const std::vector<uint32_t>& st = starts[root];
  return uint32_t(std::upper_bound(st.begin(), st.end(), first) - st.begin() - 1);
}

uint32_t BatchPlan::pieceCount(uint32_t root, uint32_t k) const {
  return (k + 1 < starts[root].size() ? starts[root][k + 1] : total) - starts[root][k];
}

std::vector<uint32_t> BatchPlan::segmentsOf(const GraphNode& n) const {
  std::vector<uint32_t> bounds{total};
  uint32_t channel = 0;
  auto add = [&](uint32_t root) {
    bounds.insert(bounds.end(), starts[root].begin(), starts[root].end());
  };
  add(graph->rootOf(n.output));
  for (uint32_t t : n.inputs) add(homeOf(t, &channel));
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  return bounds;
}

namespace {

// The pieces of the images kernels write. Equal pieces where a divisor of the batch comes
// close to the limit, so the pieces of neighbouring values line up.
void splitProducedImages(const GraphState& s, uint32_t layers, BatchPlan& p) {
  const uint32_t total = p.total;
  for (uint32_t root : s.producedImages()) {
    if (p.given[root]) continue;
    const uint32_t perImage = (s.tensors[root].shape.featureChannels + 3) / 4;
    // Tensor values' conversions take the whole batch; an image too large for the device is
    // reported when its temporary is made.
    const uint32_t most = p.tensorValues ? total : std::max(1u, layers / perImage);
    uint32_t size = std::min(most, total);
    if (size < total) {
      uint32_t divisor = size;
      while (total % divisor) --divisor;
      if (2 * divisor > size) size = divisor;
    }
    for (uint32_t first = 0; first < total; first += size) p.starts[root].push_back(first);
  }
}

// Reads per piece, counted as the kernels consume them: a copy per concatenated input, any
// other kernel once per distinct image it reads.
void countPieceReads(const GraphState& s, BatchPlan& p) {
  p.pieceReads.assign(s.tensors.size(), {});
  for (uint32_t root = 0; root < s.tensors.size(); ++root)
    p.pieceReads[root].assign(p.starts[root].size(), 0);
  for (const GraphNode& n : s.nodes) {
    if (n.removed || n.as<ConstantNode>()) continue;
    if (p.tensorValues) break;  // one piece each: the scheduler's counts (below)
    const std::vector<uint32_t> bounds = p.segmentsOf(n);
    for (size_t k = 0; k + 1 < bounds.size(); ++k) {
      std::vector<uint32_t> homes;
      uint32_t channel = 0;
      if (const auto* concat = n.as<ConcatNode>()) {
        for (const ConcatNode::Copy& c : concat->copies)
          homes.push_back(p.homeOf(c.tensor, &channel));
      } else {
        for (uint32_t t : n.inputs) homes.push_back(p.homeOf(t, &channel));
        std::sort(homes.begin(), homes.end());
        homes.erase(std::unique(homes.begin(), homes.end()), homes.end());
      }
      for (uint32_t h : homes) p.pieceReads[h][p.pieceOf(h, bounds[k])]++;
    }
  }
  if (p.tensorValues)
    for (uint32_t root = 0; root < s.tensors.size(); ++root)
      if (!p.pieceReads[root].empty()) p.pieceReads[root][0] = s.rootReads[root];
}

}  // namespace

BatchPlan planBatch(const GraphState& s, const std::vector<uint32_t>& chunkImages,
                    uint32_t maxImageArrayLayers) {
  BatchPlan p;
  p.graph = &s;
  p.starts.resize(s.tensors.size());
  p.given.assign(s.tensors.size(), 0);
  p.chunkFirst.resize(chunkImages.size());
  for (size_t chunk = 0; chunk < chunkImages.size(); ++chunk) {
    p.chunkFirst[chunk] = p.total;
    // An output tensor may be listed twice, or be an input: the first Image holds it and the
    // others are copies (encode).
    auto give = [&](uint32_t t) {
      if (p.starts[t].size() > chunk) return;
      p.given[t] = 1;
      p.starts[t].push_back(p.total);
    };
    for (uint32_t t : s.inputs) give(t);
    for (uint32_t t : s.outputs) give(t);
    p.total += chunkImages[chunk];
  }
  // Tensor values: one chunk of GraphOptions::numberOfImages images.
  p.tensorValues = s.hasTensors();
  splitProducedImages(s, maxImageArrayLayers, p);
  countPieceReads(s, p);
  return p;
}

}  // namespace vkcnn::detail
