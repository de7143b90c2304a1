// Session: load from a file and from memory, names and shapes, run() host to host against the
// Graph's own results and a double-precision CPU reference, encode() on the application's Images
// and Buffers, a batch split into chunks from one import, every misuse as a clear Error, the load's
// statistics, and every allocation of a load failing in turn.
#include <unistd.h>
#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/stat.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>

#include <vkcnn/session.h>

#include "onnx_model_builder.h"
#include "test_support.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// Two inputs, two outputs: relu(a + b) and a * b, all [batch, 5, 3, 2] (batch dynamic unless
// fixedBatch).
std::vector<uint8_t> twoInputModel(int64_t fixedBatch = -1) {
  OnnxModelBuilder b(13);
  b.input("a", {fixedBatch, 5, 3, 2}, onnx::TensorProto::FLOAT, {"N"});
  b.input("b", {fixedBatch, 5, 3, 2}, onnx::TensorProto::FLOAT, {"N"});
  b.node("Add", {"a", "b"}, {"sum"});
  b.node("Relu", {"sum"}, {"relu_sum"});
  b.node("Mul", {"a", "b"}, {"product"});
  b.output("relu_sum", 4);
  b.output("product", 4);
  return b.bytes();
}

// x [N, 3, 2, 2] -> 1x1 Conv to `channels` channels with bias -> Relu -> GlobalAveragePool ->
// Flatten: y [N, channels]. Wide enough that one Image holds few images of the convolution's
// output (channels / 4 array layers each).
struct WideModel {
  uint32_t channels;
  std::vector<float> weights, bias;
  std::vector<uint8_t> bytes;

  explicit WideModel(uint32_t c) : channels(c) {
    weights = randomFloats(size_t(c) * 3, 7);
    bias = randomFloats(c, 8);
    OnnxModelBuilder b(13);
    b.input("x", {-1, 3, 2, 2}, onnx::TensorProto::FLOAT, {"N"});
    b.initializer("w", {int64_t(c), 3, 1, 1}, weights);
    b.initializer("bias", {int64_t(c)}, bias);
    b.node("Conv", {"x", "w", "bias"}, {"conv"});
    b.node("Relu", {"conv"}, {"relu"});
    b.node("GlobalAveragePool", {"relu"}, {"pool"});
    b.node("Flatten", {"pool"}, {"y"});
    b.output("y", 2);
    bytes = b.bytes();
  }

  std::vector<double> reference(const std::vector<float>& x, uint32_t batch) const {
    std::vector<double> y(size_t(batch) * channels);
    for (uint32_t n = 0; n < batch; ++n)
      for (uint32_t o = 0; o < channels; ++o) {
        double sum = 0;
        for (uint32_t p = 0; p < 4; ++p) {
          double v = bias[o];
          for (uint32_t i = 0; i < 3; ++i)
            v += double(weights[o * 3 + i]) * x[(size_t(n) * 3 + i) * 4 + p];
          sum += std::max(v, 0.0);
        }
        y[size_t(n) * channels + o] = sum / 4;
      }
    return y;
  }
};

