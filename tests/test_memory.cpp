// Device memory control (ContextOptions): block size sized to the device and settable, a budget
// whose excess is an outOfMemory error naming it, an application's allocation callbacks, and
// trimTemporaryMemory() giving every block that holds nothing back; memoryStatistics() shows it.
// Also the first-fit free list both allocators place ranges with (engine/src/memory/free_list.h).

#include <map>
#include <mutex>

#include "memory/free_list.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

constexpr uint64_t MiB = uint64_t(1) << 20;

// ReLU through two temporaries, host transfers in and out (staging buffers); checked on the host.
void runSmallWork(const Context& context, uint32_t size) {
  const std::vector<float> x = randomFloats(size_t(7) * size * size, size);
  const ImageDescriptor descriptor{size, size, 7, 1, ChannelFormat::float32};
  Image input(context, descriptor);
  input.writeFloats(x, DataLayout::FeatureChannelsxHeightxWidth);
  Image output(context, descriptor);
  Neuron relu(context, NeuronDescriptor::relu());
  CommandBuffer commandBuffer(context);
  TemporaryImage a = relu.encode(commandBuffer, input);
  TemporaryImage b = relu.encode(commandBuffer, a);
  relu.encode(commandBuffer, b, output);
  commandBuffer.commit();
  commandBuffer.waitUntilCompleted();
  const std::vector<float> y = output.readFloats(DataLayout::FeatureChannelsxHeightxWidth);
  REQUIRE(y.size() == x.size());
  for (size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == std::max(x[i], 0.f));
}

PFN_vkGetDeviceProcAddr deviceProcAddr(VkInstance instance) {
  auto gipa = vulkanLoader();
  return reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"));
}

}  // namespace

TEST_CASE("memory: a small image costs a small block; the block size is sized to the device") {
  Context context = makeContext();
  const MemoryStatistics empty = context.memoryStatistics();
  CHECK(empty.memoryBlockSize >= 4 * MiB);
  CHECK(empty.memoryBlockSize <= 256 * MiB);
  CHECK((empty.memoryBlockSize & (empty.memoryBlockSize - 1)) == 0);
  CHECK(empty.memoryBudget == 0);

  Image image(context, {8, 8, 3});
  image.writeFloats(std::vector<float>(8 * 8 * 3, 1.f), DataLayout::FeatureChannelsxHeightxWidth);
  context.trimTemporaryMemory();  // the staging buffer of the write
  const MemoryStatistics one = context.memoryStatistics();
  CAPTURE(one.deviceBytesAllocated);
  CHECK(one.deviceBytesAllocated - empty.deviceBytesAllocated <= 4 * MiB);
  CHECK(one.deviceBytesAllocated - empty.deviceBytesAllocated <= empty.memoryBlockSize / 16);
  CHECK(one.peakDeviceBytesAllocated >= one.deviceBytesAllocated);
}

TEST_CASE("memory: ContextOptions::memoryBlockSize bounds the shared blocks") {
  ContextOptions options;
  options.memoryBlockSize = 1 * MiB;
  Context context = makeContext(options);
  CHECK(context.memoryStatistics().memoryBlockSize == 1 * MiB);
  const MemoryStatistics before = context.memoryStatistics();
  // 40 images of 64 KiB (float32, 64x64x4): 2.5 MiB in blocks of at most 1 MiB.
  std::vector<Image> images;
  for (int i = 0; i < 40; ++i) {
    images.emplace_back(context, ImageDescriptor{64, 64, 4, 1, ChannelFormat::float32});
    images.back().writeFloats(std::vector<float>(64 * 64 * 4, float(i)),
                              DataLayout::FeatureChannelsxHeightxWidth);
  }
  context.trimTemporaryMemory();
  const MemoryStatistics after = context.memoryStatistics();
  CHECK(after.deviceBytesInUse - before.deviceBytesInUse >= 40 * 64 * 1024);
  // Every new block is at most 1 MiB: at least 3 of them.
  CHECK(after.memoryObjects - before.memoryObjects >= 3);
  CHECK(after.deviceBytesAllocated - before.deviceBytesAllocated <=
        after.deviceBytesInUse - before.deviceBytesInUse + 1 * MiB);
  for (int i = 0; i < 40; i += 13)
    CHECK(images[size_t(i)].readFloats(DataLayout::FeatureChannelsxHeightxWidth)[17] == float(i));

  ContextOptions tiny;
  tiny.memoryBlockSize = 1000;
  CHECK_THROWS_WITH_AS(makeContext(tiny),
                       doctest::Contains("ContextOptions::memoryBlockSize 1000 is below"), Error);
}

