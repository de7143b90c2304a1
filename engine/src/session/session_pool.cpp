// SessionPool (session_pool.h): a Session per device, one worker thread per Session, and one
// queue of piece-sized requests that the workers drain. The queue is the whole scheduler: a free
// worker takes the oldest request, so faster devices take more pieces; a lost device's request
// goes back to the front. run() is submit() of each piece and a gather.
#include "vkcnn/session_pool.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "vkcnn/error.h"

namespace vkcnn {
namespace detail {

using Outputs = std::map<std::string, HostTensor>;

struct PoolRequest {
  Outputs inputs;
  std::promise<Outputs> result;
};

struct PoolDevice {
  SessionPoolDevice info;
  std::optional<Context> context;  // made on the device's load thread
  std::unique_ptr<Session> session;
  std::thread worker;
};

struct SessionPoolState {
  uint32_t pieceBatch = 1, queueDepth = 2;
  std::vector<SessionTensorInfo> inputs, outputs;
  std::vector<PoolDevice> devices;

  mutable std::mutex mutex;
  std::condition_variable work;   // a request queued, or stopping
  std::condition_variable space;  // room in the queue, or stopping, or no device left
  std::deque<std::unique_ptr<PoolRequest>> queue;
  uint32_t live = 0;
  bool stopping = false;
  std::string lastLoss;  // the last lost device's error, for "no device left"

