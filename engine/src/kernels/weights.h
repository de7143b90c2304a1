// Weight files: raw little-endian float32 without a header (the MPSCNN samples' .dat files),
// memory-mapped so a large layer is not copied twice on its way to the device; and the threads
// that large layers' weights are reordered on (the kernels and the ONNX importer).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "platform/platform.h"
#include "vulkan/overrides.h"

namespace vkcnn::detail {

class MappedFloatFile {
 public:
  // Maps `path`, which must hold exactly `expectedCount` float32 values; otherwise Error(io)
  // naming `what`, the file, and the expected and actual sizes in bytes.
  MappedFloatFile(const std::string& path, uint64_t expectedCount, const std::string& what);
  ~MappedFloatFile();
  MappedFloatFile(const MappedFloatFile&) = delete;
  MappedFloatFile& operator=(const MappedFloatFile&) = delete;

  std::span<const float> values() const { return values_; }

 private:
  platform::MappedFile file_;
  std::vector<float> swapped_;  // big-endian hosts only
  std::span<const float> values_;
};

// Runs body(begin, end) over [0, count) split into contiguous ranges (multiples of `grain`) on up
// to hardware_concurrency threads, the calling one among them: a large layer's weights are packed
// in parallel even when it is the last kernel a Graph builds. VKCNN_LOAD_THREADS=N caps the
// threads; below `minimum` items per thread, fewer threads (1: the calling thread alone). The
// body must not throw; without threads to be had, the calling thread does the rest.
inline void parallelRanges(size_t count, size_t grain, size_t minimum,
                           const std::function<void(size_t, size_t)>& body) {
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (const uint32_t cap = processOverrides().loadThreads) threads = cap;
  threads = std::max<size_t>(1, std::min(threads, count / std::max<size_t>(1, minimum)));
  grain = std::max<size_t>(1, grain);
  const size_t units = (count + grain - 1) / grain;
  threads = std::min(threads, units);
  if (threads <= 1) {
    if (count) body(0, count);
    return;
  }
  auto range = [&](size_t t) {
    const size_t begin = std::min(count, units * t / threads * grain);
    const size_t end = std::min(count, units * (t + 1) / threads * grain);
    if (begin < end) body(begin, end);
  };
  std::vector<std::thread> workers;
  size_t started = 1;
  try {
    for (; started < threads; ++started)
      workers.emplace_back([&range, started] {
        platform::setThreadName("vkcnn-pack");
        range(started);
      });
  } catch (const std::system_error&) {
    // No more threads to be had: the calling thread takes the ranges not started.
  }
  range(0);
  for (size_t t = started; t < threads; ++t) range(t);
  for (std::thread& w : workers) w.join();
}

}  // namespace vkcnn::detail
