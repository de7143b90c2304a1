// Allocation failure: every device-memory allocation that loading and running a small network
// makes (weights, images, host staging buffers, temporary-pool blocks) is made to fail in turn
// with Context::injectAllocationFailure. Each failure must be a clear ErrorCode::outOfMemory that
// leaves no device memory, Vulkan object or host object behind, and the Context must run the next
// inference correctly. The sanitizer run adds LeakSanitizer on top; the validation layer reports
// any Vulkan object still alive when each test's own Context destroys its device.
#include <functional>
#include <set>

#include "small_network.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

struct Usage {
  uint32_t liveAllocations = 0;
  uint64_t deviceBytesInUse = 0;
  uint32_t memoryObjects = 0;
  uint64_t deviceBytesAllocated = 0;
  bool operator==(const Usage&) const = default;
};

std::ostream& operator<<(std::ostream& o, const Usage& u) {
  return o << "{" << u.liveAllocations << " allocations, " << u.deviceBytesInUse
           << " bytes in use, " << u.memoryObjects << " memory objects, " << u.deviceBytesAllocated
           << " bytes}";
}

Usage usage(const Context& context) {
  MemoryStatistics m = context.memoryStatistics();
  return {m.liveAllocations, m.deviceBytesInUse, m.memoryObjects, m.deviceBytesAllocated};
}

SmallTensor inputFor(ChannelFormat format, uint32_t seed) {
  SmallTensor x = smallRandomInput(2, 13, 7, 9, seed);
  if (format == ChannelFormat::float16)
    for (float& v : x.data) v = float(roundToHalf(v));
  return x;
}

// Loads the network (its weights) and runs it once, from scratch.
std::vector<float> loadAndRun(const Context& context, const SmallTensor& x, ChannelFormat format) {
  SmallNetwork network(context, x.c);
  return runSmallNetwork(context, network, x, format, "faults");
}

// "vkcnn: <site>: allocation of ..." -> "<site>"
std::string siteOf(const std::string& message) {
  const std::string prefix = "vkcnn: ";
  const size_t end = message.find(": allocation of ");
  if (message.rfind(prefix, 0) != 0 || end == std::string::npos) return message;
  return message.substr(prefix.size(), end - prefix.size());
}

}  // namespace

TEST_CASE("faults: each allocation of a network's load and run fails cleanly in turn") {
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(format);
    std::weak_ptr<detail::ContextImpl> contextState;
    {
      Context context = makeContext();
      contextState = context.impl();
      const SmallTensor x = inputFor(format, 7);
      const std::vector<double> expected = SmallNetwork::reference(x);

      // Warm-up: makes what a Context keeps for good (its empty buffer, pipelines, one block per
      // memory type), so that the baseline below is what every later run must return to.
      CHECK(smallRelativeL2(loadAndRun(context, x, format), expected) <= tolerance(format));
      context.trimTemporaryMemory();
      const Usage baseline = usage(context);

      const uint64_t before = context.memoryStatistics().allocationRequests;
      loadAndRun(context, x, format);
      const uint64_t requests = context.memoryStatistics().allocationRequests - before;
      context.trimTemporaryMemory();
      CHECK(usage(context) == baseline);
      // PReLU slopes and the staging buffer for their upload (trimTemporaryMemory emptied the
      // Context's staging pool; every later transfer of this run reuses that buffer), the input
      // image, the output image, one temporary-pool block (both temporaries fit in its 64 KiB).
      // Failing staging buffers of image transfers: the test case below.
      CHECK(requests == 5);

      std::set<std::string> sites;
      for (uint64_t n = 1; n <= requests; ++n) {
        CAPTURE(n);
        context.injectAllocationFailure(n);
        bool failed = false;
        try {
          loadAndRun(context, x, format);
        } catch (const Error& e) {
          failed = true;
          CHECK((e.code() == ErrorCode::outOfMemory));
          CHECK_MESSAGE(std::string(e.what()).find("bytes of device memory failed (injected") !=
                            std::string::npos,
                        e.what());
          sites.insert(siteOf(e.what()));
        }
        CHECK_MESSAGE(failed, "request " << n << " of " << requests << " did not fail");
        context.injectAllocationFailure(0);
        context.trimTemporaryMemory();
        CHECK(usage(context) == baseline);

        // The Context is fit for the next inference, and that one leaves nothing behind either.
        CHECK(smallRelativeL2(loadAndRun(context, x, format), expected) <= tolerance(format));
        context.trimTemporaryMemory();
        CHECK(usage(context) == baseline);
      }

      // One past the last request: the run completes and the injection stays armed.
      context.injectAllocationFailure(requests + 1);
      CHECK(smallRelativeL2(loadAndRun(context, x, format), expected) <= tolerance(format));
      context.injectAllocationFailure(0);

      // Every kind of allocation was among those that failed.
      for (const char* site :
           {"neuron prelu PReLU slopes", "staging buffer for neuron prelu PReLU slopes",
            "image 'faults input' (9x7x13, 2 images)", "image 'faults output' (9x7x26, 2 images)",
            "temporary image pool"})
        CHECK_MESSAGE(sites.count(site) == 1, "no injected failure at " << site);
      CHECK(sites.size() == 5);
    }
    // No handle (image, buffer, command buffer) kept the Context alive: it is gone, and its
    // vkDestroyDevice let the validation layer check that no Vulkan object was left behind.
    CHECK(contextState.expired());
  }
}