double relativeError(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0, norm = 0;
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

// What the Graph computes for the same inputs, without a Session (the path the Session wraps).
std::vector<std::vector<float>> graphResults(const std::vector<uint8_t>& bytes,
                                             const OnnxImportOptions& options,
                                             const std::vector<std::vector<float>>& inputs) {
  OnnxImport net = importOnnxModelFromMemory(context(), bytes, options);
  std::vector<Image> images;
  for (size_t i = 0; i < inputs.size(); ++i)
    images.push_back(
        makeOnnxImage(context(), net.info.inputs[i], inputs[i], ChannelFormat::float32));
  CommandBuffer cb(context());
  std::vector<Image> outputs = net.graph.encode(cb, images);
  cb.commit();
  cb.waitUntilCompleted();
  std::vector<std::vector<float>> result;
  for (size_t o = 0; o < outputs.size(); ++o)
    result.push_back(readOnnxImage(outputs[o], net.info.outputs[o]));
  return result;
}

template <class F>
std::string errorOf(F&& f, ErrorCode expected) {
  std::string foreign;
  try {
    f();
  } catch (const Error& e) {
    CHECK(std::string(toString(e.code())) == toString(expected));
    return e.what();
  } catch (const std::exception& e) {
    foreign = e.what();
  }
  INFO("a foreign exception escaped (empty: no exception): " << foreign);
  CHECK(false);
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("session: names, shapes and run() agree with the Graph, in both precisions") {
  const std::vector<uint8_t> bytes = twoInputModel();
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(format);
    SessionOptions options;
    options.precision = format;
    options.batch = 3;
    Session session = Session::fromMemory(context(), bytes, options);
    CHECK(session.batch() == 3);
    CHECK(session.chunkSize() == 3);
    CHECK(session.chunks() == 1);
    CHECK((session.precision() == format));
    REQUIRE(session.inputs().size() == 2);
    REQUIRE(session.outputs().size() == 2);
    CHECK(session.inputs()[0].name == "a");
    CHECK(session.inputs()[1].name == "b");
    CHECK(session.outputs()[0].name == "relu_sum");
    CHECK(session.outputs()[1].name == "product");
    CHECK(session.input("b").shape == std::vector<int64_t>{3, 5, 3, 2});
    CHECK(session.output("product").elementCount == 90);
    CHECK(session.input("a").featureChannels == 5);
    CHECK(session.input("a").numberOfImages == 3);

    const std::vector<float> a = randomFloats(90, 1), b = randomFloats(90, 2);
    OnnxImportOptions importOptions;
    importOptions.dynamicBatchSize = 3;
    importOptions.channelFormat = format;
    const auto expected = graphResults(bytes, importOptions, {a, b});
    // Twice: the second run resubmits the recording with new data.
    for (int pass = 0; pass < 2; ++pass) {
      auto outputs = session.run({{"a", {{3, 5, 3, 2}, a}}, {"b", {{}, b}}});
      REQUIRE(outputs.size() == 2);
      CHECK(outputs["relu_sum"].shape == std::vector<int64_t>{3, 5, 3, 2});
      CHECK(outputs["relu_sum"].data == expected[0]);
      CHECK(outputs["product"].data == expected[1]);
    }
    // The span form, into the caller's memory (poisoned first).
    std::vector<float> sum(90, NAN), product(90, NAN);
    const std::vector<std::span<const float>> in{a, b};
    const std::vector<std::span<float>> out{sum, product};
    session.run(in, out);
    CHECK(sum == expected[0]);
    CHECK(product == expected[1]);
  }
}

TEST_CASE("session: SessionOptions::accumulatorPrecision reaches the Graph's convolutions") {
  // float32 storage has no float16 accumulator: the same results with either precision asked.
  const WideModel model(24);
  const std::vector<float> x = randomFloats(2 * 3 * 4, 9);
  std::vector<std::vector<float>> results;
  for (AccumulatorPrecision precision :
       {AccumulatorPrecision::float32, AccumulatorPrecision::float16}) {
    SessionOptions options;
    options.precision = ChannelFormat::float32;
    options.batch = 2;
    options.accumulatorPrecision = precision;
    Session session = Session::fromMemory(context(), model.bytes, options);
    const std::vector<std::string> lines = session.graph().describe();
    const bool accumulating = std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
      return contains(l, "+ float16 accumulators");
    });
    CHECK(accumulating == (precision == AccumulatorPrecision::float16));
    results.push_back(session.run({{"x", {{2, 3, 2, 2}, x}}})["y"].data);
  }
  CHECK(results[0] == results[1]);
}

TEST_CASE("session: a file path, and its errors") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("vkcnn-test-session-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<uint8_t> bytes = twoInputModel(2);
  const auto path = dir / "two.onnx";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  Session session(context(), path.string());
  CHECK(session.batch() == 2);  // the model's fixed batch
  CHECK(session.inputs()[0].shape == std::vector<int64_t>{2, 5, 3, 2});

  // Where the load went: every phase measured, together no more than the whole (exclusive phases);
  // the first run comes after it.
  const SessionLoadStatistics& l = session.loadStatistics();
  CHECK(l.readMs > 0);
  CHECK(l.parseMs > 0);
  CHECK(l.importMs > 0);
  CHECK(l.shapeInferenceMs > 0);
  CHECK(l.optimizeMs > 0);
  CHECK(l.imagesMs > 0);
  CHECK(l.firstRunMs == 0);
  const double phases = l.readMs + l.parseMs + l.checkMs + l.importMs + l.shapeInferenceMs +
                        l.optimizeMs + l.packMs + l.uploadMs + l.imagesMs;
  CHECK(phases <= l.totalMs);
  session.run({{"a", {{}, randomFloats(60, 1)}}, {"b", {{}, randomFloats(60, 2)}}});
  CHECK(session.loadStatistics().firstRunMs > 0);
  CHECK(session.loadStatistics().pipelinesMs <= session.loadStatistics().firstRunMs);
  const double firstRun = session.loadStatistics().firstRunMs;
  session.run({{"a", {{}, randomFloats(60, 1)}}, {"b", {{}, randomFloats(60, 2)}}});
  CHECK(session.loadStatistics().firstRunMs == firstRun);  // the first run's, kept

  std::string m = errorOf([&] { Session s(context(), dir.string()); }, ErrorCode::io);
  CHECK(contains(m, "is a directory"));
  m = errorOf([&] { Session s(context(), (dir / "missing.onnx").string()); }, ErrorCode::io);
  CHECK(contains(m, "missing.onnx: no such file"));
  std::filesystem::remove_all(dir);
}

