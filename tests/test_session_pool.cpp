// SessionPool on one machine's devices: the test device listed twice (two Contexts on it), the
// Fashion-MNIST model. Outputs are bit-identical to one Session of the piece's batch, piece by
// piece, through run() and submit(); a device lost mid-run (a fence timeout of 0, which
// ContextOptions::fenceTimeoutMs turns into a sticky ErrorCode::deviceLost, as test_device_lost
// does for real) leaves the pool and its pieces are run by the other, nothing lost; with every
// device lost, run() and submit() say so. Bad batches and options are errors in the caller's terms.
#include <cstring>
#include <mutex>

#include "test_support.h"
#include "vkcnn/session_pool.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

const std::string kModel = VKCNN_FASHION_MNIST_ONNX;
constexpr uint32_t kPiece = 2;
constexpr size_t kImage = 28 * 28;

// The device the suite's Context runs on, by name, listed twice.
SessionPoolOptions twiceOnTheTestDevice() {
  SessionPoolOptions options;
  const std::string name = context().capabilities().deviceName;
  options.devices = {name, name};
  options.pieceBatch = kPiece;
  options.session.precision = ChannelFormat::float32;
  options.session.context = testContextOptions();
  return options;
}

HostTensor images(uint32_t count, uint32_t seed) {
  return {{int64_t(count), 1, 28, 28}, randomFloats(count * kImage, seed, 0, 1)};
}

// One Session of the piece's batch, run piece by piece: what the pool must give bit for bit.
std::vector<float> expectedOf(const HostTensor& batch, const std::string& output) {
  SessionOptions options;
  options.batch = kPiece;
  options.precision = ChannelFormat::float32;
  Session session(context(), kModel, options);
  std::vector<float> result;
  for (size_t p = 0; p * kPiece * kImage < batch.data.size(); ++p) {
    const auto first = batch.data.begin() + p * kPiece * kImage;
    HostTensor piece{{kPiece, 1, 28, 28}, std::vector<float>(first, first + kPiece * kImage)};
    const auto out = session.run({{session.inputs()[0].name, piece}}).at(output).data;
    result.insert(result.end(), out.begin(), out.end());
  }
  return result;
}

bool bitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// A log for pools whose devices are lost on purpose: vkcnn reports the loss at error severity,
// which the suite's log would count as a failure; validation messages still fail the test.
struct LossLog {
  std::mutex mutex;
  uint64_t validation = 0, losses = 0;
  void operator()(LogSeverity severity, std::string_view message) {
    if (severity < LogSeverity::warning) return;
    std::lock_guard lock(mutex);
    (message.rfind("validation:", 0) == 0 ? validation : losses)++;
  }
};

}  // namespace

TEST_CASE("session pool: run() over two Contexts is bit-identical to one Session, piece by piece") {
  SessionPool pool(kModel, twiceOnTheTestDevice());
  REQUIRE(pool.devices().size() == 2);
  CHECK(pool.liveDevices() == 2);
  CHECK(pool.pieceBatch() == kPiece);
  REQUIRE(pool.inputs().size() == 1);
  const std::string input = pool.inputs()[0].name;
  const HostTensor batch = images(8 * kPiece, 11);
  const auto outputs = pool.run({{input, batch}});
  REQUIRE(outputs.size() == pool.outputs().size());
  for (const SessionTensorInfo& info : pool.outputs()) {
    const HostTensor& out = outputs.at(info.name);
    CHECK(out.shape[0] == 8 * kPiece);
    CHECK(out.data.size() == 8 * info.elementCount);
    CHECK(bitIdentical(out.data, expectedOf(batch, info.name)));
  }
  uint64_t pieces = 0;
  for (const SessionPoolDevice& d : pool.devices()) {
    CHECK_FALSE(d.lost);
    pieces += d.pieces;
    if (d.pieces) CHECK(d.imagesPerSecond > 0);
  }
  CHECK(pieces == 8);
}

