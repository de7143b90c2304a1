#include "memory/upload_batch.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "vulkan/context_impl.h"
#include "load_clock.h"

namespace vkcnn::detail {

UploadBatch* UploadBatchRegistry::current() {
  std::lock_guard lock(mutex_);
  const auto self = std::this_thread::get_id();
  for (const auto& [thread, batch] : threads_)
    if (thread == self) return batch;
  return nullptr;
}

void UploadBatchRegistry::enrol(UploadBatch* batch) {
  std::lock_guard lock(mutex_);
  threads_.emplace_back(std::this_thread::get_id(), batch);
}

void UploadBatchRegistry::leave(UploadBatch* batch) {
  std::lock_guard lock(mutex_);
  const auto self = std::this_thread::get_id();
  std::erase_if(threads_, [&](const auto& t) { return t.first == self && t.second == batch; });
}

void UploadBatchRegistry::cancel(VkBuffer buffer) {
  std::lock_guard lock(mutex_);
  std::vector<UploadBatch*> seen;
  for (const auto& [thread, batch] : threads_)
    if (std::find(seen.begin(), seen.end(), batch) == seen.end()) {
      seen.push_back(batch);
      batch->cancel(buffer);
    }
}

UploadBatch::UploadBatch(ContextImpl& context) : context_(context) {
  // VKCNN_UPLOAD_BATCH=0: every buffer uploads at once (the kill switch, and the baseline).
  if (!context_.overrides().uploadBatch) return;
  context_.uploadBatches().enrol(this);
}

UploadBatch::~UploadBatch() {
  if (finished_) return;
  try {
    finish();
  } catch (...) {
    // Already failing: the error that unwinds matters, not this one.
    context_.uploadBatches().leave(this);
  }
}

UploadBatch::Enrolment::Enrolment(UploadBatch& batch) : batch_(batch) {
  batch_.context_.uploadBatches().enrol(&batch_);
}

UploadBatch::Enrolment::~Enrolment() {
  batch_.context_.uploadBatches().leave(&batch_);
}

void UploadBatch::add(VkBuffer buffer, const void* data, VkDeviceSize size) {
  // The copy into staging counts as building the kernel (it runs on the building threads, at
  // the same time); the submissions are the upload.
  context_.loadClock().countUpload(size, 0);
  std::unique_lock lock(mutex_);
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (VkDeviceSize done = 0; done < size;) {
    if (!staging_ || used_ >= kChunkBytes) {
      flushLocked(lock);
      if (!staging_) {
        // A Lease does not move: built in place from what acquire() returns.
        struct Acquire {
          StagingPool& pool;
          operator StagingPool::Lease() const {
            return pool.acquire(kChunkBytes, "weight uploads");
          }
        };
        staging_.emplace(Acquire{context_.staging()});
      }
      // Another thread may have filled the chunk while this one waited for the flush.
      if (used_ >= kChunkBytes) continue;
    }
    const VkDeviceSize n = std::min(size - done, kChunkBytes - used_);
    uint8_t* target = static_cast<uint8_t*>((*staging_)->data()) + used_;
    copies_.push_back({buffer, {used_, done, n}});
    used_ += (n + 15) / 16 * 16;
    // The region is this thread's: copied without the lock; the chunk is not flushed (nor
    // reused) until copying_ is back to 0.
    ++copying_;
    lock.unlock();
    std::memcpy(target, bytes + done, n);
    lock.lock();
    if (--copying_ == 0) copied_.notify_all();
    done += n;
  }
}

void UploadBatch::cancel(VkBuffer buffer) {
  std::lock_guard lock(mutex_);
  std::erase_if(copies_, [&](const Copy& c) { return c.buffer == buffer; });
}

void UploadBatch::flushLocked(std::unique_lock<std::mutex>& lock) {
  copied_.wait(lock, [&] { return copying_ == 0; });
  if (copies_.empty()) {
    used_ = 0;
    return;
  }
  PhaseTimer timer(context_.loadClock(), LoadPhase::upload);
  context_.loadClock().countUpload(0, 1);
  (*staging_)->flush();
  const VkBuffer source = (*staging_)->buffer();
  context_.submitAndWait(
      [&](VkCommandBuffer cb) {
        transferPrologue(context_, cb);
        for (const Copy& c : copies_)
          context_.vk().vkCmdCopyBuffer(cb, source, c.buffer, 1, &c.region);
        transferEpilogue(context_, cb);
      },
      "weight uploads");
  copies_.clear();
  used_ = 0;
}

void UploadBatch::finish() {
  context_.uploadBatches().leave(this);
  std::unique_lock lock(mutex_);
  finished_ = true;
  struct Release {
    std::optional<StagingPool::Lease>& staging;
    ~Release() { staging.reset(); }
  } release{staging_};
  flushLocked(lock);
}

}  // namespace vkcnn::detail
