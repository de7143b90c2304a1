// The on-disk pipeline cache: written, read back by the next Context, and ignored (never trusted)
// when corrupted, truncated or turned off.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>
#include <unistd.h>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {
void runSomething(const Context& c) {
  Image x(c, {4, 4, 5, 1, ChannelFormat::float32});
  Image y(c, {4, 4, 5, 1, ChannelFormat::float32});
  Neuron relu(c, NeuronDescriptor::relu());
  CommandBuffer cb(c);
  relu.encode(cb, x, y);
  cb.commit();
  cb.waitUntilCompleted();
}
}  // namespace

TEST_CASE("pipeline cache: persisted, reloaded, and ignored when damaged") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vkcnn-pipeline-cache-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  setenv("VKCNN_PIPELINE_CACHE_DIR", dir.string().c_str(), 1);
  std::string file;
  {
    Context first = makeContext();
    file = first.pipelineCacheFile();
    CHECK(file.rfind(dir.string(), 0) == 0);
    CHECK_FALSE(first.pipelineCacheLoaded());
    runSomething(first);
  }
  REQUIRE(std::filesystem::exists(file));
  {
    std::ifstream in(file, std::ios::binary);
    char magic[8];
    in.read(magic, 8);
    CHECK(std::string(magic, 8) == "VKCNNPC1");
  }
  {
    Context second = makeContext();
    CHECK(second.pipelineCacheLoaded());
    runSomething(second);
  }
  // Flip one byte of the Vulkan data: the checksum no longer holds, the file is ignored.
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    char last = 0;
    f.seekg(-1, std::ios::end);
    f.read(&last, 1);
    f.seekp(-1, std::ios::end);
    last = char(last ^ 0x5a);
    f.write(&last, 1);
  }
  {
    Context corrupted = makeContext();
    CHECK_FALSE(corrupted.pipelineCacheLoaded());
    runSomething(corrupted);
  }
  std::filesystem::resize_file(file, 20);  // shorter than the header
  {
    Context truncated = makeContext();
    CHECK_FALSE(truncated.pipelineCacheLoaded());
    runSomething(truncated);
    truncated.savePipelineCache();
  }
  {
    Context rewritten = makeContext();
    CHECK(rewritten.pipelineCacheLoaded());
  }
  setenv("VKCNN_PIPELINE_CACHE", "0", 1);
  CHECK(makeContext().pipelineCacheFile().empty());
  unsetenv("VKCNN_PIPELINE_CACHE");
  unsetenv("VKCNN_PIPELINE_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

TEST_CASE("pipeline cache: Contexts on several threads save at once, and the file still loads") {
  // Each writer has its own aside file: with one per process, two Contexts saving at the same
  // moment wrote into the same file and one renamed it while the other was still writing.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("vkcnn-pipeline-cache-threads-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  setenv("VKCNN_PIPELINE_CACHE_DIR", dir.string().c_str(), 1);
  constexpr int kThreads = 4;
  std::vector<Context> contexts;
  for (int i = 0; i < kThreads; ++i) contexts.push_back(makeContext());
  for (const Context& c : contexts) runSomething(c);
  // A save that fails (an aside file renamed away by another writer) is logged, not thrown;
  // validation messages come as warnings or errors: any of them fails the test.
  std::mutex logMutex;
  std::vector<std::string> problems;
  for (Context& c : contexts)
    c.setLogCallback([&](LogSeverity severity, std::string_view message) {
      if (severity >= LogSeverity::warning || message.find("could not write") != message.npos) {
        std::lock_guard lock(logMutex);
        problems.emplace_back(message);
      }
    });
  for (int round = 0; round < 3; ++round) {
    std::latch start(kThreads);
    std::vector<std::thread> savers;
    for (Context& c : contexts)
      savers.emplace_back([&] {
        start.arrive_and_wait();
        c.savePipelineCache();
      });
    for (std::thread& t : savers) t.join();
  }
  contexts.clear();
  CHECK_MESSAGE(problems.empty(), "logged: " << (problems.empty() ? "" : problems[0]));
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().filename().string().find(".tmp") != std::string::npos)
      left.push_back(entry.path().filename().string());
  CHECK_MESSAGE(left.empty(), "aside files left: " << (left.empty() ? "" : left[0]));
  {
    Context reader = makeContext();
    CHECK(reader.pipelineCacheLoaded());
  }
  unsetenv("VKCNN_PIPELINE_CACHE_DIR");
  std::filesystem::remove_all(dir);
}
