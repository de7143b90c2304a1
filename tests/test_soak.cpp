// Soak: the small network (weights, temporaries, upload and download) runs over and over for a
// fixed time (VKCNN_SOAK_SECONDS, default 20), every result checked, every log message a failure.
// After a warm-up, device memory (Context::memoryStatistics) must stay exactly at its baseline
// after every run, and host memory must stay flat: resident set size (/proc/self/statm) within
// 8 MiB of the warmed-up baseline (the working set on Windows) (malloc's arenas, libc and the
// driver's caches move a little; a leak of 1 KiB per run would add well over 8 MiB in the thousands
// of runs this makes), or, under AddressSanitizer, whose quarantine inflates RSS, the heap bytes in
// use within 1 MiB.
//
// Two phases: the first quarter with the validation layer (synchronization validation included)
// checks results and device memory; the rest without it also checks host memory. The validation
// layer of Debian 12 (1.3.239) leaks its own state through shared_ptr cycles for every command
// buffer, pool and image (~20 KiB per run here, all of it inside the layer: see
// tests/sanitizers/lsan.supp), so host memory is only meaningful without it. The same network runs
// validated in test_faults and test_threads.
#ifdef _WIN32
#include <windows.h>
#include <psapi.h>
#else
#include <unistd.h>
#endif

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "small_network.h"
#include "test_support.h"

#if defined(__SANITIZE_ADDRESS__)
// From <sanitizer/allocator_interface.h>, which GCC 12 does not ship: heap bytes the program has
// allocated and not freed (ASan's quarantine not counted).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

using Clock = std::chrono::steady_clock;

// The process's resident set: /proc/self/statm on Linux, the working set on Windows.
uint64_t residentBytes() {
#ifdef _WIN32
  PROCESS_MEMORY_COUNTERS counters{};
  return K32GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters)
             ? uint64_t(counters.WorkingSetSize)
             : 0;
#else
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int read = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return read == 2 ? resident * uint64_t(sysconf(_SC_PAGESIZE)) : 0;
#endif
}

double soakSeconds() {
  const char* v = std::getenv("VKCNN_SOAK_SECONDS");
  return v && *v ? std::atof(v) : 20.0;
}

struct DeviceUsage {
  uint32_t liveAllocations = 0;
  uint64_t deviceBytesInUse = 0;
  uint32_t memoryObjects = 0;
  uint64_t deviceBytesAllocated = 0;
  bool operator==(const DeviceUsage&) const = default;
};

DeviceUsage deviceUsage(const Context& context) {
  MemoryStatistics m = context.memoryStatistics();
  return {m.liveAllocations, m.deviceBytesInUse, m.memoryObjects, m.deviceBytesAllocated};
}

// Runs the network over and over on `context` for `seconds` (a quarter of it, at most 3 s, as
// warm-up) and checks results, device memory and, if asked, host memory.
void soak(const Context& context, double seconds, bool checkHostMemory, const std::string& phase) {
  CAPTURE(phase);
  // Fresh input and output images every run (as an application streaming frames would), and
  // every tenth run the network's kernels are made again (weights uploaded anew).
  std::unique_ptr<SmallNetwork> network;
  uint64_t runs = 0;
  std::vector<SmallTensor> inputs;
  std::vector<std::vector<double>> expected;
  for (uint32_t i = 0; i < 4; ++i) {
    inputs.push_back(smallRandomInput(1 + i % 2, 13, 9 + i, 11, 500 + i));
    expected.push_back(SmallNetwork::reference(inputs.back()));
  }
  uint64_t failures = 0;
  auto runOne = [&] {
    if (runs % 10 == 0) network = std::make_unique<SmallNetwork>(context, 13);
    const size_t k = runs % inputs.size();
    const double error = smallRelativeL2(
        runSmallNetwork(context, *network, inputs[k], ChannelFormat::float32, "soak"), expected[k]);
    if (!(error <= 1e-5) && failures++ < 5) FAIL_CHECK("run " << runs << ": relative L2 " << error);
    ++runs;
  };

  // Warm-up: pipelines, the allocator's blocks, the temporary-block cache, the driver's and
  // malloc's caches reach their steady state.
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  while (elapsed() < std::min(3.0, seconds / 4)) runOne();
  const uint64_t warmUpRuns = runs;
  const DeviceUsage deviceBaseline = deviceUsage(context);
  const uint64_t rssBaseline = residentBytes();
  uint64_t rssPeak = rssBaseline, deviceMismatches = 0;
#if defined(__SANITIZE_ADDRESS__)
  const size_t heapBaseline = __sanitizer_get_current_allocated_bytes();
  size_t heapPeak = heapBaseline;
#endif
  while (elapsed() < seconds) {
    runOne();
    const DeviceUsage now = deviceUsage(context);
    if (!(now == deviceBaseline) && deviceMismatches++ < 5)
      FAIL_CHECK("run " << runs << ": device memory moved from " << deviceBaseline.liveAllocations
                        << " allocations / " << deviceBaseline.deviceBytesInUse
                        << " bytes in use / " << deviceBaseline.deviceBytesAllocated
                        << " bytes allocated to " << now.liveAllocations << " / "
                        << now.deviceBytesInUse << " / " << now.deviceBytesAllocated);
    rssPeak = std::max(rssPeak, residentBytes());
#if defined(__SANITIZE_ADDRESS__)
    heapPeak = std::max(heapPeak, __sanitizer_get_current_allocated_bytes());
#endif
  }
  const uint64_t rssEnd = residentBytes();
  MESSAGE(phase << ": " << runs << " runs (" << warmUpRuns << " warm-up) in " << elapsed()
                << " s; RSS " << rssBaseline / 1024 << " KiB after warm-up, " << rssEnd / 1024
                << " KiB at the end, " << rssPeak / 1024
                << " KiB peak; device: " << deviceBaseline.liveAllocations << " allocations, "
                << deviceBaseline.deviceBytesAllocated << " bytes");
  CHECK(runs >= warmUpRuns + 20);  // enough runs after warm-up to show a trend
  CHECK(deviceMismatches == 0);
  if (!checkHostMemory) return;
#if defined(__SANITIZE_ADDRESS__)
  const size_t heapEnd = __sanitizer_get_current_allocated_bytes();
  MESSAGE(phase << ": heap in use " << heapBaseline / 1024 << " KiB after warm-up, "
                << heapEnd / 1024 << " KiB at the end, " << heapPeak / 1024 << " KiB peak");
  CHECK(heapPeak <= heapBaseline + (1u << 20));
  CHECK(heapEnd <= heapBaseline + (1u << 20));
#else
  CHECK(rssPeak <= rssBaseline + (8u << 20));
  CHECK(rssEnd <= rssBaseline + (8u << 20));
#endif
}

}  // namespace

TEST_CASE("soak: a network run over and over keeps host and device memory flat") {
  const double seconds = soakSeconds();
  {
    Context validated = makeContext();
    soak(validated, seconds / 4, false, "validated");
  }
  // Without the validation layer, but every message of vkcnn or the driver still fails the test.
  std::atomic<uint64_t> messages{0};
  ContextOptions options;
  options.validation = false;
  options.log = [&messages](LogSeverity severity, std::string_view message) {
    if (severity < LogSeverity::warning) return;
    messages++;
    std::fprintf(stderr, "soak log: %.*s\n", int(message.size()), message.data());
  };
  {
    Context context(options);
    CHECK_FALSE(context.capabilities().validationEnabled);
    soak(context, seconds - seconds / 4, true, "unvalidated");
  }
  CHECK(messages == 0);
}