#if !defined(_WIN32)
TEST_CASE("session: a FIFO with no writer as the model is refused, not waited on") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("vkcnn-test-session-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "model.onnx").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Through Session and through the importer. A regression fails after a minute (a writer then
  // opens the FIFO, which ends each wait) instead of hanging the suite.
  auto refusals = std::async(std::launch::async, [&] {
    return errorOf([&] { Session s(context(), fifo); }, ErrorCode::io) + "\n" +
           errorOf([&] { importOnnx(context(), fifo); }, ErrorCode::io);
  });
  if (refusals.wait_for(std::chrono::seconds(60)) == std::future_status::timeout) {
    while (refusals.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout)
      if (const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK); writer >= 0)
        ::close(writer);
    FAIL("opening a FIFO as the model waited for a writer");
  }
  const std::string m = refusals.get();
  CHECK(contains(m, fifo + " is not a regular file (a FIFO)"));
  CHECK(contains(m, "ONNX model '" + fifo + "' is not a regular file (a FIFO)"));
  // A directory, through the importer (Session's is checked above).
  CHECK(contains(errorOf([&] { importOnnx(context(), dir.string()); }, ErrorCode::io),
                 "ONNX model '" + dir.string() + "' is a directory, not a regular file"));
  std::filesystem::remove_all(dir);
}
#endif

