// Where the time of loading a model goes (Session::loadStatistics, `vkcnn bench --cold`): each
// Context keeps running totals per phase, and the code of each phase adds to them through a
// PhaseTimer. A reader takes the difference of two snapshots around what it measures, so loads on
// other threads sharing the Context add into the same difference (documented on Session).
// Phases are exclusive where they nest: uploads run inside kernel construction (lower) and
// pipelines inside the first encode; readers subtract the inner from the outer.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "vkcnn/export.h"

namespace vkcnn::detail {

enum class LoadPhase : uint32_t {
  parse,           // protobuf parsing of the ONNX bytes
  check,           // onnx's checker
  shapeInference,  // onnx's shape inference (the importer's cross-check)
  optimize,        // Graph::compile's rewrites: fusion, folding, concatenation planning
  lower,           // Graph::compile building kernels: weight packing, with the uploads inside
  upload,          // weights and constants copied to device memory (staging, submission, wait)
  pipelines,       // vkCreateComputePipelines and its layouts (through the pipeline cache)
  count
};

struct LoadClockSnapshot {
  std::array<uint64_t, size_t(LoadPhase::count)> ns{};
  uint64_t uploadBytes = 0, uploadSubmissions = 0, pipelinesCreated = 0;
  double ms(LoadPhase p) const { return double(ns[size_t(p)]) / 1e6; }
  LoadClockSnapshot since(const LoadClockSnapshot& before) const {
    LoadClockSnapshot d;
    for (size_t i = 0; i < ns.size(); ++i) d.ns[i] = ns[i] - before.ns[i];
    d.uploadBytes = uploadBytes - before.uploadBytes;
    d.uploadSubmissions = uploadSubmissions - before.uploadSubmissions;
    d.pipelinesCreated = pipelinesCreated - before.pipelinesCreated;
    return d;
  }
};

class LoadClock {
 public:
  void add(LoadPhase p, uint64_t ns) { ns_[size_t(p)].fetch_add(ns, std::memory_order_relaxed); }
  void countUpload(uint64_t bytes, uint64_t submissions) {
    uploadBytes_.fetch_add(bytes, std::memory_order_relaxed);
    uploadSubmissions_.fetch_add(submissions, std::memory_order_relaxed);
  }
  void countPipeline() { pipelinesCreated_.fetch_add(1, std::memory_order_relaxed); }
  LoadClockSnapshot snapshot() const {
    LoadClockSnapshot s;
    for (size_t i = 0; i < s.ns.size(); ++i) s.ns[i] = ns_[i].load(std::memory_order_relaxed);
    s.uploadBytes = uploadBytes_.load(std::memory_order_relaxed);
    s.uploadSubmissions = uploadSubmissions_.load(std::memory_order_relaxed);
    s.pipelinesCreated = pipelinesCreated_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  std::array<std::atomic<uint64_t>, size_t(LoadPhase::count)> ns_{};
  std::atomic<uint64_t> uploadBytes_{0}, uploadSubmissions_{0}, pipelinesCreated_{0};
};

// Adds the time from construction to destruction (an exception included) to a phase.
class PhaseTimer {
 public:
  PhaseTimer(LoadClock& clock, LoadPhase phase)
      : clock_(clock), phase_(phase), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    clock_.add(phase_, uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - start_)
                                    .count()));
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  LoadClock& clock_;
  LoadPhase phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace vkcnn::detail

namespace vkcnn {
class Context;
namespace detail {
// The Context's clock; exported, so libvkcnn_onnx reaches it without the Context's internals.
VKCNN_API LoadClock& loadClock(const Context& context);
}  // namespace detail
}  // namespace vkcnn
