// TemporaryImages: pool reuse and statistics, readCount rules, and every misuse as a clear error.
#include <algorithm>
#include <cmath>
#include <vector>

#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

TEST_CASE("temporary: a chain of 10 equal temporaries needs the memory of about 2") {
  const uint32_t w = 64, h = 64, c = 16;
  Tensor x = randomTensor(1, c, h, w, 3);
  Image input = makeImage(x, ChannelFormat::float32);
  Image output = makePoisoned(context(), {w, h, c, 1, ChannelFormat::float32});
  Neuron addOne(context(), NeuronDescriptor::of(NeuronType::linear, 1.0f, 1.0f));
  CommandBuffer cb(context());
  Image previous = input;
  uint64_t temporarySize = 0;
  for (int i = 0; i < 10; ++i) {
    TemporaryImage next = addOne.encode(cb, previous);  // reading `previous` releases it
    CHECK(next.readCount() == 1);
    temporarySize = next.resourceSize();
    previous = next;
  }
  addOne.encode(cb, previous, output);
  cb.commit();
  cb.waitUntilCompleted();

  TemporaryPoolStatistics stats = cb.temporaryPoolStatistics();
  CHECK(stats.temporariesCreated == 10);
  CHECK(stats.reuses >= 8);
  CHECK(temporarySize >= uint64_t(w) * h * c * 4);
  CHECK(stats.peakBytesInUse <= 2 * temporarySize);
  CHECK(stats.bytesAllocated <= 2 * temporarySize + (128 << 10));  // block granularity
  CHECK(stats.bytesAllocated < 3 * temporarySize);

  Tensor y = download(output);
  Tensor expected = x;
  for (double& v : expected.data) v = double(float(v)) + 11;
  CHECK(relativeL2(y, expected) <= 1e-6);
}

TEST_CASE("temporary: pool memory is recycled by later command buffers") {
  Image input = makeImage(randomTensor(1, 8, 32, 32, 4), ChannelFormat::float16);
  Neuron relu(context(), NeuronDescriptor::relu());
  auto run = [&] {
    CommandBuffer cb(context());
    Image t = relu.encode(cb, input);
    for (int i = 0; i < 3; ++i) t = relu.encode(cb, t);
    Image out(context(), {32, 32, 8});
    relu.encode(cb, t, out);
    cb.commit();
    cb.waitUntilCompleted();
    return cb.temporaryPoolStatistics();
  };
  run();
  const uint64_t before = context().memoryStatistics().deviceBytesAllocated;
  const uint32_t objectsBefore = context().memoryStatistics().memoryObjects;
  for (int i = 0; i < 3; ++i) run();
  // Temporaries drew on the blocks the first command buffer gave back: no new device memory
  // beyond the output images, which fit in the allocator's existing block.
  CHECK(context().memoryStatistics().memoryObjects == objectsBefore);
  CHECK(context().memoryStatistics().deviceBytesAllocated == before);
}

TEST_CASE("temporary: cached blocks stay within the most ever held at once as sizes grow") {
  // Growing inputs, one command buffer each (as a long-running application whose frames grow, or
  // fuzz_descriptors' varied shapes): each needs a larger block than any cached one. The cache
  // must not keep every smaller block: blocks held plus cached stay within the largest pool.
  Neuron relu(context(), NeuronDescriptor::relu());
  std::vector<Image> inputs;
  for (uint32_t w = 16; w <= 128; w += 16)
    inputs.push_back(makeImage(randomTensor(1, 16, w, w, w), ChannelFormat::float32));
  auto run = [&](const Image& input) {
    CommandBuffer cb(context());
    TemporaryImage t = relu.encode(cb, input);
    t.setReadCount(0);  // nothing reads it; its block is what is measured
    cb.commit();
    cb.waitUntilCompleted();
    return cb.temporaryPoolStatistics().bytesAllocated;
  };
  context().trimTemporaryMemory();
  const uint64_t baseline = context().memoryStatistics().deviceBytesInUse;
  uint64_t largestPool = 0, sumOfPools = 0;
  for (const Image& input : inputs) {
    const uint64_t pool = run(input);
    largestPool = std::max(largestPool, pool);
    sumOfPools += pool;
    CAPTURE(input.width());
    CHECK(context().memoryStatistics().deviceBytesInUse - baseline <= largestPool);
  }
  CHECK(sumOfPools > 2 * largestPool);  // without the bound the cache would hold all of them
  // The largest block serves every smaller size again: no new device memory.
  const MemoryStatistics before = context().memoryStatistics();
  for (const Image& input : inputs) run(input);
  CHECK(context().memoryStatistics().memoryObjects == before.memoryObjects);
  CHECK(context().memoryStatistics().deviceBytesAllocated == before.deviceBytesAllocated);
}

TEST_CASE("temporary: command buffers in flight together reuse the cached blocks of both") {
  // Two command buffers hold blocks at the same time; the cache keeps both sets for the next two.
  Neuron relu(context(), NeuronDescriptor::relu());
  Image small = makeImage(randomTensor(1, 16, 32, 32, 1), ChannelFormat::float32);
  Image large = makeImage(randomTensor(1, 16, 64, 64, 2), ChannelFormat::float32);
  auto round = [&] {
    CommandBuffer a(context()), b(context());
    TemporaryImage ta = relu.encode(a, small), tb = relu.encode(b, large);
    ta.setReadCount(0);
    tb.setReadCount(0);
    a.commit();
    b.commit();
    a.waitUntilCompleted();
    b.waitUntilCompleted();
  };
  context().trimTemporaryMemory();
  round();
  const MemoryStatistics before = context().memoryStatistics();
  for (int i = 0; i < 3; ++i) round();
  CHECK(context().memoryStatistics().memoryObjects == before.memoryObjects);
  CHECK(context().memoryStatistics().deviceBytesAllocated == before.deviceBytesAllocated);
}

