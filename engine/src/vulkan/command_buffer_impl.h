// CommandBuffer state: the VkCommandBuffer, its temporary pool, descriptor pools, what it keeps
// alive until the GPU is done, and the accesses since the last barrier.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "memory/parameter_arena.h"
#include "memory/temporary_pool.h"
#include "memory/workspace.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"

namespace vkcnn::detail {

class ContextImpl;
class ImageStorage;

// A range of array layers of one image that a dispatch reads or writes; or, when `storage` is
// null, the byte range [firstByte, +byteCount) of `buffer` (a storage buffer kernels write; keyed
// by the VkBuffer so two wraps of one application buffer still conflict).
struct LayerAccess {
  const ImageStorage* storage = nullptr;
  uint32_t firstLayer = 0;
  uint32_t layerCount = 0;
  bool write = false;
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t firstByte = 0;
  uint64_t byteCount = 0;
};

// Decides where barriers go: a dispatch needs one only when it touches layers (or buffer bytes)
// that an earlier dispatch since the last barrier wrote, or writes ones it read (RAW, WAW, WAR).
class HazardTracker {
 public:
  bool conflicts(const std::vector<LayerAccess>& next) const;
  void record(const std::vector<LayerAccess>& next);
  void clear() { pending_.clear(); }
  bool empty() const { return pending_.empty(); }

 private:
  std::vector<LayerAccess> pending_;
};

class CommandBufferImpl : public std::enable_shared_from_this<CommandBufferImpl> {
 public:
  CommandBufferImpl(std::shared_ptr<ContextImpl> context, std::string label,
                    VkCommandBuffer wrapped, const CommandBufferOptions& options = {});
  ~CommandBufferImpl();

  // Throws misuse unless kernels may still be encoded.
  void requireEncoding(const std::string& what) const;
  VkDescriptorSet allocateDescriptorSet(VkDescriptorSetLayout layout);
  void keepAlive(std::shared_ptr<const void> object) { keepAlive_.push_back(std::move(object)); }
  // Records one barrier before the next dispatch if `accesses` conflict with earlier ones (or it
  // is the first dispatch), plus the UNDEFINED->GENERAL transitions of newly bound temporaries.
  void barrierBefore(const std::vector<LayerAccess>& accesses,
                     const std::vector<VkImageMemoryBarrier>& transitions, bool aliased);
  // Records one barrier that orders every access recorded so far before everything after it, and
  // lays out `transitions` (fresh temporaries: `aliased` if one reuses memory). Dispatches after it
  // conflict with nothing before it.
  void barrier(const std::vector<VkImageMemoryBarrier>& transitions, bool aliased);

  // A dispatch wrote memory the host reads once the command buffer completed (a shared Buffer):
  // the recording ends with a barrier that makes shader writes visible to the host.
  void publishToHost() { publishToHost_ = true; }

  void commit();
  // Profiling: called by the dispatch recorder around each vkCmdDispatch.
  void timestampBefore(const std::string& label);
  void timestampAfter();
  // Profiling by levels: the timestamp that ends the level recorded so far (before a barrier, and
  // at the end of the recording).
  void closeLevel();
  std::vector<KernelTiming> kernelTimings();
  // Pipelines (shader id, variant, specialization constants) with a dispatch recorded here. The
  // first dispatch of a pipeline in a submission fetches its code into every multiprocessor that
  // runs it, which costs a batch-1 layer about 8 us (bench/NOTES.md, 2026-11-27, sessions 20 and
  // 25): the convolution selector weighs that against what another configuration costs.
  void noteDispatch(uint32_t shader, uint32_t variant, std::span<const int32_t> specialization);
  // `compared`: only the first that many constants need to match (a family of pipelines).
  bool dispatched(uint32_t shader, uint32_t variant, std::span<const int32_t> specialization,
                  size_t compared = SIZE_MAX) const;
  void waitUntilCompleted();
  CommandBufferStatus status();
  void endEncoding();
  void markCompleted();

  std::shared_ptr<ContextImpl> context;
  Context contextHandle;  // what CommandBuffer::context() returns
  std::string label;
  VkCommandBuffer commandBuffer = VK_NULL_HANDLE;
  bool wrapped = false;
  TemporaryPool temporaries;
  ParameterArena parameters;  // tensor kernels' shapes and strides
  Workspace workspace;        // scratch of dispatches (split reductions' partial sums)
  EncodingStatistics statistics;

 private:
  void onCompleted();
  // The barrier at the end of the recording that publishes its writes (see publishToHost).
  void publishWrites();

  CommandBufferStatus status_ = CommandBufferStatus::encoding;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorPool> descriptorPools_;
  std::vector<std::shared_ptr<const void>> keepAlive_;
  HazardTracker hazards_;
  bool firstDispatch_ = true;
  bool publishToHost_ = false;
  CommandBufferOptions options_;
  struct QueryPool {
    VkQueryPool pool = VK_NULL_HANDLE;
    uint32_t used = 0;
  };
  std::vector<QueryPool> queryPools_;
  // Room for `count` more timestamps in the last pool (a new pool if needed).
  QueryPool& queryPoolFor(uint32_t count);
  std::vector<std::string> timedLabels_;
  // Profiling by levels: the open level's dispatch labels, and how many each level closed had.
  std::vector<std::string> levelLabels_;
  std::vector<uint32_t> levelDispatches_;
  std::set<std::tuple<uint32_t, uint32_t, std::vector<int32_t>>> dispatchedPipelines_;
  static constexpr uint32_t kQueriesPerPool = 1024;
};

}  // namespace vkcnn::detail