TEST_CASE("memory: a budget is never exceeded; exceeding it is outOfMemory naming the budget") {
  ContextOptions options;
  options.memoryBudget = 3 * MiB;
  options.memoryBlockSize = 1 * MiB;
  Context context = makeContext(options);
  CHECK(context.memoryStatistics().memoryBudget == 3 * MiB);
  runSmallWork(context, 16);  // small work fits

  std::vector<Image> images;
  bool failed = false;
  for (int i = 0; i < 100 && !failed; ++i) {
    try {
      images.emplace_back(context, ImageDescriptor{128, 128, 4, 1, ChannelFormat::float32});
      images.back().writeFloats(std::vector<float>(128 * 128 * 4, 1.f),
                                DataLayout::FeatureChannelsxHeightxWidth);
    } catch (const Error& e) {
      failed = true;
      CHECK((e.code() == ErrorCode::outOfMemory));
      CHECK_MESSAGE(
          std::string(e.what()).find("budget of 3145728 bytes "
                                     "(ContextOptions::memoryBudget") != std::string::npos,
          e.what());
    }
    CHECK(context.memoryStatistics().deviceBytesAllocated <= 3 * MiB);
  }
  CHECK(failed);
  CHECK(context.memoryStatistics().peakDeviceBytesAllocated <= 3 * MiB);
  // Room made, the Context works again, temporaries included.
  images.clear();
  runSmallWork(context, 48);
  CHECK(context.memoryStatistics().peakDeviceBytesAllocated <= 3 * MiB);
}

TEST_CASE("memory: an application hands out the device memory through callbacks") {
  struct Ledger {
    std::mutex mutex;
    std::map<VkDeviceMemory, VkDeviceSize> live;
    uint64_t allocations = 0, frees = 0, bytes = 0;
    bool fail = false;
  };
  auto ledger = std::make_shared<Ledger>();
  ContextOptions options;
  // The functions come from the loader through the Context's instance, which exists only once the
  // Context does; so the callbacks look them up on first use through a shared slot.
  struct Functions {
    VkInstance instance = VK_NULL_HANDLE;
    PFN_vkAllocateMemory allocate = nullptr;
    PFN_vkFreeMemory free = nullptr;
  };
  auto functions = std::make_shared<Functions>();
  options.memoryCallbacks.allocate = [ledger, functions](VkDevice device,
                                                         const VkMemoryAllocateInfo& info,
                                                         VkDeviceMemory* memory) {
    std::lock_guard lock(ledger->mutex);
    if (ledger->fail || !functions->allocate) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    VkResult result = functions->allocate(device, &info, nullptr, memory);
    if (result == VK_SUCCESS) {
      ledger->live[*memory] = info.allocationSize;
      ledger->allocations++;
      ledger->bytes += info.allocationSize;
    }
    return result;
  };
  options.memoryCallbacks.free = [ledger, functions](VkDevice device, VkDeviceMemory memory,
                                                     VkDeviceSize size, uint32_t) {
    std::lock_guard lock(ledger->mutex);
    REQUIRE(ledger->live.count(memory) == 1);
    CHECK(ledger->live[memory] == size);
    ledger->live.erase(memory);
    ledger->frees++;
    ledger->bytes -= size;
    functions->free(device, memory, nullptr);
  };
  {
    Context context = makeContext(options);
    auto gdpa = deviceProcAddr(context.vkInstance());
    {
      std::lock_guard lock(ledger->mutex);
      functions->allocate =
          reinterpret_cast<PFN_vkAllocateMemory>(gdpa(context.vkDevice(), "vkAllocateMemory"));
      functions->free =
          reinterpret_cast<PFN_vkFreeMemory>(gdpa(context.vkDevice(), "vkFreeMemory"));
    }
    runSmallWork(context, 24);
    {
      std::lock_guard lock(ledger->mutex);
      CHECK(ledger->allocations > 0);
      CHECK(ledger->bytes == context.memoryStatistics().deviceBytesAllocated);
      CHECK(ledger->live.size() == context.memoryStatistics().memoryObjects);
    }
    context.trimTemporaryMemory();
    {
      std::lock_guard lock(ledger->mutex);
      CHECK(ledger->frees > 0);
      CHECK(ledger->bytes == context.memoryStatistics().deviceBytesAllocated);
      ledger->fail = true;
    }
    // The application refuses: a clear error, and the Context stays usable.
    CHECK_THROWS_WITH_AS(runSmallWork(context, 24),
                         doctest::Contains("the application's allocate callback"), Error);
    {
      std::lock_guard lock(ledger->mutex);
      ledger->fail = false;
    }
    runSmallWork(context, 24);
  }
  // Everything came back through the application's free.
  CHECK(ledger->live.empty());
  CHECK(ledger->allocations == ledger->frees);

  ContextOptions half;
  half.memoryCallbacks.free = [](VkDevice, VkDeviceMemory, VkDeviceSize, uint32_t) {};
  CHECK_THROWS_WITH_AS(makeContext(half),
                       doctest::Contains("memoryCallbacks: free is set without allocate"), Error);
}

