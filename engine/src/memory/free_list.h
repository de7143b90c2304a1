// The holes of one memory block, first fit: the shared blocks of DeviceMemoryAllocator and the
// blocks of a TemporaryPool place ranges the same way. Holes are kept coalesced, so a range given
// back next to a hole merges with it and large holes reappear. Header-only and free of Vulkan, so
// that tests/test_memory.cpp checks it on its own. Not thread-safe: its owner holds the lock.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

namespace vkcnn::detail {

class FreeList {
 public:
  FreeList() = default;  // no hole (a Block{} starts empty)
  // One hole of `size` bytes at offset 0.
  explicit FreeList(uint64_t size) {
    if (size > 0) holes_[0] = size;
  }

  // The lowest offset, a multiple of `alignment` (> 0), of `size` bytes inside one hole; the
  // bytes are no longer free. nullopt when no hole has room.
  std::optional<uint64_t> take(uint64_t size, uint64_t alignment) {
    for (auto it = holes_.begin(); it != holes_.end(); ++it) {
      const uint64_t holeStart = it->first, end = it->first + it->second;
      const uint64_t start = (holeStart + alignment - 1) / alignment * alignment;
      if (start + size > end) continue;
      holes_.erase(it);
      if (start > holeStart) holes_[holeStart] = start - holeStart;
      if (start + size < end) holes_[start + size] = end - (start + size);
      return start;
    }
    return std::nullopt;
  }

  // Bytes [offset, offset + size) from take() are free again.
  void give(uint64_t offset, uint64_t size) {
    auto it = holes_.emplace(offset, size).first;
    auto next = std::next(it);
    if (next != holes_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      holes_.erase(next);
    }
    if (it != holes_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        holes_.erase(it);
      }
    }
  }

  // offset -> size, ascending and coalesced (no two holes touch).
  const std::map<uint64_t, uint64_t>& holes() const { return holes_; }

 private:
  std::map<uint64_t, uint64_t> holes_;
};

}  // namespace vkcnn::detail
