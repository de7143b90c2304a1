// CommandBuffer options: a reusable recording submitted again without re-recording, and GPU
// timestamps per dispatch.
#include <cmath>
#include <cstdlib>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

TEST_CASE("command buffer: a reusable recording runs again on new input data") {
  Tensor first = randomTensor(1, 7, 5, 6, 1), second = randomTensor(1, 7, 5, 6, 2);
  Image input = makeImage(first, ChannelFormat::float32);
  Image output = makePoisoned(context(), {6, 5, 7, 1, ChannelFormat::float32});
  Neuron relu(context(), NeuronDescriptor::relu());
  Neuron scale(context(), NeuronDescriptor::of(NeuronType::linear, 3.f, 1.f));
  CommandBufferOptions options;
  options.reusable = true;
  CommandBuffer cb(context(), "reusable", options);
  TemporaryImage t = relu.encode(cb, input);
  TemporaryImage u = scale.encode(cb, t);
  relu.encode(cb, u, output);
  auto expected = [](const Tensor& x) {
    Tensor y = x;
    for (double& v : y.data) v = std::max(0.0, 3 * std::max(0.0, double(float(v))) + 1);
    return y;
  };
  cb.commit();
  cb.waitUntilCompleted();
  CHECK(relativeL2(download(output), expected(first)) <= 1e-6);
  upload(input, second);
  fill(output, std::nanf(""));
  cb.commit();  // no re-recording
  cb.waitUntilCompleted();
  CHECK(relativeL2(download(output), expected(second)) <= 1e-6);
  CHECK(cb.encodingStatistics().dispatches == 3);
  CommandBuffer once(context());
  once.commit();
  once.waitUntilCompleted();
  VKCNN_CHECK_ERROR(once.commit(), ErrorCode::misuse, "no longer encoding");
}

TEST_CASE("command buffer: a wait that polls the fence first returns with the work done") {
  const uint32_t before = context().waitSpinMicroseconds();
  // The default polls on GPUs only: on a CPU device the poll would take a core from the device.
  if (!std::getenv("VKCNN_WAIT_SPIN_US"))
    CHECK(before == (context().capabilities().deviceType == DeviceType::cpu ? 0u : 2000u));
  const Tensor x = randomTensor(1, 9, 12, 10, 5);
  Image input = makeImage(x, ChannelFormat::float32);
  Neuron relu(context(), NeuronDescriptor::relu());
  Tensor expected = x;
  for (double& v : expected.data) v = std::max(0.0, double(float(v)));
  // Blocking at once; polling for less than the work takes, then blocking; polling to the end.
  for (uint32_t spin : {0u, 1u, 2000000u}) {
    CAPTURE(spin);
    context().setWaitSpinMicroseconds(spin);
    CHECK(context().waitSpinMicroseconds() == spin);
    Image output = makePoisoned(context(), {10, 12, 9, 1, ChannelFormat::float32});
    CommandBuffer cb(context(), "polled");
    relu.encode(cb, input, output);
    cb.commit();
    cb.waitUntilCompleted();
    CHECK((cb.status() == CommandBufferStatus::completed));
    CHECK(relativeL2(download(output), expected) <= 1e-7);
  }
  context().setWaitSpinMicroseconds(before);
}

TEST_CASE("command buffer: profiling gives one timing per dispatch") {
  Image input = makeImage(randomTensor(1, 8, 16, 16, 3), ChannelFormat::float16);
  Image output(context(), {16, 16, 8});
  Neuron relu(context(), NeuronDescriptor::relu());
  relu.label = "first relu";
  Neuron tanh(context(), NeuronDescriptor::of(NeuronType::tanh, 1.f, 1.f));
  CommandBufferOptions options;
  options.profile = true;
  CommandBuffer cb(context(), "profiled", options);
  TemporaryImage t = relu.encode(cb, input);
  tanh.encode(cb, t, output);
  CHECK(cb.kernelTimings().empty());  // nothing before completion
  cb.commit();
  cb.waitUntilCompleted();
  std::vector<KernelTiming> timings = cb.kernelTimings();
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].label.find("first relu") != std::string::npos);
  CHECK(timings[0].startMilliseconds == 0.0);
  CHECK(timings[1].startMilliseconds >= timings[0].startMilliseconds);
  for (const KernelTiming& k : timings) CHECK(k.milliseconds >= 0.0);
  CHECK(cb.gpuMilliseconds() >= timings[1].milliseconds);
}

TEST_CASE("command buffer: profiling by levels times the dispatches between barriers together") {
  const Tensor x = randomTensor(1, 8, 16, 16, 4);
  Image input = makeImage(x, ChannelFormat::float16);
  Image a(context(), {16, 16, 8}), b(context(), {16, 16, 8}), c(context(), {16, 16, 8});
  Neuron relu(context(), NeuronDescriptor::relu());
  relu.label = "relu";
  Neuron tanh(context(), NeuronDescriptor::of(NeuronType::tanh, 1.f, 1.f));
  tanh.label = "tanh";
  {
    // The images laid out first, so that only the data orders the dispatches below.
    CommandBuffer layOut(context());
    for (Image* image : {&a, &b, &c}) relu.encode(layOut, input, *image);
    layOut.commit();
    layOut.waitUntilCompleted();
  }
  fill(c, std::nanf(""));
  CommandBufferOptions options;
  options.profile = true;
  options.profileLevels = true;
  CommandBuffer cb(context(), "levels", options);
  relu.encode(cb, input, a);
  relu.encode(cb, input, b);  // reads what the first one reads: beside it
  tanh.encode(cb, a, c);      // reads what the first one wrote: after a barrier
  cb.commit();
  cb.waitUntilCompleted();
  CHECK(cb.encodingStatistics().dispatches == 3);
  const std::vector<KernelTiming> levels = cb.kernelTimings();
  REQUIRE(levels.size() == 2);
  CHECK(levels[0].dispatches == 2);
  CHECK_MESSAGE(levels[0].label.find("'relu' x2") != std::string::npos, levels[0].label);
  CHECK(levels[1].dispatches == 1);
  CHECK_MESSAGE(levels[1].label.find("'tanh'") != std::string::npos, levels[1].label);
  CHECK(levels[0].startMilliseconds == 0.0);
  CHECK(levels[1].startMilliseconds == doctest::Approx(levels[0].milliseconds));
  for (const KernelTiming& level : levels) CHECK(level.milliseconds >= 0.0);
  CHECK(cb.gpuMilliseconds() == doctest::Approx(levels[0].milliseconds + levels[1].milliseconds));
  // The profiled recording computes what it would unprofiled.
  Tensor expected = x;
  for (double& v : expected.data) v = std::tanh(std::max(0.0, double(float(v))));
  CHECK(relativeL2(download(c), expected) <= 2e-3);
}
