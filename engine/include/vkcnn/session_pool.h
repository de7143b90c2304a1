// SessionPool: one model on several devices of one host, for throughput (onnxruntime has no
// equivalent; it is what a serving process writes by hand around one Session per GPU).
//   - Loading: the model file is read once and a Session is loaded from those bytes on each chosen
//     device (all by default), on one thread per device; each Context keeps its own pipeline
//     cache, which the cache file's header ties to the device's UUID.
//   - Pieces: every Session is compiled for the same batch, the pool's *piece*
//   (SessionPoolOptions::
//     pieceBatch). run() cuts the caller's batch into pieces and the devices' worker threads take
//     them from one queue as they become free, so a device twice as fast runs twice as many
//     pieces: the batch is split in proportion to the speed each device shows, measured as it
//     runs rather than guessed up front. Equal pieces keep outputs bit-identical to one Session of
//     the piece's batch on the same kind of device, whichever device ran them.
//   - Streaming: submit() queues one piece-sized request and returns a future; the queue is
//     bounded (queueDepth per device), so a producer faster than the devices waits in submit().
//   - A lost device (ErrorCode::deviceLost) leaves the pool: the request it held goes back to the
//     front of the queue for the other devices. Callers see an error only when no device is left.
// Errors are vkcnn::Error naming what was wrong in the caller's terms (the input by name, the
// batch given, the piece). Threads: any number of threads may call run() and submit() at once.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vkcnn/export.h"
#include "vkcnn/session.h"

namespace vkcnn {

namespace detail {
struct SessionPoolState;
}

// How a SessionPool loads its model.
struct SessionPoolOptions {
  // Every device's Session: precision, input shapes, accumulator, label; its `batch` is ignored
  // (pieceBatch is the Sessions' batch) and its `context` is the base of every device's
  // ContextOptions, whose `device` the pool sets.
  SessionOptions session;
  // The devices, each an index or a substring of a name as ContextOptions::device takes them; a
  // device may be listed twice (two Contexts on it). Empty: every device the loader reports,
  // except CPU devices (lavapipe) when there is a GPU.
  std::vector<std::string> devices;
  // Images per piece, the batch each device's Session is compiled for. 0: the model's batch, or
  // 1 where its batch is dynamic.
  uint32_t pieceBatch = 0;
  // Requests queued per device beyond those running: submit() waits while the queue is full.
  uint32_t queueDepth = 2;
};

// One device of a pool, as it stands.
struct SessionPoolDevice {
  std::string name;        // DeviceCapabilities::deviceName
  std::string requested;   // as SessionPoolOptions::devices gave it (or its index)
  bool lost = false;       // taken out of the pool after ErrorCode::deviceLost
  std::string lostReason;  // the error that took it out
  uint64_t pieces = 0;     // pieces it ran
  double busyMs = 0;       // wall time it spent running them
  // Images per second while busy (pieces * pieceBatch / busyMs); 0 before its first piece.
  double imagesPerSecond = 0;
};

// One model loaded on several devices (the file's top comment says how it splits work).
class VKCNN_API SessionPool {
 public:
  // Loads the ONNX (or .vkcnn) model at `path` on every chosen device. A device that fails to
  // load is an error naming it; the pool keeps no half-loaded state.
  explicit SessionPool(const std::string& path, const SessionPoolOptions& options = {});
  ~SessionPool();
  SessionPool(SessionPool&&) noexcept;
  SessionPool& operator=(SessionPool&&) noexcept;

  // Images per piece, and the pieces' inputs and outputs (shapes of one piece, as a Session's).
  uint32_t pieceBatch() const;
  const std::vector<SessionTensorInfo>& inputs() const;
  const std::vector<SessionTensorInfo>& outputs() const;
  // Every device the pool was loaded on, lost ones included, in load order.
  std::vector<SessionPoolDevice> devices() const;
  // Devices not lost.
  uint32_t liveDevices() const;
  // The Context of device `index` (of devices()); for fault-injection tests and statistics.
  Context context(uint32_t index) const;

  // A whole batch: every input's first dimension a multiple of pieceBatch() (the other
  // dimensions as inputs() says); shape, if given, must say so. The pieces run on every live
  // device at once; outputs come back in the inputs' order, each of the whole batch.
  std::map<std::string, HostTensor> run(const std::map<std::string, HostTensor>& inputs);
  // One piece, queued: the future holds its outputs, or the Error that failed it. Waits while
  // the queue is full.
  std::future<std::map<std::string, HostTensor>> submit(std::map<std::string, HostTensor> inputs);

 private:
  std::unique_ptr<detail::SessionPoolState> state_;
};

}  // namespace vkcnn
