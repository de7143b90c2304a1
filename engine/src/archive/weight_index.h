// The weight index section's record (written by writer.cpp, read by reader.cpp): a list with one
// record per weight. Keys are the file's: never renumber one, only add
// (docs/model-format.md#weights).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>

#include "archive/archive.h"
#include "archive/record.h"

namespace vkcnn::archive::weight_index {

inline constexpr FieldKey kWeights{1, "weight"};

inline constexpr FieldKey kName{1, "name"};
inline constexpr FieldKey kType{2, "type"};
inline constexpr FieldKey kLayout{3, "layout"};
inline constexpr FieldKey kDims{4, "dims"};
inline constexpr FieldKey kOffset{5, "offset"};  // from the start of the weights section
inline constexpr FieldKey kSize{6, "size"};

// The bytes of a dense weight of `dims`: nothing for a negative dimension, an unknown type or a
// size past 2^64.
inline std::optional<uint64_t> denseSize(WeightType type, std::span<const int64_t> dims) {
  uint64_t size = elementSize(type);
  if (!size) return std::nullopt;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d && size > std::numeric_limits<uint64_t>::max() / uint64_t(d)) return std::nullopt;
    size *= uint64_t(d);
  }
  return size;
}

}  // namespace vkcnn::archive::weight_index
