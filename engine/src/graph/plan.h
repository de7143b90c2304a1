// The batch plan of one encode: how the batch is split. Every image value is held in pieces along
// the batch: the caller's chunks for inputs and outputs; for the values kernels write, as many
// images per piece as the array-layer limit allows for that value alone. A kernel runs once per
// segment of the batch in which none of its images changes piece, so narrow layers cover the
// whole batch in one dispatch and only the wide ones (a 2048-channel map takes 512 layers per
// image) are split. Plain numbers from the planned GraphState: no Image is made here.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/state.h"

namespace vkcnn::detail {

struct BatchPlan {
  const GraphState* graph = nullptr;
  uint32_t total = 0;                             // images in all chunks
  bool tensorValues = false;                      // the graph holds Tensor values (one piece each)
  std::vector<uint32_t> chunkFirst;               // each chunk's first image
  std::vector<char> given;                        // per tensor: an input's or output's Images
  std::vector<std::vector<uint32_t>> starts;      // per root tensor: each piece's first image
  std::vector<std::vector<uint32_t>> pieceReads;  // per root and piece: its readers (readCount)

  // Where a tensor's images live: its own (an input or output) or a window of its root's
  // (channels start at multiples of 4).
  uint32_t homeOf(uint32_t t, uint32_t* channel) const;
  // The piece of `root` holding image `first`, and the images in piece k.
  uint32_t pieceOf(uint32_t root, uint32_t first) const;
  uint32_t pieceCount(uint32_t root, uint32_t k) const;
  // The segments a node runs in: every boundary of the pieces it reads or writes; segment k is
  // [bounds[k], bounds[k+1]).
  std::vector<uint32_t> segmentsOf(const GraphNode& n) const;
};

// The plan for chunks of `chunkImages[k]` images each, on a device of `maxImageArrayLayers`.
BatchPlan planBatch(const GraphState& s, const std::vector<uint32_t>& chunkImages,
                    uint32_t maxImageArrayLayers);

}  // namespace vkcnn::detail