TEST_CASE("session: from a path on its own Context, which starts while the model is parsed") {
  // Weights over 1 KiB: taken out of protobuf's message by the scanner and decoded before the
  // Context is there.
  OnnxModelBuilder b(13);
  b.input("x", {1, 16, 5, 5});
  b.initializer("w", {24, 16, 3, 3}, randomFloats(24 * 16 * 9, 31));
  b.initializer("bias", {24}, randomFloats(24, 32));
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"});
  setAttribute(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"y"});
  b.output("y", 4);
  const std::vector<uint8_t> bytes = b.bytes();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("vkcnn-test-session-own-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "conv.onnx").string();
  auto write = [&](size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(size));
  };
  write(bytes.size());
  SessionOptions options;
  options.precision = ChannelFormat::float32;
  const std::vector<float> x = randomFloats(16 * 25, 33);
  Session given(context(), path, options);
  const std::vector<float> want = given.run({{"x", {{}, x}}})["y"].data;
  REQUIRE(want.size() == 24 * 25);
  CHECK(given.loadStatistics().contextMs == 0);

  int messages = 0;
  options.context.validation = true;
  options.context.log = [&](LogSeverity severity, std::string_view) {
    messages += severity >= LogSeverity::warning;
  };
  {
    Session own(path, options);
    CHECK(own.run({{"x", {{}, x}}})["y"].data == want);
    const SessionLoadStatistics& l = own.loadStatistics();
    CHECK(l.contextMs > 0);
    CHECK(l.contextWaitMs <= l.contextMs);
    CHECK(l.parseMs > 0);
    CHECK(l.importMs > 0);
    CHECK(l.contextWaitMs + l.readMs + l.parseMs + l.importMs <= l.totalMs);
  }
  // The errors of a Context made first: a device that is not there before a missing file; then
  // the file's and the model's own.
  SessionOptions noDevice = options;
  noDevice.context.device = "99999999999999999999999";
  std::string m = errorOf([&] { Session s((dir / "missing.onnx").string(), noDevice); },
                          ErrorCode::invalidArgument);
  CHECK(contains(m, "99999999999999999999999"));
  m = errorOf([&] { Session s((dir / "missing.onnx").string(), options); }, ErrorCode::io);
  CHECK(contains(m, "missing.onnx: no such file"));
  write(bytes.size() - 500);  // cut inside the weights
  m = errorOf([&] { Session s(path, options); }, ErrorCode::invalidModel);
  CHECK(contains(m, "truncated or corrupt; at byte "));
  // Both wrong: the Context's error still comes first, whatever of the model was read before it.
  m = errorOf([&] { Session s(path, noDevice); }, ErrorCode::invalidArgument);
  CHECK(contains(m, "99999999999999999999999"));
  CHECK(!contains(m, "truncated"));
  CHECK(messages == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("session: on its own Context, a model the importer routes to Tensor kernels") {
  // Softmax over W of [1, 3, 4, 5] leaves the image layout: the importer makes a Tensor kernel
  // (TensorSoftmax) while it translates, so that part of the import needs the Context.
  OnnxModelBuilder b(13);
  b.input("x", {1, 3, 4, 5});
  setAttribute(b.node("Softmax", {"x"}, {"y"}), "axis", int64_t(-1));
  b.output("y", 4);
  const std::vector<uint8_t> bytes = b.bytes();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("vkcnn-test-session-tensor-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "softmax.onnx").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  const std::vector<float> x = randomFloats(3 * 4 * 5, 41);
  std::vector<double> want(x.size());
  for (size_t row = 0; row < x.size() / 5; ++row) {
    double sum = 0;
    for (size_t i = 0; i < 5; ++i) sum += std::exp(double(x[row * 5 + i]));
    for (size_t i = 0; i < 5; ++i) want[row * 5 + i] = std::exp(double(x[row * 5 + i])) / sum;
  }
  SessionOptions options;
  options.precision = ChannelFormat::float32;
  int messages = 0;
  options.context.validation = true;
  options.context.log = [&](LogSeverity severity, std::string_view) {
    messages += severity >= LogSeverity::warning;
  };
  {
    Session own(path, options);
    const std::vector<float> y = own.run({{"x", {{}, x}}})["y"].data;
    CHECK(relativeError(y, want) < 1e-5);
    Session given(context(), path, options);
    CHECK(given.run({{"x", {{}, x}}})["y"].data == y);
    CHECK(own.loadStatistics().contextMs > 0);
  }
  CHECK(messages == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "session: on its own Context, an import that needs the device early or late, and errors of "
    "both") {
  // The import runs while the device starts and waits only where it first needs it: a Conv's
  // weights at once, a lone Relu not before the Session's images. Either way the result is the
  // one of a Session on a Context made first; a Context that fails hands its error to whatever
  // waited (the import, or the images) and it comes before the model's own, also when the model's
  // fails first (an unknown operator during the import, a batch the model does not have after it).
  const auto dir = std::filesystem::temp_directory_path() /
                   ("vkcnn-test-session-start-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto save = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = (dir / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return path;
  };
  OnnxModelBuilder early(13);
  early.input("x", {1, 4, 6, 5});
  early.initializer("w", {8, 4, 3, 3}, randomFloats(8 * 4 * 9, 51));
  early.node("Conv", {"x", "w"}, {"y"});
  early.output("y", 4);
  OnnxModelBuilder late(13);
  late.input("x", {1, 4, 6, 5});
  late.node("Relu", {"x"}, {"y"});
  late.output("y", 4);
  OnnxModelBuilder unknown(13);
  unknown.input("x", {1, 4, 6, 5});
  unknown.node("NoSuchOperator", {"x"}, {"y"});
  unknown.output("y", 4);
  const std::string earlyPath = save("early.onnx", early.bytes());
  const std::string latePath = save("late.onnx", late.bytes());
  const std::string unknownPath = save("unknown.onnx", unknown.bytes());

  SessionOptions options;
  options.precision = ChannelFormat::float32;
  int messages = 0;
  options.context.validation = true;
  options.context.log = [&](LogSeverity severity, std::string_view) {
    messages += severity >= LogSeverity::warning;
  };
  const std::vector<float> x = randomFloats(4 * 6 * 5, 52);
  for (const std::string& path : {earlyPath, latePath}) {
    CAPTURE(path);
    Session given(context(), path, options);
    const std::vector<float> want = given.run({{"x", {{}, x}}})["y"].data;
    REQUIRE(!want.empty());
    for (int round = 0; round < 3; ++round) {  // the start and the import race differently
      Session own(path, options);
      CHECK(own.run({{"x", {{}, x}}})["y"].data == want);
      const SessionLoadStatistics& l = own.loadStatistics();
      CHECK(l.contextMs > 0);
      CHECK(l.contextWaitMs >= 0);
      CHECK(l.contextWaitMs <= l.contextMs);
      CHECK(l.contextWaitMs + l.readMs + l.parseMs <= l.totalMs);
    }
  }
  SessionOptions noDevice = options;
  noDevice.context.device = "88888888888888888888888";
  for (const std::string& path : {earlyPath, latePath, unknownPath}) {
    CAPTURE(path);
    const std::string m = errorOf([&] { Session s(path, noDevice); }, ErrorCode::invalidArgument);
    CHECK(contains(m, "88888888888888888888888"));
  }
  std::string m = errorOf([&] { Session s(unknownPath, options); }, ErrorCode::invalidModel);
  CHECK(contains(m, "NoSuchOperator"));
  SessionOptions batch = options;
  batch.batch = 3;
  m = errorOf([&] { Session s(earlyPath, batch); }, ErrorCode::invalidArgument);
  CHECK(contains(m, "batch is fixed at 1"));
  batch.context.device = noDevice.context.device;
  m = errorOf([&] { Session s(earlyPath, batch); }, ErrorCode::invalidArgument);
  CHECK(contains(m, "88888888888888888888888"));
  // Options the Context rejects before anything starts.
  SessionOptions badOptions = options;
  badOptions.context.memoryBlockSize = 1024;
  m = errorOf([&] { Session s(unknownPath, badOptions); }, ErrorCode::invalidArgument);
  CHECK(contains(m, "memoryBlockSize"));
  CHECK(messages == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("session: a batch on a fixed-batch model, and bad inputs, are clear errors") {
  SessionOptions options;
  options.batch = 3;
  std::string m = errorOf([&] { Session::fromMemory(context(), twoInputModel(2), options); },
                          ErrorCode::invalidArgument);
  CHECK(contains(m, "a batch of 3 was asked for, but the model's batch is fixed at 2"));
  options.batch = 2;
  Session session = Session::fromMemory(context(), twoInputModel(2), options);
  options.precision = ChannelFormat::unorm8;
  errorOf([&] { Session::fromMemory(context(), twoInputModel(2), options); },
          ErrorCode::invalidArgument);

  const std::vector<float> good(60, 0.5f), bad(59, 0.5f);
  m = errorOf([&] { session.run({{"a", {{}, good}}}); }, ErrorCode::invalidArgument);
  CHECK(contains(m, "input 'b' [2, 5, 3, 2] was not given"));
  m = errorOf(
      [&] {
        session.run({{"a", {{}, good}}, {"b", {{}, good}}, {"c", {{}, good}}});
      },
      ErrorCode::invalidArgument);
  CHECK(contains(m, "no input 'c' (inputs: 'a', 'b')"));
  m = errorOf(
      [&] {
        session.run({{"a", {{2, 5, 2, 3}, good}}, {"b", {{}, good}}});
      },
      ErrorCode::invalidArgument);
  CHECK(contains(m, "input 'a' is [2, 5, 3, 2] but a tensor of [2, 5, 2, 3] was given"));
  m = errorOf(
      [&] {
        session.run({{"a", {{}, bad}}, {"b", {{}, good}}});
      },
      ErrorCode::invalidArgument);
  CHECK(contains(m, "holds 60 values, not 59"));
  errorOf([&] { (void)session.output("nothing"); }, ErrorCode::invalidArgument);
  // Still usable after the errors.
  auto out = session.run({{"a", {{}, good}}, {"b", {{}, good}}});
  CHECK(out["product"].data == std::vector<float>(60, 0.25f));

  // The importer's messages name the Session's options.
  OnnxModelBuilder dynamic(13);
  dynamic.input("x", {1, 3, -1, 4}, onnx::TensorProto::FLOAT, {"", "", "H", ""});
  dynamic.node("Relu", {"x"}, {"y"});
  dynamic.output("y", 4);
  m = errorOf([&] { Session::fromMemory(context(), dynamic.bytes()); }, ErrorCode::invalidArgument);
  CHECK(contains(m, "SessionOptions::inputShapes"));
  CHECK_FALSE(contains(m, "OnnxImportOptions"));
  SessionOptions dynamicShape;
  dynamicShape.inputShapes["x"] = {1, 3, 2};
  m = errorOf([&] { Session::fromMemory(context(), WideModel(8).bytes, dynamicShape); },
              ErrorCode::invalidArgument);
  CHECK(contains(m, "has rank 4 but [1, 3, 2] was given"));

  // A device index beyond any integer type: a vkcnn::Error, not std::out_of_range.
  SessionOptions deviceOptions;
  deviceOptions.context.device = "99999999999999999999999";
  m = errorOf([&] { Session::fromMemory(twoInputModel(), deviceOptions); },
              ErrorCode::invalidArgument);
  CHECK(contains(m, "99999999999999999999999"));
}

TEST_CASE("session: encode() on the application's Images and Buffers") {
  const std::vector<uint8_t> bytes = twoInputModel();
  SessionOptions options;
  options.precision = ChannelFormat::float32;
  options.batch = 2;
  Session session = Session::fromMemory(context(), bytes, options);
  const std::vector<float> a = randomFloats(60, 3), b = randomFloats(60, 4);
  OnnxImportOptions importOptions;
  importOptions.dynamicBatchSize = 2;
  importOptions.channelFormat = ChannelFormat::float32;
  const auto expected = graphResults(bytes, importOptions, {a, b});

  SUBCASE("Images") {
    OnnxTensorInfo ia = session.modelInfo().inputs[0], ib = session.modelInfo().inputs[1];
    std::vector<Image> inputs{makeOnnxImage(context(), ia, a, ChannelFormat::float16),
                              makeOnnxImage(context(), ib, b, ChannelFormat::float32)};
    std::vector<Image> outputs;
    for (const auto& o : session.outputs()) {
      ImageDescriptor d{o.width, o.height, o.featureChannels, o.numberOfImages,
                        ChannelFormat::float32};
      outputs.emplace_back(context(), d);
      fill(outputs.back(), NAN);
    }
    CommandBuffer cb(context());
    session.encode(cb, inputs, outputs);
    cb.commit();
    cb.waitUntilCompleted();
    // Input a went through float16 storage here.
    const std::vector<float> product = readOnnxImage(outputs[1], session.modelInfo().outputs[1]);
    std::vector<double> want(60);
    for (size_t i = 0; i < 60; ++i) want[i] = roundToHalf(a[i]) * double(b[i]);
    CHECK(relativeError(product, want) < 1e-6);
    CHECK(readOnnxImage(outputs[0], session.modelInfo().outputs[0]).size() == 60);

    std::string m =
        errorOf([&] { session.encode(cb, {inputs[0]}, outputs); }, ErrorCode::invalidArgument);
    CHECK(contains(m, "1 input and 2 output Images were given"));
  }
  SUBCASE("Buffers") {
    std::vector<Buffer> inputs{Buffer(context(), 60 * 4, "a"), Buffer(context(), 60 * 4, "b")};
    inputs[0].writeFloats(a);
    inputs[1].writeFloats(b);
    std::vector<Buffer> outputs{Buffer(context(), 60 * 4, "sum"), Buffer(context(), 64 * 4, "p")};
    const std::vector<float> nan(64, NAN);
    outputs[0].writeFloats(std::span(nan).first(60));
    outputs[1].writeFloats(nan);
    CommandBuffer cb(context());
    session.encode(cb, inputs, outputs);
    cb.commit();
    cb.waitUntilCompleted();
    CHECK(outputs[0].readFloats() == expected[0]);
    const std::vector<float> p = outputs[1].readFloats();
    CHECK(std::vector<float>(p.begin(), p.begin() + 60) == expected[1]);
    CHECK(std::isnan(p[60]));  // nothing written past the tensor

    std::string m = errorOf(
        [&] {
          session.encode(cb, {inputs[0], Buffer(context(), 16, "small")}, outputs);
        },
        ErrorCode::invalidArgument);
    CHECK(contains(m, "input 'b' [2, 5, 3, 2] needs 240 bytes but its Buffer 'small' has 16"));
  }
}

TEST_CASE("session: a wide intermediate image does not cut the batch into chunks") {
  // x (3) -> 1x1 conv (600) + relu -> 1x1 conv (4) -> global average pool -> y (4). The
  // 600-channel image takes 150 array layers per image (13 per Image on a 2048-layer device);
  // the inputs and outputs fit a batch of 30 at once, so the Session encodes it whole and only
  // that image is held in pieces.
  const uint32_t wide = 600, batch = 30;
  const std::vector<float> w1 = randomFloats(size_t(wide) * 3, 21), b1 = randomFloats(wide, 22);
  const std::vector<float> w2 = randomFloats(size_t(4) * wide, 23, -0.1f, 0.1f);
  OnnxModelBuilder b(13);
  b.input("x", {-1, 3, 2, 2}, onnx::TensorProto::FLOAT, {"N"});
  b.initializer("w1", {int64_t(wide), 3, 1, 1}, w1);
  b.initializer("b1", {int64_t(wide)}, b1);
  b.initializer("w2", {4, int64_t(wide), 1, 1}, w2);
  b.node("Conv", {"x", "w1", "b1"}, {"conv1"});
  b.node("Relu", {"conv1"}, {"relu"});
  b.node("Conv", {"relu", "w2"}, {"conv2"});
  b.node("GlobalAveragePool", {"conv2"}, {"pool"});
  b.node("Flatten", {"pool"}, {"y"});
  b.output("y", 2);
  const std::vector<uint8_t> bytes = b.bytes();

  const std::vector<float> x = randomFloats(size_t(batch) * 12, 24);
  std::vector<double> want(size_t(batch) * 4, 0.0);
  for (uint32_t n = 0; n < batch; ++n)
    for (uint32_t p = 0; p < 4; ++p)
      for (uint32_t o = 0; o < wide; ++o) {
        double h = b1[o];
        for (uint32_t i = 0; i < 3; ++i)
          h += double(w1[o * 3 + i]) * x[(size_t(n) * 3 + i) * 4 + p];
        h = std::max(h, 0.0);
        for (uint32_t k = 0; k < 4; ++k)
          want[size_t(n) * 4 + k] += double(w2[k * wide + o]) * h / 4;
      }
  for (ChannelFormat precision : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(precision)));
    SessionOptions options;
    options.precision = precision;
    options.batch = batch;
    Session session = Session::fromMemory(context(), bytes, options);
    CHECK(session.chunks() == 1);
    CHECK(session.graph().maxNumberOfImages() >= batch);
    auto out = session.run({{"x", {{}, x}}});
    CHECK(relativeError(out["y"].data, want) < (precision == ChannelFormat::float32 ? 1e-5 : 3e-3));
  }
}

TEST_CASE("session: a batch too large for one Image runs in chunks from one import") {
  // 600 channels: 150 array layers per image, so an Image holds at most 13 on a device with 2048
  // layers; a batch of 30 becomes 3 chunks of 10.
  const WideModel model(600);
  SessionOptions options;
  options.precision = ChannelFormat::float32;
  options.batch = 30;
  Session session = Session::fromMemory(context(), model.bytes, options);
  const uint32_t most = session.graph().maxNumberOfImages();
  CAPTURE(most);
  REQUIRE(most < 30);
  CHECK(session.chunkSize() <= most);
  CHECK(30 % session.chunkSize() == 0);
  CHECK(session.chunks() > 1);
  CHECK(session.inputs()[0].shape == std::vector<int64_t>{30, 3, 2, 2});
  CHECK(session.inputs()[0].numberOfImages == session.chunkSize());
  CHECK(session.outputs()[0].shape == std::vector<int64_t>{30, 600});
  CHECK(session.graph().statistics().kernels >= 1);

  const std::vector<float> x = randomFloats(30 * 12, 11);
  auto out = session.run({{"x", {{}, x}}});
  CHECK(relativeError(out["y"].data, model.reference(x, 30)) < 1e-5);

  // float16 storage, the same batch.
  options.precision = ChannelFormat::float16;
  Session half = Session::fromMemory(context(), model.bytes, options);
  CHECK(half.chunks() == session.chunks());
  auto outHalf = half.run({{"x", {{}, x}}});
  CHECK(relativeError(outHalf["y"].data, model.reference(x, 30)) < 2e-3);

  // The network alone on the Session's own Images, every chunk in one command buffer.
  for (uint32_t c = 0; c < session.chunks(); ++c) {
    Image output = session.outputImages(c)[0];
    fill(output, NAN);
  }
  CommandBuffer cb(context());
  session.encode(cb);
  cb.commit();
  cb.waitUntilCompleted();
  std::vector<float> all;
  for (uint32_t c = 0; c < session.chunks(); ++c) {
    OnnxTensorInfo info = session.modelInfo().outputs[0];
    info.dims[0] = session.chunkSize();
    info.numberOfImages = session.chunkSize();
    const auto part = readOnnxImage(session.outputImages(c)[0], info);
    all.insert(all.end(), part.begin(), part.end());
  }
  CHECK(relativeError(all, model.reference(x, 30)) < 1e-5);
  errorOf([&] { (void)session.inputImages(session.chunks()); }, ErrorCode::invalidArgument);
}

TEST_CASE(
    "session: each allocation of a load fails cleanly in turn (parallel kernels, batched "
    "uploads)") {
  // Two convolutions: built on two threads where there are two, their weights gathered into one
  // UploadBatch; a failure in any allocation (weights, staging, images, pools) must be a clean
  // outOfMemory that leaves nothing allocated, and the next load must be right.
  OnnxModelBuilder b(13);
  b.input("x", {1, 8, 5, 5});
  b.initializer("w1", {16, 8, 3, 3}, randomFloats(16 * 8 * 9, 21));
  b.initializer("b1", {16}, randomFloats(16, 22));
  b.node("Conv", {"x", "w1", "b1"}, {"c1"});
  b.node("Relu", {"c1"}, {"r1"});
  b.initializer("w2", {4, 16, 1, 1}, randomFloats(64, 23));
  b.node("Conv", {"r1", "w2"}, {"y"});
  b.output("y", 4);
  const std::vector<uint8_t> bytes = b.bytes();
  const std::vector<float> x = randomFloats(8 * 25, 24);
  SessionOptions options;
  options.precision = ChannelFormat::float32;
  Context context = makeContext();
  auto loadAndRun = [&] {
    Session session = Session::fromMemory(context, bytes, options);
    return session.run({{"x", {{}, x}}})["y"].data;
  };
  const std::vector<float> expected = loadAndRun();  // also makes what the Context keeps
  CHECK(expected.size() == 4 * 9);
  context.trimTemporaryMemory();
  const MemoryStatistics baseline = context.memoryStatistics();
  const uint64_t before = baseline.allocationRequests;
  CHECK(loadAndRun() == expected);
  const uint64_t requests = context.memoryStatistics().allocationRequests - before;
  CHECK(requests >= 4);  // weights, staging, images, the temporary pool
  for (uint64_t n = 1; n <= requests; ++n) {
    CAPTURE(n);
    context.injectAllocationFailure(n);
    const std::string m = errorOf([&] { loadAndRun(); }, ErrorCode::outOfMemory);
    CHECK(contains(m, "(injected"));
    context.injectAllocationFailure(0);
    context.trimTemporaryMemory();
    const MemoryStatistics now = context.memoryStatistics();
    CHECK(now.liveAllocations == baseline.liveAllocations);
    CHECK(now.deviceBytesInUse == baseline.deviceBytesInUse);
    CHECK(loadAndRun() == expected);
    context.trimTemporaryMemory();  // the next attempt makes the same requests
  }
  CHECK(context.validationMessageCount() == 0);
}

TEST_CASE("session: weights over several staging chunks, packed on threads, copied unlocked") {
  // Six 1536 -> 1536 1x1 convolutions: 57 MB of float32 weights, more than one 32 MiB staging
  // chunk, built on the load threads, each copying into the region of the chunk it reserved while
  // the others copy theirs; a flush waits for them. Checked against the chain in double.
  constexpr int64_t c = 1536, layers = 6;
  OnnxModelBuilder b(13);
  b.input("x", {1, c, 1, 1});
  std::vector<std::vector<float>> weights;
  std::string previous = "x";
  for (int64_t l = 0; l < layers; ++l) {
    weights.push_back(randomFloats(size_t(c * c), uint32_t(60 + l), -0.05f, 0.05f));
    const std::string w = "w" + std::to_string(l),
                      y = l + 1 == layers ? "y" : "h" + std::to_string(l);
    b.initializer(w, {c, c, 1, 1}, weights.back());
    b.node("Conv", {previous, w}, {y});
    previous = y;
  }
  b.output("y", 4);
  const std::vector<float> x = randomFloats(size_t(c), 70);
  std::vector<double> want(x.begin(), x.end());
  for (const auto& w : weights) {
    std::vector<double> next(size_t(c), 0.0);
    for (int64_t o = 0; o < c; ++o)
      for (int64_t i = 0; i < c; ++i)
        next[size_t(o)] += double(w[size_t(o * c + i)]) * want[size_t(i)];
    want = next;
  }
  SessionOptions options;
  options.precision = ChannelFormat::float32;
  Session session = Session::fromMemory(context(), b.bytes(), options);
  CHECK(session.loadStatistics().uploadBytes >= uint64_t(layers * c * c * 4));
  CHECK(session.loadStatistics().uploadSubmissions >= 2);
  const std::vector<float> got = session.run({{"x", {{}, x}}})["y"].data;
  REQUIRE(got.size() == size_t(c));
  double error = 0, norm = 0;
  for (int64_t o = 0; o < c; ++o) {
    error = std::max(error, std::abs(double(got[size_t(o)]) - want[size_t(o)]));
    norm = std::max(norm, std::abs(want[size_t(o)]));
  }
  CHECK(norm > 0.01);
  CHECK(error <= 1e-4 * norm);
  CHECK(context().validationMessageCount() == 0);
}