TEST_CASE("memory: trimTemporaryMemory returns every block that holds nothing") {
  Context context = makeContext();
  runSmallWork(context, 8);
  context.trimTemporaryMemory();
  const MemoryStatistics baseline = context.memoryStatistics();
  CHECK(baseline.deviceBytesCached == 0);

  runSmallWork(context, 40);
  const MemoryStatistics kept = context.memoryStatistics();
  // The temporary-pool block, the staging buffers and the images' emptied block are kept.
  CHECK(kept.deviceBytesCached > 0);
  CHECK(kept.deviceBytesAllocated > baseline.deviceBytesAllocated);
  CHECK(kept.liveAllocations > baseline.liveAllocations);  // kept staging buffers, pool block

  context.trimTemporaryMemory();
  const MemoryStatistics trimmed = context.memoryStatistics();
  CHECK(trimmed.deviceBytesCached == 0);
  CHECK(trimmed.deviceBytesAllocated == baseline.deviceBytesAllocated);
  CHECK(trimmed.memoryObjects == baseline.memoryObjects);
  CHECK(trimmed.liveAllocations == baseline.liveAllocations);
}

TEST_CASE("memory: the free list places first fit, aligned, and coalesces what comes back") {
  using Holes = std::map<uint64_t, uint64_t>;
  detail::FreeList list(1000);
  CHECK(list.take(100, 1) == 0u);
  CHECK(list.take(10, 64) == 128u);  // the bytes skipped for alignment stay a hole
  CHECK(list.holes() == Holes{{100, 28}, {138, 862}});
  CHECK(list.take(28, 4) == 100u);  // first fit: the low hole, exactly filled
  CHECK(list.take(900, 1) == std::nullopt);
  CHECK(list.take(862, 2) == 138u);
  CHECK(list.holes().empty());
  list.give(128, 10);
  list.give(0, 100);
  CHECK(list.holes() == Holes{{0, 100}, {128, 10}});
  list.give(100, 28);  // joins both neighbours
  CHECK(list.holes() == Holes{{0, 138}});
  list.give(138, 862);
  CHECK(list.holes() == Holes{{0, 1000}});
  CHECK(list.take(1000, 8) == 0u);
}