TEST_CASE("faults: an encode that ran out of memory can be encoded again in the same buffer") {
  std::weak_ptr<detail::ContextImpl> contextState;
  {
    Context context = makeContext();
    contextState = context.impl();
    const SmallTensor x = inputFor(ChannelFormat::float32, 11);
    const std::vector<double> expected = SmallNetwork::reference(x);
    SmallNetwork network(context, x.c);
    Image input(context, {x.w, x.h, x.c, x.n, ChannelFormat::float32});
    writeSmallTensor(input, x);
    const ImageDescriptor outputDescriptor{x.w, x.h, 2 * x.c, x.n, ChannelFormat::float32};

    // The requests the encoding itself makes: a temporary-pool block and the output image.
    uint64_t requests = 0;
    {
      Image output(context, outputDescriptor);
      CommandBuffer commandBuffer(context);
      const uint64_t before = context.memoryStatistics().allocationRequests;
      network.encode(commandBuffer, input, output);
      requests = context.memoryStatistics().allocationRequests - before;
      commandBuffer.commit();
      commandBuffer.waitUntilCompleted();
    }
    context.trimTemporaryMemory();
    const Usage baseline = usage(context);
    CHECK(requests == 2);

    for (uint64_t n = 1; n <= requests; ++n) {
      CAPTURE(n);
      {
        Image output(context, outputDescriptor);
        CommandBuffer commandBuffer(context);
        context.injectAllocationFailure(n);
        VKCNN_CHECK_ERROR(network.encode(commandBuffer, input, output), ErrorCode::outOfMemory,
                          "(injected by Context::injectAllocationFailure)");
        context.injectAllocationFailure(0);
        CHECK((commandBuffer.status() == CommandBufferStatus::encoding));
        // What the failed attempt encoded stays valid; encoding the network again completes it.
        network.encode(commandBuffer, input, output);
        commandBuffer.commit();
        commandBuffer.waitUntilCompleted();
        CHECK(smallRelativeL2(readAllImages(output), expected) <= 1e-5);
      }
      context.trimTemporaryMemory();
      CHECK(usage(context) == baseline);
    }

    // A command buffer dropped right after the failure, never committed, leaves nothing either.
    for (uint64_t n = 1; n <= requests; ++n) {
      CAPTURE(n);
      {
        Image output(context, outputDescriptor);
        CommandBuffer commandBuffer(context);
        context.injectAllocationFailure(n);
        VKCNN_CHECK_ERROR(network.encode(commandBuffer, input, output), ErrorCode::outOfMemory,
                          "injected");
        context.injectAllocationFailure(0);
      }
      context.trimTemporaryMemory();
      CHECK(usage(context) == baseline);
    }
  }
  CHECK(contextState.expired());
}

