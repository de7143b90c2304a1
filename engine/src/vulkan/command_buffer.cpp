#include <algorithm>

#include "memory/image_storage.h"
#include "vulkan/command_buffer_impl.h"
#include "vulkan/context_impl.h"

namespace vkcnn {
namespace detail {

namespace {
bool overlaps(const LayerAccess& a, const LayerAccess& b) {
  if (!a.storage || !b.storage)
    return a.buffer && a.buffer == b.buffer && a.firstByte < b.firstByte + b.byteCount &&
           b.firstByte < a.firstByte + a.byteCount;
  return a.storage == b.storage && a.firstLayer < b.firstLayer + b.layerCount &&
         b.firstLayer < a.firstLayer + a.layerCount;
}
}  // namespace

bool HazardTracker::conflicts(const std::vector<LayerAccess>& next) const {
  for (const LayerAccess& n : next)
    for (const LayerAccess& p : pending_)
      if ((n.write || p.write) && overlaps(n, p)) return true;
  return false;
}

void HazardTracker::record(const std::vector<LayerAccess>& next) {
  pending_.insert(pending_.end(), next.begin(), next.end());
}

CommandBufferImpl::CommandBufferImpl(std::shared_ptr<ContextImpl> ctx, std::string name,
                                     VkCommandBuffer wrappedBuffer,
                                     const CommandBufferOptions& options)
    : context(std::move(ctx)),
      contextHandle(context),
      label(std::move(name)),
      temporaries(*context),
      options_(options) {
  context->throwIfLost();
  const auto& vk = context->vk();
  if (label.empty()) label = context->uniqueName("command buffer");
  if (wrappedBuffer) {
    wrapped = true;
    commandBuffer = wrappedBuffer;
    return;
  }
  try {
    VkCommandPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    poolInfo.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    poolInfo.queueFamilyIndex = context->queueFamilyIndex();
    context->check(vk.vkCreateCommandPool(context->device(), &poolInfo, nullptr, &pool_),
                   "vkCreateCommandPool");
    context->setName(VK_OBJECT_TYPE_COMMAND_POOL, pool_, label);
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    context->check(vk.vkAllocateCommandBuffers(context->device(), &alloc, &commandBuffer),
                   "vkAllocateCommandBuffers");
    context->setName(VK_OBJECT_TYPE_COMMAND_BUFFER, commandBuffer, label);
    VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    context->check(vk.vkCreateFence(context->device(), &fenceInfo, nullptr, &fence_),
                   "vkCreateFence");
    context->setName(VK_OBJECT_TYPE_FENCE, fence_, label);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    context->check(vk.vkBeginCommandBuffer(commandBuffer, &begin), "vkBeginCommandBuffer");
  } catch (...) {
    // The destructor does not run for a constructor that throws: free what exists so far.
    if (fence_) vk.vkDestroyFence(context->device(), fence_, nullptr);
    if (pool_) vk.vkDestroyCommandPool(context->device(), pool_, nullptr);
    throw;
  }
}

CommandBufferImpl::~CommandBufferImpl() {
  if (status_ == CommandBufferStatus::committed && !wrapped) {
    try {
      waitUntilCompleted();
    } catch (...) {
      // Destructors do not throw; a lost device stays reported by the Context.
    }
  }
  context->settleAfterLoss();
  onCompleted();
  const auto& vk = context->vk();
  for (VkDescriptorPool p : descriptorPools_)
    vk.vkDestroyDescriptorPool(context->device(), p, nullptr);
  for (QueryPool& q : queryPools_) vk.vkDestroyQueryPool(context->device(), q.pool, nullptr);
  if (fence_) vk.vkDestroyFence(context->device(), fence_, nullptr);
  if (pool_) vk.vkDestroyCommandPool(context->device(), pool_, nullptr);
}

void CommandBufferImpl::requireEncoding(const std::string& what) const {
  context->throwIfLost();
  if (status_ != CommandBufferStatus::encoding)
    throw Error(ErrorCode::misuse, what + ": command buffer '" + label + "' is " +
                                       toString(status_) + ", no longer encoding");
}

VkDescriptorSet CommandBufferImpl::allocateDescriptorSet(VkDescriptorSetLayout layout) {
  const auto& vk = context->vk();
  VkDescriptorSetAllocateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  info.descriptorSetCount = 1;
  info.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  if (!descriptorPools_.empty()) {
    info.descriptorPool = descriptorPools_.back();
    VkResult r = vk.vkAllocateDescriptorSets(context->device(), &info, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
      context->check(r, "vkAllocateDescriptorSets");
  }
  // Every pool size is non-zero: some drivers reject zero-count pool sizes.
  const VkDescriptorPoolSize sizes[] = {
      {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 512},
      {VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, 256},
      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 512},
      {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 256},
  };
  VkDescriptorPoolCreateInfo poolInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  poolInfo.maxSets = 256;
  poolInfo.poolSizeCount = uint32_t(std::size(sizes));
  poolInfo.pPoolSizes = sizes;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  context->check(vk.vkCreateDescriptorPool(context->device(), &poolInfo, nullptr, &pool),
                 "vkCreateDescriptorPool");
  context->setName(VK_OBJECT_TYPE_DESCRIPTOR_POOL, pool, label);
  descriptorPools_.push_back(pool);
  info.descriptorPool = pool;
  context->check(vk.vkAllocateDescriptorSets(context->device(), &info, &set),
                 "vkAllocateDescriptorSets");
  return set;
}

void CommandBufferImpl::barrierBefore(const std::vector<LayerAccess>& accesses,
                                      const std::vector<VkImageMemoryBarrier>& transitions,
                                      bool aliased) {
  if (firstDispatch_ || aliased || !transitions.empty() || hazards_.conflicts(accesses))
    barrier(transitions, aliased);
  hazards_.record(accesses);
}

void CommandBufferImpl::barrier(const std::vector<VkImageMemoryBarrier>& transitions,
                                bool aliased) {
  // The first barrier waits for all earlier work on the queue (host transfers, earlier command
  // buffers, the application's own commands before ours in a wrapped buffer).
  const bool first = firstDispatch_;
  // A global memory barrier costs nothing beside the image barriers (both drain the compute
  // stage), and orders every pending access at once.
  const bool memory = first || aliased || !hazards_.empty();
  if (!memory && transitions.empty()) return;
  firstDispatch_ = false;
  closeLevel();
  VkMemoryBarrier global{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  global.srcAccessMask = first ? VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_MEMORY_READ_BIT
                               : VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
  global.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  const VkPipelineStageFlags src =
      first ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  context->vk().vkCmdPipelineBarrier(commandBuffer, src, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                                     memory ? 1 : 0, &global, 0, nullptr,
                                     uint32_t(transitions.size()), transitions.data());
  statistics.barriers++;
  hazards_.clear();
}

CommandBufferImpl::QueryPool& CommandBufferImpl::queryPoolFor(uint32_t count) {
  if (queryPools_.empty() || queryPools_.back().used + count > kQueriesPerPool) {
    const auto& vk = context->vk();
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = kQueriesPerPool;
    QueryPool q;
    context->check(vk.vkCreateQueryPool(context->device(), &info, nullptr, &q.pool),
                   "vkCreateQueryPool");
    context->setName(VK_OBJECT_TYPE_QUERY_POOL, q.pool, label + " timestamps");
    // Reset inside the command buffer, so a resubmitted recording resets them again.
    vk.vkCmdResetQueryPool(commandBuffer, q.pool, 0, kQueriesPerPool);
    queryPools_.push_back(q);
  }
  return queryPools_.back();
}

void CommandBufferImpl::timestampBefore(const std::string& kernelLabel) {
  if (!options_.profile) return;
  if (options_.profileLevels) {
    // The first level starts at the first dispatch; every later one where the last one closed.
    if (queryPools_.empty()) {
      QueryPool& q = queryPoolFor(1);
      context->vk().vkCmdWriteTimestamp(commandBuffer, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, q.pool,
                                        q.used++);
    }
    levelLabels_.push_back(kernelLabel);
    return;
  }
  QueryPool& q = queryPoolFor(2);  // the pair in one pool
  context->vk().vkCmdWriteTimestamp(commandBuffer, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, q.pool,
                                    q.used++);
  timedLabels_.push_back(kernelLabel);
}

void CommandBufferImpl::timestampAfter() {
  if (!options_.profile || options_.profileLevels) return;
  QueryPool& q = queryPools_.back();
  context->vk().vkCmdWriteTimestamp(commandBuffer, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, q.pool,
                                    q.used++);
}

void CommandBufferImpl::closeLevel() {
  if (!options_.profile || !options_.profileLevels || levelLabels_.empty()) return;
  QueryPool& q = queryPoolFor(1);
  context->vk().vkCmdWriteTimestamp(commandBuffer, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, q.pool,
                                    q.used++);
  // The level's labels in order, consecutive repeats (a batch's pieces) counted.
  std::string joined;
  for (size_t i = 0; i < levelLabels_.size();) {
    size_t j = i;
    while (j < levelLabels_.size() && levelLabels_[j] == levelLabels_[i]) ++j;
    joined += (joined.empty() ? "" : " + ") + levelLabels_[i];
    if (j - i > 1) joined += " x" + std::to_string(j - i);
    i = j;
  }
  timedLabels_.push_back(joined);
  levelDispatches_.push_back(uint32_t(levelLabels_.size()));
  levelLabels_.clear();
}

void CommandBufferImpl::noteDispatch(uint32_t shader, uint32_t variant,
                                     std::span<const int32_t> specialization) {
  dispatchedPipelines_.emplace(shader, variant,
                               std::vector<int32_t>(specialization.begin(), specialization.end()));
}

bool CommandBufferImpl::dispatched(uint32_t shader, uint32_t variant,
                                   std::span<const int32_t> specialization, size_t compared) const {
  const std::vector<int32_t> prefix(
      specialization.begin(), specialization.begin() + std::min(compared, specialization.size()));
  // Every recorded vector that starts with `prefix` sorts at or after it, the first one first.
  const auto at = dispatchedPipelines_.lower_bound({shader, variant, prefix});
  if (at == dispatchedPipelines_.end()) return false;
  const auto& [s, v, constants] = *at;
  return s == shader && v == variant && constants.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), constants.begin());
}

std::vector<KernelTiming> CommandBufferImpl::kernelTimings() {
  std::vector<KernelTiming> timings;
  if (!options_.profile || status() != CommandBufferStatus::completed) return timings;
  const double period = context->capabilities().timestampPeriodNs;
  std::vector<uint64_t> ticks;
  for (QueryPool& q : queryPools_) {
    if (!q.used) continue;
    const size_t at = ticks.size();
    ticks.resize(at + q.used);
    context->check(
        context->vk().vkGetQueryPoolResults(
            context->device(), q.pool, 0, q.used, q.used * sizeof(uint64_t), ticks.data() + at,
            sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  }
  if (ticks.empty()) return timings;
  const auto ms = [&](uint64_t from, uint64_t to) { return double(to - from) * period * 1e-6; };
  if (options_.profileLevels) {
    // The start, then each level's end: a level's time runs from the end of the one before.
    for (size_t i = 0; i < timedLabels_.size() && i + 1 < ticks.size(); ++i)
      timings.push_back({timedLabels_[i], ms(ticks[0], ticks[i]), ms(ticks[i], ticks[i + 1]),
                         levelDispatches_[i]});
    return timings;
  }
  for (size_t i = 0; i + 1 < ticks.size() && i / 2 < timedLabels_.size(); i += 2)
    timings.push_back({timedLabels_[i / 2], ms(ticks[0], ticks[i]), ms(ticks[i], ticks[i + 1])});
  return timings;
}

void CommandBufferImpl::publishWrites() {
  // Our writes to whatever the application records after us in a wrapped buffer, and shader
  // writes to shared buffers to the host (which reads them after the fence: the fence alone does
  // not make device writes visible to the host domain).
  VkPipelineStageFlags dstStages = 0;
  VkAccessFlags dstAccess = 0;
  if (wrapped) {
    dstStages |= VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    dstAccess |= VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  }
  if (publishToHost_) {
    dstStages |= VK_PIPELINE_STAGE_HOST_BIT;
    dstAccess |= VK_ACCESS_HOST_READ_BIT;
  }
  if (firstDispatch_ || !dstStages) return;
  VkMemoryBarrier memory{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  memory.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  memory.dstAccessMask = dstAccess;
  context->vk().vkCmdPipelineBarrier(commandBuffer, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, dstStages,
                                     0, 1, &memory, 0, nullptr, 0, nullptr);
  statistics.barriers++;
}

void CommandBufferImpl::endEncoding() {
  if (status_ != CommandBufferStatus::encoding) return;
  closeLevel();
  if (wrapped) publishWrites();
  status_ = CommandBufferStatus::committed;
}

void CommandBufferImpl::commit() {
  if (wrapped)
    throw Error(ErrorCode::misuse, "command buffer '" + label +
                                       "' wraps an application's VkCommandBuffer: the application "
                                       "submits it (call endEncoding() first)");
  if (options_.reusable && status_ == CommandBufferStatus::completed) {
    context->check(context->vk().vkResetFences(context->device(), 1, &fence_), "vkResetFences");
    context->submit(commandBuffer, fence_, "vkQueueSubmit (resubmission)");
    status_ = CommandBufferStatus::committed;
    return;
  }
  requireEncoding("commit");
  closeLevel();
  publishWrites();
  context->check(context->vk().vkEndCommandBuffer(commandBuffer), "vkEndCommandBuffer");
  try {
    context->submit(commandBuffer, fence_, "vkQueueSubmit");
  } catch (...) {
    status_ = CommandBufferStatus::error;
    throw;
  }
  status_ = CommandBufferStatus::committed;
}

void CommandBufferImpl::waitUntilCompleted() {
  if (status_ == CommandBufferStatus::encoding)
    throw Error(ErrorCode::misuse,
                "waitUntilCompleted: command buffer '" + label + "' was never committed");
  if (status_ == CommandBufferStatus::error) {
    // Its work may never have run: say so again rather than return as if it had completed.
    context->throwIfLost();
    throw Error(ErrorCode::vulkan,
                "waitUntilCompleted: command buffer '" + label + "' failed to submit earlier");
  }
  if (status_ != CommandBufferStatus::committed) return;
  if (wrapped)
    throw Error(ErrorCode::misuse, "waitUntilCompleted: command buffer '" + label +
                                       "' is submitted by the application; call markCompleted()");
  try {
    context->waitForFence(fence_, "waiting for command buffer");
  } catch (...) {
    status_ = CommandBufferStatus::error;
    throw;
  }
  onCompleted();
}

CommandBufferStatus CommandBufferImpl::status() {
  if (status_ == CommandBufferStatus::committed && !wrapped) {
    VkResult r = context->vk().vkGetFenceStatus(context->device(), fence_);
    if (r == VK_SUCCESS)
      onCompleted();
    else if (r == VK_NOT_READY && context->lost())
      status_ = CommandBufferStatus::error;  // a poller would otherwise wait on a lost device
    else if (r != VK_NOT_READY) {
      status_ = CommandBufferStatus::error;
      context->check(r, "vkGetFenceStatus");
    }
  }
  return status_;
}

void CommandBufferImpl::markCompleted() {
  if (!wrapped)
    throw Error(ErrorCode::misuse, "markCompleted is for wrapped command buffers; '" + label +
                                       "' is vkcnn's own: use waitUntilCompleted()");
  if (status_ == CommandBufferStatus::encoding) endEncoding();
  onCompleted();
}

void CommandBufferImpl::onCompleted() {
  if (status_ == CommandBufferStatus::committed) status_ = CommandBufferStatus::completed;
  // A reusable recording keeps what it refers to until it is destroyed.
  if (options_.reusable && status_ == CommandBufferStatus::completed) return;
  // Storages first (a temporary gives its range back), then the pool's blocks to the Context.
  keepAlive_.clear();
  temporaries.recycle();
}

}  // namespace detail

// ---- public CommandBuffer -------------------------------------------------------------------

const char* toString(CommandBufferStatus status) {
  switch (status) {
    case CommandBufferStatus::encoding:
      return "encoding";
    case CommandBufferStatus::committed:
      return "committed";
    case CommandBufferStatus::completed:
      return "completed";
    case CommandBufferStatus::error:
      return "in error";
  }
  return "unknown";
}

CommandBuffer::CommandBuffer(const Context& context, const std::string& label,
                             const CommandBufferOptions& options)
    : impl_(std::make_shared<detail::CommandBufferImpl>(context.impl(), label, VK_NULL_HANDLE,
                                                        options)) {}

CommandBuffer::CommandBuffer(std::shared_ptr<detail::CommandBufferImpl> impl)
    : impl_(std::move(impl)) {}

CommandBuffer CommandBuffer::wrap(const Context& context, VkCommandBuffer commandBuffer,
                                  const std::string& label) {
  if (!commandBuffer)
    throw Error(ErrorCode::invalidArgument, "CommandBuffer::wrap: the VkCommandBuffer is null");
  return CommandBuffer(
      std::make_shared<detail::CommandBufferImpl>(context.impl(), label, commandBuffer));
}

void CommandBuffer::commit() {
  impl_->commit();
}
void CommandBuffer::waitUntilCompleted() {
  impl_->waitUntilCompleted();
}
CommandBufferStatus CommandBuffer::status() const {
  return impl_->status();
}
void CommandBuffer::endEncoding() {
  impl_->endEncoding();
}
void CommandBuffer::markCompleted() {
  impl_->markCompleted();
}
VkCommandBuffer CommandBuffer::vkCommandBuffer() const {
  return impl_->commandBuffer;
}
const std::string& CommandBuffer::label() const {
  return impl_->label;
}
TemporaryPoolStatistics CommandBuffer::temporaryPoolStatistics() const {
  return impl_->temporaries.statistics();
}
EncodingStatistics CommandBuffer::encodingStatistics() const {
  return impl_->statistics;
}
std::vector<KernelTiming> CommandBuffer::kernelTimings() const {
  return impl_->kernelTimings();
}
double CommandBuffer::gpuMilliseconds() const {
  double end = 0;
  for (const KernelTiming& t : impl_->kernelTimings())
    end = std::max(end, t.startMilliseconds + t.milliseconds);
  return end;
}
const Context& CommandBuffer::context() const {
  return impl_->contextHandle;
}

}  // namespace vkcnn
