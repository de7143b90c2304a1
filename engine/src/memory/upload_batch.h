// Weight uploads gathered into few submissions. Building a network's kernels uploads a few hundred
// small buffers (weights, biases, slopes); one submission and one wait each is most of the upload
// time on a discrete GPU. While an UploadBatch is open, DeviceBuffer::create on a thread enrolled
// in it copies its data into the batch's staging chunk and records a copy region instead; a full
// chunk, or finish(), submits every recorded copy in one command buffer and waits. Data larger
// than a chunk is split over chunks, so staging stays at kChunkBytes however large a layer is.
//
// Only enrolled threads batch (the opening thread, and workers that enrol themselves): another
// thread using the same Context meanwhile uploads at once, as its buffers may be used before this
// batch finishes. A DeviceBuffer destroyed before its copy ran takes its regions out. The data of a
// batched DeviceBuffer reaches the device at finish(): nothing may read it before (Graph::compile
// builds kernels in the batch and encodes nothing until after it). VKCNN_UPLOAD_BATCH=0 turns
// batching off. The lock covers the bookkeeping only: each thread copies its bytes into the region
// it reserved with the lock released (resnet50's 150 MB of packed weights no longer go through one
// thread at a time), and a flush waits until the copies into its chunk are done.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "memory/device_buffer.h"

namespace vkcnn::detail {

class ContextImpl;
class UploadBatch;

// The Context's open batches, by enrolled thread.
class UploadBatchRegistry {
 public:
  UploadBatch* current();  // the batch this thread is enrolled in, or null
  void enrol(UploadBatch* batch);
  void leave(UploadBatch* batch);
  // Takes out the pending regions of a buffer being destroyed (from every open batch).
  void cancel(VkBuffer buffer);

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::thread::id, UploadBatch*>> threads_;
};

class UploadBatch {
 public:
  static constexpr VkDeviceSize kChunkBytes = VkDeviceSize(32) << 20;

  // Opens a batch on `context` and enrols the calling thread.
  explicit UploadBatch(ContextImpl& context);
  // Without finish() (an exception on the way): the pending copies still run, errors swallowed.
  ~UploadBatch();
  UploadBatch(const UploadBatch&) = delete;
  UploadBatch& operator=(const UploadBatch&) = delete;

  // A worker thread's enrolment for its lifetime.
  class Enrolment {
   public:
    explicit Enrolment(UploadBatch& batch);
    ~Enrolment();
    Enrolment(const Enrolment&) = delete;
    Enrolment& operator=(const Enrolment&) = delete;

   private:
    UploadBatch& batch_;
  };

  // Copies `size` bytes of `data` into staging, to land in `buffer` from byte 0 at the next flush.
  void add(VkBuffer buffer, const void* data, VkDeviceSize size);
  void cancel(VkBuffer buffer);
  // Submits what is pending, waits, and closes the batch (the calling thread leaves it).
  void finish();

 private:
  void flushLocked(std::unique_lock<std::mutex>& lock);

  ContextImpl& context_;
  std::mutex mutex_;
  std::condition_variable copied_;  // signalled as copying_ falls
  int copying_ = 0;                 // copies into the current chunk still running (unlocked)
  std::optional<StagingPool::Lease> staging_;
  VkDeviceSize used_ = 0;
  struct Copy {
    VkBuffer buffer;
    VkBufferCopy region;
  };
  std::vector<Copy> copies_;
  bool finished_ = false;
};

}  // namespace vkcnn::detail
