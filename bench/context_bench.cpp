// What creating a Context costs, step by step (issue #13): creates and destroys a Context N
// times in one process (argument 1, default 3) and prints the breakdown each logs at info
// (loader, instance, device choice and features, device, capabilities, pipeline cache and common
// objects) and the destructor's time (it writes the pipeline cache). The pipeline cache follows
// VKCNN_PIPELINE_CACHE_DIR as in every Context. Not a test: it times, and means something only
// on the GPU machine.
#include <vkcnn/context.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  try {
    for (int i = 0; i < count; ++i) {
      vkcnn::ContextOptions options;
      std::string breakdown;
      options.log = [&](vkcnn::LogSeverity severity, std::string_view message) {
        if (message.rfind("Context created", 0) == 0)
          breakdown = std::string(message);
        else if (severity >= vkcnn::LogSeverity::warning)
          std::fprintf(stderr, "vkcnn: %.*s\n", int(message.size()), message.data());
      };
      const auto start = Clock::now();
      std::optional<vkcnn::Context> context(std::in_place, options);
      const auto created = Clock::now();
      const std::string device = context->capabilities().deviceName;
      context.reset();
      const auto destroyed = Clock::now();
      std::printf("context %d on %s: constructor %.1f ms, destructor %.1f ms\n  %s\n", i + 1,
                  device.c_str(), ms(start, created), ms(created, destroyed), breakdown.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkcnn-bench-context: %s\n", e.what());
    return 1;
  }
  return 0;
}
