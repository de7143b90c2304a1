// Threads: two threads encoding their own CommandBuffers on one Context (weights uploads, images,
// temporaries, commits, waits and polling, host transfers, a shared read-only image, trimming and
// statistics from a third thread), and two Contexts created, used and destroyed on two threads at
// once. Validation is on (its thread-safety checks report unsynchronised use of queues, pools and
// other externally synchronised objects); no message may appear and every result must be right.
// Worker threads use no doctest assertion: they collect failures, the test thread checks them.
#include <atomic>
#include <mutex>
#include <thread>

#include "small_network.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// Everything of severity warning and above, from any thread.
struct Recorder {
  std::mutex mutex;
  std::vector<std::string> messages;
  void add(std::string_view message) {
    std::lock_guard lock(mutex);
    messages.emplace_back(message);
  }
};

ContextOptions recordedOptions(const std::shared_ptr<Recorder>& recorder) {
  ContextOptions options;
  options.validation = kValidation;
  options.log = [recorder](LogSeverity severity, std::string_view message) {
    if (severity >= LogSeverity::warning) recorder->add(message);
  };
  return options;
}

struct Failures {
  std::mutex mutex;
  std::vector<std::string> list;
  void add(const std::string& what) {
    std::lock_guard lock(mutex);
    list.push_back(what);
  }
};

void checkNone(const std::vector<std::string>& list, const char* kind) {
  for (const std::string& m : list) FAIL_CHECK(kind << ": " << m);
}

// One worker's loop: a fresh input and output per iteration, the small network plus a branch that
// reads the shared image, commit, then alternately waitUntilCompleted or polling status().
void worker(const Context& context, uint32_t id, uint32_t iterations, const Image& shared,
            const std::vector<float>& sharedValues, Failures& failures) {
  try {
    const uint32_t channels = id == 0 ? 5 : 13;
    SmallNetwork network(context, channels);
    Neuron copy(context, NeuronDescriptor::of(NeuronType::none));
    Neuron negate(context, NeuronDescriptor::of(NeuronType::linear, -1.0f, 0.0f));
    for (uint32_t i = 0; i < iterations; ++i) {
      const std::string where = "thread " + std::to_string(id) + " iteration " + std::to_string(i);
      const SmallTensor x = smallRandomInput(1 + i % 2, channels, 5 + i % 3, 6, id * 1000 + i);
      Image input(context, {x.w, x.h, x.c, x.n, ChannelFormat::float32});
      writeSmallTensor(input, x);
      Image output(context, {x.w, x.h, network.outputChannels(), x.n, ChannelFormat::float32});
      Image sharedOut(context, {shared.width(), shared.height(), shared.featureChannels(), 1,
                                ChannelFormat::float32});
      CommandBuffer commandBuffer(context, where);
      network.encode(commandBuffer, input, output);
      TemporaryImage t = copy.encode(commandBuffer, shared);  // shared: read by both threads
      negate.encode(commandBuffer, t, sharedOut);
      commandBuffer.commit();
      if (i % 2) {
        commandBuffer.waitUntilCompleted();
      } else {
        while (commandBuffer.status() == CommandBufferStatus::committed) std::this_thread::yield();
        if (commandBuffer.status() != CommandBufferStatus::completed)
          failures.add(where + ": status " + toString(commandBuffer.status()));
      }
      const double error = smallRelativeL2(readAllImages(output), SmallNetwork::reference(x));
      if (!(error <= 1e-5)) failures.add(where + ": relative L2 " + std::to_string(error));
      std::vector<float> negated = sharedOut.readFloats(DataLayout::HeightxWidthxFeatureChannels);
      std::vector<float> direct = shared.readFloats(DataLayout::HeightxWidthxFeatureChannels);
      for (size_t k = 0; k < sharedValues.size(); ++k)
        if (negated[k] != -sharedValues[k] || direct[k] != sharedValues[k]) {
          failures.add(where + ": shared image read wrong at " + std::to_string(k));
          break;
        }
      if (i % 8 == 5) network = SmallNetwork(context, channels);  // weights uploaded again
    }
  } catch (const std::exception& e) {
    failures.add("thread " + std::to_string(id) + " threw: " + e.what());
  }
}

}  // namespace

