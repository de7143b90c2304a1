// Lost device, provoked for real: a long chain of Neuron dispatches in one command buffer outlasts
// a short fence timeout, which vkcnn turns into a sticky ErrorCode::deviceLost. Every later call
// must throw deviceLost with a message that says why, nothing may hang or crash, and destroying
// everything afterwards must wait for the still-running GPU work instead of freeing memory under
// it (the validation layer, on as always, would report objects destroyed while in use).
#include <chrono>
#include <mutex>

#include "small_network.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// This test's own log: the loss is reported at error severity on purpose, which the shared
// callback (test_support.cpp) would count as a failure. Validation messages still fail the test.
struct Log {
  std::mutex mutex;
  std::vector<std::string> errors;      // vkcnn's own error reports
  std::vector<std::string> validation;  // anything from the validation layer
  void operator()(LogSeverity severity, std::string_view message) {
    if (severity < LogSeverity::warning) return;
    std::lock_guard lock(mutex);
    (message.rfind("validation:", 0) == 0 ? validation : errors).emplace_back(message);
  }
};

}  // namespace

TEST_CASE("device lost: a fence timeout is sticky, later calls say so, teardown is clean") {
  auto log = std::make_shared<Log>();
  ContextOptions options;
  options.validation = kValidation;
  options.log = [log](LogSeverity s, std::string_view m) { (*log)(s, m); };
  const uint32_t w = 192, h = 192, c = 32;
  double jobSeconds = 0;
  Clock::time_point teardownStart;
  std::weak_ptr<detail::ContextImpl> contextState;
  {
    Context context(options);
    contextState = context.impl();
    Image a(context, {w, h, c, 1, ChannelFormat::float32, ImageUsage::all, "ping"});
    Image b(context, {w, h, c, 1, ChannelFormat::float32, ImageUsage::all, "pong"});
    a.writeFloats(randomFloats(size_t(w) * h * c, 5), DataLayout::HeightxWidthxFeatureChannels);
    Neuron step(context, NeuronDescriptor::of(NeuronType::linear, 0.999f, 0.001f));
    // Each dispatch reads what the previous one wrote, so the GPU runs them one after another.
    auto encodeChain = [&](CommandBuffer& commandBuffer, uint32_t dispatches) {
      for (uint32_t i = 0; i < dispatches; ++i)
        step.encode(commandBuffer, i % 2 ? b : a, i % 2 ? a : b);
    };

    // Calibration on this device, with the default timeout: a chain of 0.6 s or more (at least
    // 40 times the 15 ms timeout below, whatever the device's speed and load).
    uint32_t dispatches = 8;
    for (;;) {
      CommandBuffer probe(context, "probe");
      encodeChain(probe, dispatches);
      const auto start = Clock::now();
      probe.commit();
      probe.waitUntilCompleted();
      const double seconds = secondsSince(start);
      if (seconds >= 0.15 || dispatches >= 16384) {
        const double scale = std::max(1.0, 0.6 / seconds);
        dispatches = uint32_t(std::min(20000.0, dispatches * scale));
        jobSeconds = seconds * scale;
        break;
      }
      dispatches *= 4;
    }
    MESSAGE("long job: " << dispatches << " dispatches of " << w << "x" << h << "x" << c
                         << ", about " << jobSeconds << " s");

    CommandBuffer spare(context, "spare");    // made before the loss, used after it
    CommandBuffer polled(context, "polled");  // committed before the loss, polled after it
    step.encode(polled, a, b);
    CommandBuffer job(context, "long job");
    encodeChain(job, dispatches);
    context.setFenceTimeoutMs(15);
    const auto jobStart = Clock::now();
    job.commit();
    polled.commit();  // queued behind the job
    VKCNN_CHECK_ERROR(job.waitUntilCompleted(), ErrorCode::deviceLost,
                      "waiting for command buffer: the GPU did not finish within 15 ms");
    CHECK(secondsSince(jobStart) < 10);  // it returned at the timeout, not at the job's end
    CHECK((job.status() == CommandBufferStatus::error));

    // Sticky: every later use of the Context names the original cause.
    const std::string lost =
        "the Vulkan device was lost earlier (waiting for command buffer: the "
        "GPU did not finish within 15 ms";
    VKCNN_CHECK_ERROR(job.waitUntilCompleted(), ErrorCode::deviceLost, lost);
    CHECK((polled.status() == CommandBufferStatus::error));  // not "committed" forever
    VKCNN_CHECK_ERROR(polled.waitUntilCompleted(), ErrorCode::deviceLost, lost);
    VKCNN_CHECK_ERROR(CommandBuffer(context, "after"), ErrorCode::deviceLost, lost);
    VKCNN_CHECK_ERROR(step.encode(spare, a, b), ErrorCode::deviceLost, lost);
    VKCNN_CHECK_ERROR(step.encode(spare, a), ErrorCode::deviceLost, lost);
    VKCNN_CHECK_ERROR(spare.commit(), ErrorCode::deviceLost, lost);
    VKCNN_CHECK_ERROR(a.writeFloats(std::vector<float>(size_t(w) * h * c),
                                    DataLayout::HeightxWidthxFeatureChannels),
                      ErrorCode::deviceLost, lost);
    VKCNN_CHECK_ERROR(b.readFloats(DataLayout::HeightxWidthxFeatureChannels), ErrorCode::deviceLost,
                      lost);
    Image fresh(context, {4, 4, 4});  // images allocate lazily: creating one touches no device
    VKCNN_CHECK_ERROR(
        fresh.writeFloats(std::vector<float>(64), DataLayout::HeightxWidthxFeatureChannels),
        ErrorCode::deviceLost, lost);
    VKCNN_CHECK_ERROR(Neuron(context, SmallNetwork::preluDescriptor(4)), ErrorCode::deviceLost,
                      lost);  // its weights need an upload
    VKCNN_CHECK_ERROR(context.waitIdle(), ErrorCode::deviceLost, lost);
    const MemoryStatistics statistics = context.memoryStatistics();  // still answers
    CHECK(statistics.liveAllocations > 0);

    // Teardown (the end of this scope: the job's command buffer with its descriptor pools and
    // keep-alives, the images, the kernel, the Context) starts while the GPU still runs the job.
    CHECK(secondsSince(jobStart) < jobSeconds);
    teardownStart = Clock::now();
  }
  const double teardownSeconds = secondsSince(teardownStart);
  MESSAGE("teardown took " << teardownSeconds << " s");
  CHECK(contextState.expired());
  CHECK(teardownSeconds < 10 * jobSeconds + 5);  // it waited for the job at most: no hang
  std::lock_guard lock(log->mutex);
  for (const std::string& m : log->validation) FAIL_CHECK("validation message: " << m);
  REQUIRE(log->errors.size() == 1);  // the loss is reported once
  CHECK(log->errors[0].find("the device is lost (waiting for command buffer: the GPU did not "
                            "finish within 15 ms") != std::string::npos);

  // The process and other Contexts carry on.
  Context other = makeContext();
  SmallNetwork network(other, 5);
  const SmallTensor x = smallRandomInput(1, 5, 6, 7, 3);
  CHECK(smallRelativeL2(runSmallNetwork(other, network, x, ChannelFormat::float32),
                        SmallNetwork::reference(x)) <= 1e-5);
}