TEST_CASE("temporary: readCount above 1 keeps the memory until the last read") {
  Tensor x = randomTensor(2, 5, 6, 7, 8);
  Image input = makeImage(x, ChannelFormat::float32);
  Neuron relu(context(), NeuronDescriptor::relu());
  Neuron negate(context(), NeuronDescriptor::of(NeuronType::linear, -1.0f, 0.0f));
  Image a = makePoisoned(context(), {7, 6, 5, 2, ChannelFormat::float32});
  Image b = makePoisoned(context(), {7, 6, 5, 2, ChannelFormat::float32});
  CommandBuffer cb(context());
  TemporaryImage shared = relu.encode(cb, input);
  shared.setReadCount(2);
  negate.encode(cb, shared, a);
  CHECK(shared.readCount() == 1);
  // Another temporary created now must not land on `shared`'s memory.
  TemporaryImage other = relu.encode(cb, input);
  CHECK(cb.temporaryPoolStatistics().reuses == 0);
  negate.encode(cb, other, b);
  CHECK(other.readCount() == 0);
  TemporaryImage third = relu.encode(cb, shared);  // the last read of `shared`
  CHECK(shared.readCount() == 0);
  third.decrementReadCount();  // explicit release without a read
  CHECK(third.readCount() == 0);
  cb.commit();
  cb.waitUntilCompleted();
  Tensor expected = x;
  for (double& v : expected.data) v = -std::max(0.0, double(float(v)));
  CHECK(relativeL2(download(a), expected) == 0.0);
  CHECK(relativeL2(download(b), expected) == 0.0);
}

TEST_CASE("temporary: batch views and channel windows of temporaries") {
  Tensor x = randomTensor(3, 9, 4, 4, 10);
  Image input = makeImage(x, ChannelFormat::float32);
  Neuron copy(context(), NeuronDescriptor::of(NeuronType::none));
  Image out = makePoisoned(context(), {4, 4, 9, 3, ChannelFormat::float32});
  CommandBuffer cb(context());
  TemporaryImage t = copy.encode(cb, input);
  t.setReadCount(2);
  Image firstTwo = t.batchRepresentation({0, 2});
  CHECK(firstTwo.isTemporary());
  copy.clipRect.depth = 2;
  copy.encode(cb, firstTwo, out);  // images 0 and 1
  copy.clipRect = ClipRect{};
  copy.clipRect.z = 2;
  copy.offset.z = 2;
  copy.encode(cb, t, out);  // image 2
  CHECK(t.readCount() == 0);
  cb.commit();
  cb.waitUntilCompleted();
  CHECK(relativeL2(download(out), x) <= 1e-7);
}

TEST_CASE("temporary: misuse is a clear error") {
  Image input = makeImage(randomTensor(1, 4, 3, 3, 11), ChannelFormat::float16);
  Image output(context(), {3, 3, 4});
  Neuron relu(context(), NeuronDescriptor::relu());
  CommandBuffer cb(context(), "first");
  TemporaryImage t = relu.encode(cb, input);

  std::vector<float> data(36);
  VKCNN_CHECK_ERROR(t.readBytes(data.data(), {}), ErrorCode::misuse, "host cannot");
  VKCNN_CHECK_ERROR(t.writeBytes(data.data(), {}), ErrorCode::misuse, "host cannot");

  CommandBuffer other(context(), "second");
  VKCNN_CHECK_ERROR(relu.encode(other, t, output), ErrorCode::misuse, "another command buffer");

  TemporaryImage unwritten(cb,
                           {3, 3, 4, 1, ChannelFormat::float16, ImageUsage::all, "never written"});
  VKCNN_CHECK_ERROR(relu.encode(cb, unwritten, output), ErrorCode::misuse,
                    "before any kernel wrote");

  relu.encode(cb, t, output);  // readCount 1 -> 0
  VKCNN_CHECK_ERROR(relu.encode(cb, t, output), ErrorCode::misuse, "readCount 0");
  VKCNN_CHECK_ERROR(t.decrementReadCount(), ErrorCode::misuse, "already 0");
  VKCNN_CHECK_ERROR(t.setReadCount(3), ErrorCode::misuse, "readCount reached 0");

  TemporaryImage pending = relu.encode(cb, input);
  cb.commit();
  VKCNN_CHECK_ERROR(relu.encode(cb, pending, output), ErrorCode::misuse, "no longer encoding");
  VKCNN_CHECK_ERROR(TemporaryImage(cb, {3, 3, 4}), ErrorCode::misuse, "no longer encoding");
  VKCNN_CHECK_ERROR(TemporaryImage(Image(input)), ErrorCode::invalidArgument, "not a temporary");
  cb.waitUntilCompleted();
  CHECK((cb.status() == CommandBufferStatus::completed));
  other.commit();
  other.waitUntilCompleted();
}