TEST_CASE("session pool: submit() streams pieces; each future holds its own piece's outputs") {
  SessionPoolOptions options = twiceOnTheTestDevice();
  options.queueDepth = 1;  // 2 queued at most: the producer waits for the devices
  SessionPool pool(kModel, options);
  const std::string input = pool.inputs()[0].name, output = pool.outputs()[0].name;
  std::vector<HostTensor> pieces;
  std::vector<std::future<std::map<std::string, HostTensor>>> futures;
  for (uint32_t p = 0; p < 6; ++p) {
    pieces.push_back(images(kPiece, 100 + p));
    futures.push_back(pool.submit({{input, pieces.back()}}));
  }
  for (uint32_t p = 0; p < 6; ++p)
    CHECK(bitIdentical(futures[p].get().at(output).data, expectedOf(pieces[p], output)));
  // A bad piece fails its own future with the Session's message, not the pool.
  HostTensor wrong{{1, 1, 28, 28}, std::vector<float>(kImage)};
  auto failed = pool.submit({{input, wrong}});
  CHECK_THROWS_AS(failed.get(), Error);
  CHECK(pool.liveDevices() == 2);
}

TEST_CASE("session pool: bad batches, devices and options are errors that say what to change") {
  SessionPool pool(kModel, twiceOnTheTestDevice());
  const std::string input = pool.inputs()[0].name;
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      const bool invalidArgument = e.code() == ErrorCode::invalidArgument;
      CHECK(invalidArgument);
      return std::string(e.what());
    }
    FAIL("no error");
    return std::string();
  };
  CHECK(message([&] {
          pool.run({{input, images(3, 1)}});
        }).find("SessionPoolOptions::pieceBatch") != std::string::npos);
  CHECK(message([&] { pool.run({}); }).find("'" + input + "' is missing") != std::string::npos);
  HostTensor mislabelled = images(4, 1);
  mislabelled.shape[0] = 6;
  CHECK(message([&] { pool.run({{input, mislabelled}}); }).find("shape") != std::string::npos);
  CHECK(message([&] { pool.context(2); }).find("device 2 does not exist") != std::string::npos);

  SessionPoolOptions options = twiceOnTheTestDevice();
  options.queueDepth = 0;
  CHECK(message([&] { SessionPool unqueued(kModel, options); }).find("queueDepth") !=
        std::string::npos);
  options = twiceOnTheTestDevice();
  options.devices = {"no such device anywhere"};
  try {
    SessionPool bad(kModel, options);
    FAIL("a device that does not exist loaded");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("device 'no such device anywhere'") != std::string::npos);
  }
}

TEST_CASE("session pool: a lost device leaves the pool and its pieces run on the other") {
  auto log = std::make_shared<LossLog>();
  SessionPoolOptions options = twiceOnTheTestDevice();
  options.session.context.log = [log](LogSeverity s, std::string_view m) { (*log)(s, m); };
  SessionPool pool(kModel, options);
  const std::string input = pool.inputs()[0].name, output = pool.outputs()[0].name;
  pool.context(0).setFenceTimeoutMs(0);  // its next wait fails unless the GPU already finished
  // Until device 0 has taken a piece (and lost it): every run's outputs must still be complete.
  for (uint32_t run = 0; run < 20 && pool.liveDevices() == 2; ++run) {
    const HostTensor batch = images(8 * kPiece, 200 + run);
    CHECK(bitIdentical(pool.run({{input, batch}}).at(output).data, expectedOf(batch, output)));
  }
  const auto devices = pool.devices();
  REQUIRE(devices[0].lost);
  CHECK(devices[0].lostReason.find("fenceTimeoutMs") != std::string::npos);
  CHECK_FALSE(devices[1].lost);
  CHECK(pool.liveDevices() == 1);

  // The last device lost: the run's error says so, and later requests fail at once.
  pool.context(1).setFenceTimeoutMs(0);
  try {
    for (uint32_t run = 0; run < 20; ++run) pool.run({{input, images(8 * kPiece, 300)}});
    FAIL("runs succeeded after every device was lost");
  } catch (const Error& e) {
    const bool deviceLost = e.code() == ErrorCode::deviceLost;
    CHECK(deviceLost);
    CHECK(std::string(e.what()).find("every device of the pool was lost") != std::string::npos);
  }
  CHECK(pool.liveDevices() == 0);
  auto late = pool.submit({{input, images(kPiece, 1)}});
  CHECK_THROWS_AS(late.get(), Error);
  CHECK(log->validation == 0);
  CHECK(log->losses > 0);
}