TEST_CASE("threads: two threads encode their own command buffers on one Context") {
  auto recorder = std::make_shared<Recorder>();
  Failures failures;
  std::weak_ptr<detail::ContextImpl> contextState;
  {
    Context context(recordedOptions(recorder));
    contextState = context.impl();
    const std::vector<float> sharedValues = randomFloats(9 * 4 * 6, 99);
    Image shared(context, {9, 4, 6, 1, ChannelFormat::float32, ImageUsage::all, "shared"});
    shared.writeFloats(sharedValues, DataLayout::HeightxWidthxFeatureChannels);

    std::atomic<bool> done{false};
    std::atomic<uint32_t> housekeeping{0};
    // A third thread does what any thread may do to a Context meanwhile.
    std::thread keeper([&] {
      try {
        while (!done) {
          context.trimTemporaryMemory();
          (void)context.memoryStatistics();
          context.setLogCallback(recordedOptions(recorder).log);
          housekeeping++;
          std::this_thread::sleep_for(std::chrono::milliseconds(3));
        }
      } catch (const std::exception& e) {
        failures.add(std::string("housekeeping thread threw: ") + e.what());
      }
    });
    std::thread first(worker, std::cref(context), 0u, 200u, std::cref(shared),
                      std::cref(sharedValues), std::ref(failures));
    std::thread second(worker, std::cref(context), 1u, 200u, std::cref(shared),
                       std::cref(sharedValues), std::ref(failures));
    first.join();
    second.join();
    done = true;
    keeper.join();
    CHECK(housekeeping > 0);
    context.waitIdle();
    context.trimTemporaryMemory();
  }
  CHECK(contextState.expired());  // nothing leaked a handle; the device was destroyed
  checkNone(failures.list, "failure");
  checkNone(recorder->messages, "log message");
}

TEST_CASE("threads: two Contexts created, used and destroyed on two threads at once") {
  auto recorder = std::make_shared<Recorder>();
  Failures failures;
  auto run = [&](uint32_t id) {
    try {
      for (uint32_t round = 0; round < 2; ++round) {
        Context context(recordedOptions(recorder));
        const std::vector<float> values = randomFloats(3 * 3 * 4, id);
        Image shared(context, {3, 3, 4, 1, ChannelFormat::float32});
        shared.writeFloats(values, DataLayout::HeightxWidthxFeatureChannels);
        Failures local;
        worker(context, id, 40, shared, values, local);
        for (const std::string& f : local.list)
          failures.add("context " + std::to_string(id) + ": " + f);
      }
    } catch (const std::exception& e) {
      failures.add("context thread " + std::to_string(id) + " threw: " + e.what());
    }
  };
  std::thread first(run, 0u), second(run, 1u);
  first.join();
  second.join();
  checkNone(failures.list, "failure");
  checkNone(recorder->messages, "log message");
}

TEST_CASE("threads: one Context names objects while another thread creates and destroys Contexts") {
  // The Vulkan loader's object naming walks its global lists of instances and devices, which
  // Context creation and destruction change; without vkcnn's lock around both this crashed in the
  // loader within a second under ASan (context.cpp, loaderListMutex).
  auto recorder = std::make_shared<Recorder>();
  Failures failures;
  Context context(recordedOptions(recorder));
  std::atomic<bool> done{false};
  uint32_t churned = 0;
  std::thread churn([&] {
    try {
      for (; churned < 24; ++churned) {
        Context other(recordedOptions(recorder));
        Image image(other, {2, 2, 4});
        image.writeFloats(std::vector<float>(16, 1.0f), DataLayout::HeightxWidthxFeatureChannels);
      }
    } catch (const std::exception& e) {
      failures.add(std::string("churn thread threw: ") + e.what());
    }
    done = true;
  });
  uint32_t named = 0;
  try {
    while (!done) {
      Image image(context, {2, 2, 4});  // names a VkImage, its memory and a staging buffer
      image.writeFloats(std::vector<float>(16, 2.0f), DataLayout::HeightxWidthxFeatureChannels);
      ++named;
    }
  } catch (const std::exception& e) {
    failures.add(std::string("naming thread threw: ") + e.what());
  }
  churn.join();
  CHECK(churned == 24);
  CHECK(named > 24);
  checkNone(failures.list, "failure");
  checkNone(recorder->messages, "log message");
}
