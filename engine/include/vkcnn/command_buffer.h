// CommandBuffer: the MTLCommandBuffer analogue kernels encode into. It owns the pool that its
// TemporaryImages draw memory from; that memory goes back to the Context once the work completes.
//
// Threads: a CommandBuffer and its TemporaryImages are used by one thread at a time; other
// threads encode into CommandBuffers of their own on the same Context (see context.h).
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vkcnn/context.h"
#include "vkcnn/export.h"

namespace vkcnn {

namespace detail {
class CommandBufferImpl;
}

// Where a CommandBuffer is in its life.
enum class CommandBufferStatus {
  encoding,   // kernels may be encoded
  committed,  // submitted, not known to be complete
  completed,  // the GPU finished it
  error,      // the submission failed; see Context errors
};

// The status's name: "encoding", "committed", "completed" or "error".
VKCNN_API const char* toString(CommandBufferStatus status);

// The temporary images and tensors of one CommandBuffer: the memory they took and reused.
struct TemporaryPoolStatistics {
  uint64_t bytesAllocated = 0;      // device memory held by the pool (its blocks)
  uint64_t bytesInUse = 0;          // held by temporaries whose readCount is above zero
  uint64_t peakBytesInUse = 0;      // the most bytesInUse has been
  uint32_t temporariesCreated = 0;  // temporaries made in this command buffer
  uint32_t reuses = 0;              // temporaries placed in memory an earlier temporary gave back
};

// Dispatches and barriers recorded so far (benchmarks print these).
struct EncodingStatistics {
  uint32_t dispatches = 0;  // compute dispatches
  uint32_t barriers = 0;    // pipeline barriers between them
};

// How a CommandBuffer records.
struct CommandBufferOptions {
  // Keeps the recording, its temporaries' memory and descriptors after completion so commit() can
  // submit it again without re-recording (the same kernels on the same images).
  bool reusable = false;
  // Writes a GPU timestamp before and after every dispatch (kernelTimings()). Each dispatch then
  // runs alone: dispatches that would run side by side (a batch's pieces) are timed one by one.
  bool profile = false;
  // With profile: timestamps at the barriers only, so the dispatches between two barriers (a
  // barrier level) run side by side as they do unprofiled, and kernelTimings() has one entry per
  // level: what an inference pays for those dispatches together, its barrier included.
  bool profileLevels = false;
};

// GPU time of one dispatch, or of one barrier level (CommandBufferOptions::profileLevels), from
// timestamps.
struct KernelTiming {
  // A level's: its dispatches' labels in order, repeats counted ("kernel 'a' (64x64) x8 + ...").
  std::string label;
  double startMilliseconds = 0;  // from the first timed dispatch's start
  double milliseconds = 0;
  uint32_t dispatches = 1;
};

// Kernels are encoded into it, then it is committed to the Context's queue (MPSCommandBuffer);
// a handle: copies share the recording.
class VKCNN_API CommandBuffer {
 public:
  // A new command buffer in the encoding state; `label` names it in messages and profiles.
  explicit CommandBuffer(const Context& context, const std::string& label = {},
                         const CommandBufferOptions& options = {});
  // Records into a VkCommandBuffer the application owns, in the recording state. The application
  // calls endEncoding() before vkEndCommandBuffer, submits it itself, and calls markCompleted()
  // once that submission has finished (or drops every handle to this CommandBuffer only then).
  static CommandBuffer wrap(const Context& context, VkCommandBuffer commandBuffer,
                            const std::string& label = {});

  // Ends recording and submits to the Context's queue. A reusable command buffer that completed
  // is submitted again as recorded.
  void commit();
  // Blocks until the GPU finished it (a fence; a device lost or a timeout is an Error).
  void waitUntilCompleted();
  CommandBufferStatus status() const;

  // For a wrapped command buffer (wrap() above): the end of vkcnn's recording, and the
  // application's word that its submission has finished.
  void endEncoding();
  void markCompleted();

  // The Vulkan command buffer it records into.
  VkCommandBuffer vkCommandBuffer() const;
  const std::string& label() const;  // as given at construction
  // Its temporaries' memory, and the dispatches and barriers recorded so far.
  TemporaryPoolStatistics temporaryPoolStatistics() const;
  EncodingStatistics encodingStatistics() const;
  // After completion, with CommandBufferOptions::profile: one entry per dispatch, in order (per
  // barrier level with profileLevels).
  std::vector<KernelTiming> kernelTimings() const;
  // After completion: GPU time from the first dispatch's start to the last one's end (needs
  // profile), in milliseconds; 0 without timestamps.
  double gpuMilliseconds() const;
  const Context& context() const;

  // The implementation, for vkcnn's own kernels (not a stable interface).
  const std::shared_ptr<detail::CommandBufferImpl>& impl() const { return impl_; }

 private:
  explicit CommandBuffer(std::shared_ptr<detail::CommandBufferImpl> impl);
  std::shared_ptr<detail::CommandBufferImpl> impl_;
};

}  // namespace vkcnn