  size_t capacity() const { return size_t(queueDepth) * std::max<uint32_t>(live, 1); }
  void fail(PoolRequest& request, ErrorCode code, const std::string& message) {
    request.result.set_exception(std::make_exception_ptr(Error(code, message)));
  }
  void noDeviceLeft(std::unique_lock<std::mutex>&);
  void serve(PoolDevice& device);
};

// Fails every queued request once the last device is lost (called with the lock held).
void SessionPoolState::noDeviceLeft(std::unique_lock<std::mutex>&) {
  const std::string message =
      "SessionPool: every device of the pool was lost; the last: " + lastLoss;
  for (auto& request : queue) fail(*request, ErrorCode::deviceLost, message);
  queue.clear();
  space.notify_all();
}

void SessionPoolState::serve(PoolDevice& device) {
  using Clock = std::chrono::steady_clock;
  std::unique_lock lock(mutex);
  for (;;) {
    work.wait(lock, [&] { return stopping || !queue.empty(); });
    if (stopping) return;
    std::unique_ptr<PoolRequest> request = std::move(queue.front());
    queue.pop_front();
    space.notify_one();
    lock.unlock();
    const auto start = Clock::now();
    try {
      Outputs outputs = device.session->run(request->inputs);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      lock.lock();  // the statistics first: a caller woken by the result may read them
      device.info.pieces++;
      device.info.busyMs += ms;
      device.info.imagesPerSecond = device.info.pieces * pieceBatch * 1e3 / device.info.busyMs;
      request->result.set_value(std::move(outputs));
    } catch (const Error& e) {
      if (e.code() != ErrorCode::deviceLost) {  // this request's own fault: the caller's error
        request->result.set_exception(std::current_exception());
        lock.lock();
        continue;
      }
      lock.lock();
      device.info.lost = true;
      device.info.lostReason = e.what();
      lastLoss = "device '" + device.info.name + "': " + e.what();
      queue.push_front(std::move(request));  // retried by another device
      if (--live == 0) noDeviceLeft(lock);
      work.notify_all();
      return;
    } catch (const std::bad_alloc&) {
      request->result.set_exception(std::make_exception_ptr(
          Error(ErrorCode::outOfMemory, "SessionPool: out of host memory running a piece")));
      lock.lock();
    }
  }
}

}  // namespace detail

namespace {

// The devices by default: every GPU the loader reports, or every device where there is none.
std::vector<std::string> defaultDevices() {
  std::vector<std::string> gpus, all;
  for (const PhysicalDeviceInfo& d : Context::enumerateDevices()) {
    all.push_back(std::to_string(d.index));
    if (d.type != DeviceType::cpu) gpus.push_back(std::to_string(d.index));
  }
  if (all.empty())
    throw Error(ErrorCode::unsupported, "SessionPool: the Vulkan loader reports no device");
  return gpus.empty() ? all : gpus;
}

// The number of pieces in `t`, a whole batch of input `info` (shape of one piece).
size_t piecesOf(const SessionTensorInfo& info, const HostTensor& t, uint32_t pieceBatch) {
  const std::string what = "SessionPool::run: input '" + info.name + "'";
  if (info.shape.empty() || info.shape[0] != int64_t(pieceBatch))
    throw Error(ErrorCode::invalidArgument,
                what + ": its first dimension is not the batch, so it cannot be cut into pieces");
  if (t.data.empty() || t.data.size() % info.elementCount)
    throw Error(ErrorCode::invalidArgument, what + " holds " + std::to_string(t.data.size()) +
                                                " floats, not a multiple of one piece's " +
                                                std::to_string(info.elementCount) + " (" +
                                                std::to_string(pieceBatch) +
                                                " images): the batch must be a multiple of "
                                                "SessionPoolOptions::pieceBatch");
  const size_t pieces = t.data.size() / info.elementCount;
  if (!t.shape.empty()) {
    std::vector<int64_t> expected = info.shape;
    expected[0] = int64_t(pieces * pieceBatch);
    if (t.shape != expected)
      throw Error(ErrorCode::invalidArgument,
                  what + ": shape does not match its " + std::to_string(t.data.size()) + " floats");
  }
  return pieces;
}

}  // namespace

SessionPool::SessionPool(const std::string& path, const SessionPoolOptions& options)
    : state_(std::make_unique<detail::SessionPoolState>()) {
  auto& s = *state_;
  if (options.queueDepth == 0)
    throw Error(ErrorCode::invalidArgument, "SessionPoolOptions::queueDepth is 0; at least 1");
  const std::vector<std::string> requested =
      options.devices.empty() ? defaultDevices() : options.devices;
  s.queueDepth = options.queueDepth;
  s.devices.resize(requested.size());
  // Loads run side by side, one thread per device; the first error wins, after every load ended.
  std::vector<std::exception_ptr> errors(requested.size());
  std::vector<std::thread> loads;
  for (size_t d = 0; d < requested.size(); ++d)
    loads.emplace_back([&, d] {
      try {
        SessionOptions o = options.session;
        o.batch = options.pieceBatch;
        o.context.device = requested[d];
        detail::PoolDevice& device = s.devices[d];
        device.context.emplace(o.context);
        device.session = std::make_unique<Session>(*device.context, path, o);
        device.info.name = device.context->capabilities().deviceName;
        device.info.requested = requested[d];
      } catch (...) {
        errors[d] = std::current_exception();
      }
    });
  for (auto& t : loads) t.join();
  for (size_t d = 0; d < errors.size(); ++d) {
    if (!errors[d]) continue;
    try {
      std::rethrow_exception(errors[d]);
    } catch (const Error& e) {
      throw Error(e.code(), "SessionPool: device '" + requested[d] + "': " + e.what());
    }
  }
  const Session& first = *s.devices[0].session;
  s.pieceBatch = first.batch();
  s.inputs = first.inputs();
  s.outputs = first.outputs();
  s.live = uint32_t(s.devices.size());
  for (auto& device : s.devices) device.worker = std::thread([&s, &device] { s.serve(device); });
}

SessionPool::~SessionPool() {
  if (!state_) return;
  auto& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    s.stopping = true;
    for (auto& request : s.queue)
      s.fail(*request, ErrorCode::misuse, "SessionPool: destroyed before this request ran");
    s.queue.clear();
  }
  s.work.notify_all();
  s.space.notify_all();
  for (auto& device : s.devices)
    if (device.worker.joinable()) device.worker.join();
}

SessionPool::SessionPool(SessionPool&&) noexcept = default;
SessionPool& SessionPool::operator=(SessionPool&&) noexcept = default;

