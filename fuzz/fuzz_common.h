// Shared by the libFuzzer targets: one lavapipe Context per process.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "vkcnn/context.h"

namespace vkcnn::fuzz {

// Validation off unless asked (it costs most of an iteration); a target that must see validation
// messages asks for it and checks validationMessageCount() after every input. One Context for the
// whole process, never made again: that would not give back what the validation layer leaks (as
// measured), and the loader would unload and reload the driver and the layer, whose leaks
// LeakSanitizer could then no longer attribute to them (fuzz/lsan.supp matches by module).
inline Context& context(bool validation = false) {
  static Context c = [&] {
    ContextOptions o;
    if (const char* d = std::getenv("VKCNN_DEVICE"))
      o.device = d;
    else
      o.device = "llvmpipe";
    o.validation = validation;
    return Context(o);
  }();
  return c;
}

// VKCNN_FUZZ_TRACE=N: every N inputs, one line on stderr with the process's resident set and the
// Context's memory statistics, to tell growth inside vkcnn from growth in the driver, the
// validation layer or the sanitizer allocator.
inline void trace(const Context& c) {
  static const uint64_t every = [] {
    const char* e = std::getenv("VKCNN_FUZZ_TRACE");
    return e ? std::strtoull(e, nullptr, 10) : 0;
  }();
  static uint64_t inputs = 0;
  if (!every || ++inputs % every) return;
  long rssKb = -1;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmRSS: %ld", &rssKb) == 1) break;
    std::fclose(f);
  }
  const MemoryStatistics m = c.memoryStatistics();
  std::fprintf(stderr,
               "fuzz-trace inputs=%llu rss_mb=%ld device_mb=%.1f memory_objects=%u live=%u "
               "in_use_mb=%.1f pipelines=%u\n",
               (unsigned long long)inputs, rssKb / 1024, m.deviceBytesAllocated / 1048576.0,
               m.memoryObjects, m.liveAllocations, m.deviceBytesInUse / 1048576.0, m.pipelines);
}

}  // namespace vkcnn::fuzz