TEST_CASE("faults: a host transfer whose staging buffer cannot be allocated fails cleanly") {
  std::weak_ptr<detail::ContextImpl> contextState;
  {
    Context context = makeContext();
    contextState = context.impl();
    const std::vector<float> values = randomFloats(9 * 7 * 13, 3);
    Image image(context, {9, 7, 13, 2, ChannelFormat::float16, ImageUsage::all, "streamed"});
    Buffer buffer(context, 64, "device");
    image.writeFloats(values, DataLayout::FeatureChannelsxHeightxWidth, 1);  // allocates it
    // An empty staging pool, so that each transfer below must allocate its staging buffer.
    context.trimTemporaryMemory();
    const Usage baseline = usage(context);
    const std::vector<std::function<void()>> transfers = {
        [&] { image.writeFloats(values, DataLayout::FeatureChannelsxHeightxWidth, 0); },
        [&] { (void)image.readFloats(DataLayout::FeatureChannelsxHeightxWidth, 1); },
        [&] { buffer.writeFloats(std::vector<float>(16, 2.0f)); },
        [&] { (void)buffer.readFloats(); },
    };
    const char* sites[] = {"staging buffer for streamed", "staging buffer for streamed",
                           "staging buffer for device", "staging buffer for device"};
    for (size_t t = 0; t < transfers.size(); ++t) {
      CAPTURE(t);
      context.injectAllocationFailure(1);
      VKCNN_CHECK_ERROR(transfers[t](), ErrorCode::outOfMemory,
                        std::string(sites[t]) + ": allocation of");
      context.injectAllocationFailure(0);
      CHECK(usage(context) == baseline);
      transfers[t]();  // works again, and its staging buffer goes back to the pool
      context.trimTemporaryMemory();
      CHECK(usage(context) == baseline);
    }
    CHECK(image.readFloats(DataLayout::FeatureChannelsxHeightxWidth, 0) ==
          image.readFloats(DataLayout::FeatureChannelsxHeightxWidth, 1));
    CHECK(buffer.readFloats() == std::vector<float>(16, 2.0f));
  }
  CHECK(contextState.expired());
}

TEST_CASE("faults: injection counts requests of every kind and disarms") {
  Context context = makeContext();
  const uint64_t before = context.memoryStatistics().allocationRequests;
  Image image(context, {4, 4, 4, 1, ChannelFormat::float32, ImageUsage::all, "lazy"});
  CHECK(context.memoryStatistics().allocationRequests == before);  // images allocate lazily
  context.injectAllocationFailure(1);
  VKCNN_CHECK_ERROR(
      image.writeFloats(std::vector<float>(64, 1.0f), DataLayout::HeightxWidthxFeatureChannels),
      ErrorCode::outOfMemory, "image 'lazy' (4x4x4, 1 image): allocation of");
  CHECK(context.memoryStatistics().allocationRequests == before + 1);
  // The image stayed usable: the next write allocates and succeeds.
  image.writeFloats(std::vector<float>(64, 1.5f), DataLayout::HeightxWidthxFeatureChannels);
  CHECK(image.readFloats(DataLayout::HeightxWidthxFeatureChannels) == std::vector<float>(64, 1.5f));
  // Disarmed: nothing fails any more.
  context.injectAllocationFailure(5);
  context.injectAllocationFailure(0);
  for (int i = 0; i < 6; ++i) {
    Image other(context, {4, 4, 4, 1, ChannelFormat::float32});
    other.writeFloats(std::vector<float>(64, 2.0f), DataLayout::HeightxWidthxFeatureChannels);
  }
}