uint32_t SessionPool::pieceBatch() const {
  return state_->pieceBatch;
}
const std::vector<SessionTensorInfo>& SessionPool::inputs() const {
  return state_->inputs;
}
const std::vector<SessionTensorInfo>& SessionPool::outputs() const {
  return state_->outputs;
}

std::vector<SessionPoolDevice> SessionPool::devices() const {
  std::lock_guard lock(state_->mutex);
  std::vector<SessionPoolDevice> result;
  for (const auto& device : state_->devices) result.push_back(device.info);
  return result;
}

uint32_t SessionPool::liveDevices() const {
  std::lock_guard lock(state_->mutex);
  return state_->live;
}

Context SessionPool::context(uint32_t index) const {
  if (index >= state_->devices.size())
    throw Error(ErrorCode::invalidArgument,
                "SessionPool::context: device " + std::to_string(index) +
                    " does not exist; the pool has " + std::to_string(state_->devices.size()));
  return *state_->devices[index].context;
}

std::future<std::map<std::string, HostTensor>> SessionPool::submit(
    std::map<std::string, HostTensor> inputs) {
  auto& s = *state_;
  auto request = std::make_unique<detail::PoolRequest>();
  request->inputs = std::move(inputs);
  auto future = request->result.get_future();
  std::unique_lock lock(s.mutex);
  s.space.wait(lock, [&] { return s.stopping || s.live == 0 || s.queue.size() < s.capacity(); });
  if (s.live == 0)
    s.fail(*request, ErrorCode::deviceLost,
           "SessionPool: every device of the pool was lost; the last: " + s.lastLoss);
  else if (s.stopping)
    s.fail(*request, ErrorCode::misuse, "SessionPool: destroyed before this request ran");
  else
    s.queue.push_back(std::move(request));
  lock.unlock();
  s.work.notify_one();
  return future;
}

std::map<std::string, HostTensor> SessionPool::run(
    const std::map<std::string, HostTensor>& inputs) {
  auto& s = *state_;
  size_t pieces = 0;
  for (const SessionTensorInfo& info : s.inputs) {
    auto it = inputs.find(info.name);
    if (it == inputs.end())
      throw Error(ErrorCode::invalidArgument,
                  "SessionPool::run: input '" + info.name + "' is missing");
    const size_t n = piecesOf(info, it->second, s.pieceBatch);
    if (pieces && n != pieces)
      throw Error(ErrorCode::invalidArgument,
                  "SessionPool::run: input '" + info.name + "' holds " + std::to_string(n) +
                      " pieces' batch, another input " + std::to_string(pieces));
    pieces = n;
  }
  for (const SessionTensorInfo& info : s.outputs)
    if (info.shape.empty() || info.shape[0] != int64_t(s.pieceBatch))
      throw Error(ErrorCode::invalidArgument,
                  "SessionPool::run: output '" + info.name +
                      "': its first dimension is not the batch, so pieces cannot be gathered; "
                      "use submit() with one piece at a time");
  std::vector<std::future<std::map<std::string, HostTensor>>> futures;
  for (size_t p = 0; p < pieces; ++p) {
    std::map<std::string, HostTensor> piece;
    for (const SessionTensorInfo& info : s.inputs) {
      const auto& data = inputs.at(info.name).data;
      piece[info.name] = {info.shape,
                          std::vector<float>(data.begin() + p * info.elementCount,
                                             data.begin() + (p + 1) * info.elementCount)};
    }
    futures.push_back(submit(std::move(piece)));
  }
  std::map<std::string, HostTensor> result;
  for (const SessionTensorInfo& info : s.outputs) {
    HostTensor& t = result[info.name];
    t.shape = info.shape;
    if (!t.shape.empty()) t.shape[0] *= int64_t(pieces);
    t.data.reserve(info.elementCount * pieces);
  }
  for (auto& future : futures) {  // in order; the first failed piece's error is the run's
    std::map<std::string, HostTensor> piece = future.get();
    for (const SessionTensorInfo& info : s.outputs) {
      auto& out = result[info.name].data;
      const auto& part = piece.at(info.name).data;
      out.insert(out.end(), part.begin(), part.end());
    }
  }
  return result;
}

}  // namespace vkcnn
