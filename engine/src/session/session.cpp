// Session (session.h): one import and one compile of a model for a batch, its input and output
// Images per chunk of that batch, and the host-mapped Buffers and the recorded command buffer that
// make run() one submission.
//
// The Graph an import builds is batch-agnostic (its tensors are shapes of one image; the batch
// comes from the Images it is encoded on), so a batch too large for one Image is encoded chunk by
// chunk from the same Graph: the model is imported at the whole batch (so every shape check and
// tensor info is the batch's) and never again.
//
// Session is in libvkcnn: a .vkcnn model (told by its magic) is read with the core library alone
// (graph/serialize.h); an ONNX model is imported by libvkcnn_onnx, opened here when one is given
// (session/onnx_entry.h), so that an application that ships compiled models ships no import code.
#include "vkcnn/session.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <future>
#include <new>
#include <optional>
#include <sstream>
#include <thread>

#include "archive/archive.h"
#include "graph/serialize.h"
#include "platform/platform.h"
#include "session/onnx_entry.h"
#include "vkcnn/error.h"
#include "vulkan/context_start.h"
#include "load_clock.h"

namespace vkcnn {
namespace detail {

// libvkcnn_onnx, opened for an ONNX model (session/onnx_entry.h) and kept open while a Session
// made from it lives: the library's code built its Graph.
class OnnxLibrary {
 public:
  OnnxLibrary() {
    const std::string name = VKCNN_ONNX_LIBRARY;
    if (name.empty())
      throw Error(ErrorCode::unsupported,
                  "ONNX import is not in this build of vkcnn (configured with "
                  "VKCNN_WITH_ONNX=OFF): compile the model with `vkcnn compile MODEL.onnx -o "
                  "MODEL.vkcnn` where vkcnn has ONNX, and load the .vkcnn");
    handle_ = platform::openLibrary(name.c_str());
    const auto entry = reinterpret_cast<OnnxEntryFunction>(
        handle_ ? platform::findFunction(handle_, kOnnxEntryName) : nullptr);
    entry_ = entry ? entry() : nullptr;
    if (!entry_ || entry_->version != kOnnxEntryVersion) {
      platform::closeLibrary(handle_);
      throw Error(ErrorCode::unsupported,
                  "ONNX import needs " + name + " beside libvkcnn" +
                      (entry ? " of the same version" : "") +
                      ": install it, or compile the model with `vkcnn compile MODEL.onnx -o "
                      "MODEL.vkcnn` and load the .vkcnn, which needs libvkcnn alone");
    }
  }
  ~OnnxLibrary() { platform::closeLibrary(handle_); }
  OnnxLibrary(const OnnxLibrary&) = delete;
  OnnxLibrary& operator=(const OnnxLibrary&) = delete;
  const OnnxEntry& entry() const { return *entry_; }

 private:
  void* handle_ = nullptr;
  const OnnxEntry* entry_ = nullptr;
};

struct SessionState {
  std::shared_ptr<OnnxLibrary> onnx;  // first: released after the Graph it made
  Context context;
  ChannelFormat precision = ChannelFormat::float16;
  OnnxImport import;
  uint32_t batch = 1, chunk = 1;
  std::vector<SessionTensorInfo> inputs, outputs;
  std::vector<std::vector<Image>> inputImages, outputImages;  // [chunk][input or output]
  // Host-mapped, whole batch, float32 ONNX order; made by the first run().
  std::vector<Buffer> inputBuffers, outputBuffers;
  std::unique_ptr<CommandBuffer> recording;  // run()'s, reusable
  std::string label;
  SessionLoadStatistics load;

  SessionState(Context c, OnnxImport i) : context(std::move(c)), import(std::move(i)) {}
};

}  // namespace detail

namespace {

using Clock = std::chrono::steady_clock;
using detail::LoadPhase;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The library boundary: only vkcnn::Error leaves a Session call.
template <class F>
auto guarded(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::outOfMemory, what + ": out of host memory");
  } catch (const std::exception& e) {
    throw Error(ErrorCode::invalidArgument, what + ": " + e.what());
  }
}

std::string shapeText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string namesText(const std::vector<SessionTensorInfo>& infos) {
  std::string s;
  for (const auto& i : infos) s += (s.empty() ? "'" : ", '") + i.name + "'";
  return s.empty() ? "none" : s;
}

// The model file mapped read-only: no copy of its bytes (weights are most of a model: 100 MB for
// resnet50, 550 MB for vgg16) and no zero-filled buffer before the read. Only a regular file is
// opened (a FIFO given as the model is refused, not waited on).
class ModelFile {
 public:
  explicit ModelFile(const std::string& path) : file_(path, path, {}, true) {}
  std::span<const uint8_t> bytes() const { return file_.bytes(); }

 private:
  platform::MappedFile file_;
};

SessionTensorInfo tensorInfo(const OnnxTensorInfo& info, uint32_t chunks) {
  SessionTensorInfo t;
  t.name = info.name;
  t.shape = info.dims;
  t.elementCount = 1;
  for (int64_t d : info.dims) t.elementCount *= size_t(d);
  t.width = info.width;
  t.height = info.height;
  t.featureChannels = info.featureChannels;
  if (info.numberOfImages % chunks)
    throw Error(ErrorCode::unsupported, "'" + info.name + "' " + shapeText(info.dims) + " holds " +
                                            std::to_string(info.numberOfImages) +
                                            " images, which cannot be split into " +
                                            std::to_string(chunks) + " chunks of the batch");
  t.numberOfImages = info.numberOfImages / chunks;
  return t;
}

OnnxImportOptions importOptions(const SessionOptions& options) {
  if (options.precision != ChannelFormat::float16 && options.precision != ChannelFormat::float32)
    throw Error(ErrorCode::invalidArgument, std::string("precision ") +
                                                toString(options.precision) +
                                                ": a Session stores float16 or float32");
  OnnxImportOptions o;
  o.inputShapes = options.inputShapes;
  o.dynamicBatchSize = options.batch ? options.batch : 1;
  o.channelFormat = options.precision;
  o.optimize = options.optimize;
  o.accumulatorPrecision = options.accumulatorPrecision;
  o.label = options.label;
  o.externalDataDirectory = options.externalDataDirectory;
  return o;
}

// The importer names its own options; a Session's user sets them in SessionOptions.
template <class F>
auto importing(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    std::string message = e.what();
    if (message.rfind("vkcnn: ", 0) == 0) message.erase(0, 7);
    const std::string from = "OnnxImportOptions::", to = "SessionOptions::";
    for (size_t at; (at = message.find(from)) != std::string::npos;)
      message.replace(at, from.size(), to);
    throw Error(e.code(), message);
  }
}

// What a load did before it had its Context (a Session making its own: see loadOwnContext).
struct EarlyLoad {
  std::shared_ptr<detail::OnnxLibrary> onnx;
  // Released once imported (by the library that made it).
  struct Release {
    const detail::OnnxEntry* entry;
    void operator()(detail::onnx_import::PreparedModel* p) const { entry->release(p); }
  };
  std::unique_ptr<detail::onnx_import::PreparedModel, Release> prepared{nullptr, {nullptr}};
  double readMs = 0;
  double preparedMs = 0;  // the parse and the initializers' decoding (importer's work) before it
};

// A .vkcnn file (told by its magic, whatever its name): its Graph and inputs and outputs, as
// compiled. Options it was compiled with cannot change; a batch that differs is refused below.
OnnxImport loadCompiled(const Context& context, std::span<const uint8_t> bytes,
                        const std::string& name) {
  const archive::Archive file = archive::Archive::fromBytes(bytes, name);
  // The convolutions' weights are read where `bytes` are: load() compiles the Graph while they
  // are there.
  return detail::readModel(context, file, true);
}

// `started`: when the load began (before the file was read). `name`: the file's, for messages.
std::unique_ptr<detail::SessionState> load(const Context& context, std::span<const uint8_t> bytes,
                                           const SessionOptions& options, Clock::time_point started,
                                           EarlyLoad* early = nullptr,
                                           const std::string& name = "model in memory") {
  const double readMs = early ? early->readMs : millisecondsSince(started);
  detail::LoadClock& clock = detail::loadClock(context);
  const detail::LoadClockSnapshot before = clock.snapshot();
  const auto importStart = Clock::now();
  const OnnxImportOptions o = importOptions(options);
  std::optional<OnnxImport> import;
  const bool compiled = detail::isCompiledModel(bytes);
  std::shared_ptr<detail::OnnxLibrary> onnx = compiled ? nullptr
                                              : early && early->onnx
                                                  ? early->onnx
                                                  : std::make_shared<detail::OnnxLibrary>();
  importing([&] {
    if (compiled)
      import.emplace(loadCompiled(context, bytes, name));
    else if (early && early->prepared)
      import.emplace(onnx->entry().importPrepared(context, *early->prepared, bytes, o));
    else
      import.emplace(onnx->entry().import(context, bytes, o));
  });
  if (early && early->prepared) {
    early->preparedMs = onnx->entry().preparedMs(*early->prepared);
    early->prepared.reset();  // the parsed model is not needed while kernels are built
  }
  const double importTotalMs = millisecondsSince(importStart);
  const detail::LoadClockSnapshot imported = clock.snapshot().since(before);
  auto s = std::make_unique<detail::SessionState>(context, std::move(*import));
  s->onnx = std::move(onnx);
  s->precision = compiled ? detail::graphOptions(s->import.graph).channelFormat : options.precision;
  s->label = options.label.empty() ? s->import.info.graphName : options.label;
  const auto& info = s->import.info;
  s->batch = info.inputs.empty() ? 1 : info.inputs[0].numberOfImages;
  if (options.batch && s->batch != options.batch)
    throw Error(ErrorCode::invalidArgument,
                "a batch of " + std::to_string(options.batch) +
                    " was asked for, but the model's batch is fixed at " +
                    std::to_string(s->batch) + " (input '" + info.inputs[0].name + "' is " +
                    shapeText(info.inputs[0].dims) + ")");

  Graph& graph = s->import.graph;
  graph.compile();
  const uint32_t most = std::max(1u, graph.maxNumberOfImages());
  s->chunk = s->batch;
  while (s->chunk > most || s->batch % s->chunk) --s->chunk;  // equal chunks that fit
  const uint32_t chunks = s->batch / s->chunk;
  const auto imagesStart = Clock::now();
  for (const auto& in : info.inputs) s->inputs.push_back(tensorInfo(in, chunks));
  for (const auto& out : info.outputs) s->outputs.push_back(tensorInfo(out, chunks));

  for (uint32_t c = 0; c < chunks; ++c) {
    const std::string suffix = chunks > 1 ? " (chunk " + std::to_string(c) + ")" : "";
    std::vector<Image> ins, outs;
    for (const auto& in : s->inputs) {
      ImageDescriptor d{in.width, in.height, in.featureChannels, in.numberOfImages,
                        ChannelFormat::float32};
      d.label = in.name + suffix;
      ins.emplace_back(context, d);
    }
    for (const auto& out : s->outputs) {
      ImageDescriptor d{out.width, out.height, out.featureChannels, out.numberOfImages,
                        s->precision};
      d.label = out.name + suffix;
      outs.emplace_back(context, d);
    }
    s->inputImages.push_back(std::move(ins));
    s->outputImages.push_back(std::move(outs));
  }
  SessionLoadStatistics& l = s->load;
  l.imagesMs = millisecondsSince(imagesStart);
  const detail::LoadClockSnapshot all = clock.snapshot().since(before);
  l.readMs = readMs;
  l.parseMs = all.ms(LoadPhase::parse);
  l.checkMs = all.ms(LoadPhase::check);
  l.shapeInferenceMs = all.ms(LoadPhase::shapeInference);
  // Kernels the importer builds itself upload during the import.
  // A prepared model's parse and decoding ran before importStart; the parse is in parseMs.
  const double earlyMs = early ? early->preparedMs : 0.0;
  l.importMs = std::max(0.0, importTotalMs + earlyMs - l.parseMs - l.checkMs - l.shapeInferenceMs -
                                 imported.ms(LoadPhase::upload));
  if (early) {
    // The Context's own start, and how long the load waited for it (images need the device, so
    // by now it is done).
    const detail::ContextStart start = detail::awaitContext(context);
    l.contextMs = start.ms;
    l.contextWaitMs = std::min(start.waitMs, start.ms);
  }
  l.optimizeMs = all.ms(LoadPhase::optimize);
  l.uploadMs = all.ms(LoadPhase::upload);
  l.packMs = std::max(
      0.0, all.ms(LoadPhase::lower) - (all.ms(LoadPhase::upload) - imported.ms(LoadPhase::upload)));
  l.uploadBytes = all.uploadBytes;
  l.uploadSubmissions = all.uploadSubmissions;
  l.pipelineCacheLoaded = context.pipelineCacheLoaded();
  l.totalMs = millisecondsSince(started);
  return s;
}

// Uploads from `inputs` (whole-batch tensors from byte 0), the network on every chunk, downloads
// into `outputs`.
void encodeThroughBuffers(detail::SessionState& s, CommandBuffer& cb,
                          const std::vector<Buffer>& inputs, const std::vector<Buffer>& outputs) {
  for (size_t c = 0; c < s.inputImages.size(); ++c)
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      BufferToImage upload(s.context);
      upload.label = s.inputs[i].name;
      upload.bufferOffset = c * upload.tensorBytes(s.inputImages[c][i]);
      upload.encode(cb, inputs[i], s.inputImages[c][i]);
    }
  if (s.inputImages.size() == 1)
    s.import.graph.encode(cb, s.inputImages[0], s.outputImages[0]);
  else
    s.import.graph.encodeBatch(cb, s.inputImages, s.outputImages);
  for (size_t c = 0; c < s.outputImages.size(); ++c)
    for (size_t o = 0; o < s.outputs.size(); ++o) {
      ImageToBuffer download(s.context);
      download.label = s.outputs[o].name;
      download.bufferOffset = c * download.tensorBytes(s.outputImages[c][o]);
      Buffer destination = outputs[o];
      download.encode(cb, s.outputImages[c][o], destination);
    }
}

void checkBuffers(const std::vector<SessionTensorInfo>& infos, const std::vector<Buffer>& buffers,
                  const char* what) {
  if (buffers.size() != infos.size())
    throw Error(ErrorCode::invalidArgument, std::to_string(buffers.size()) + " " + what +
                                                " buffers for " + std::to_string(infos.size()) +
                                                " " + what + "s (" + namesText(infos) + ")");
  for (size_t i = 0; i < infos.size(); ++i) {
    if (!buffers[i].valid())
      throw Error(ErrorCode::invalidArgument,
                  std::string(what) + " '" + infos[i].name + "': the Buffer is empty");
    if (buffers[i].size() < infos[i].elementCount * sizeof(float))
      throw Error(ErrorCode::invalidArgument,
                  std::string(what) + " '" + infos[i].name + "' " + shapeText(infos[i].shape) +
                      " needs " + std::to_string(infos[i].elementCount * sizeof(float)) +
                      " bytes but its Buffer '" + buffers[i].label() + "' has " +
                      std::to_string(buffers[i].size()));
  }
}

// A model loaded from a file finds its external data beside it, as importOnnxModel(path) does.
SessionOptions withModelDirectory(const std::string& path, SessionOptions options) {
  if (options.externalDataDirectory.empty()) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    options.externalDataDirectory = parent.empty() ? "." : parent.string();
  }
  return options;
}

// The Context starts on a thread while the file is mapped, parsed, its initializers decoded and
// the model imported: the import holds a Context whose device accessors wait for the start
// (vulkan/context_start.h), so it waits only where it first needs the device (a kernel's
// pipeline or weights). Errors come as they did when the Context was made first: the Context's
// own before the model's. The thread is joined before this returns or throws.
std::unique_ptr<detail::SessionState> loadOwnContext(const std::string& path,
                                                     const SessionOptions& given) {
  const auto started = Clock::now();
  const SessionOptions options = withModelDirectory(path, given);
  // Bad options throw here, before the file is read.
  const Context context = detail::startContext(options.context);
  std::thread starting([&] { detail::finishContext(context, options.context); });
  struct Join {
    std::thread& thread;
    ~Join() {
      if (thread.joinable()) thread.join();
    }
  } join{starting};
  // After a failure of the load: the Context's error, if it failed, goes first.
  auto contextErrorFirst = [&] {
    starting.join();
    detail::awaitContext(context);
  };
  std::optional<ModelFile> file;
  EarlyLoad early;
  try {
    file.emplace(path);
    early.readMs = millisecondsSince(started);
    if (!detail::isCompiledModel(file->bytes())) {
      early.onnx = std::make_shared<detail::OnnxLibrary>();
      const detail::OnnxEntry& entry = early.onnx->entry();
      importing([&] {
        early.prepared = {entry.prepare(file->bytes(), importOptions(options)), {&entry}};
      });
    }
    return load(context, file->bytes(), options, started, &early, "model '" + path + "'");
  } catch (...) {
    contextErrorFirst();
    throw;
  }
}
}  // namespace

Session::Session(std::unique_ptr<detail::SessionState> state) : state_(std::move(state)) {}

Session::Session(const std::string& path, const SessionOptions& options)
    : Session(guarded(path, [&] { return loadOwnContext(path, options); })) {}

Session::Session(const Context& context, const std::string& path, const SessionOptions& options)
    : Session(guarded(path, [&] {
        const auto started = Clock::now();
        const ModelFile file(path);
        return load(context, file.bytes(), withModelDirectory(path, options), started, nullptr,
                    "model '" + path + "'");
      })) {}

Session Session::fromMemory(std::span<const uint8_t> bytes, const SessionOptions& options) {
  return Session(guarded("model in memory", [&] {
    const auto started = Clock::now();
    Context context(options.context);
    return load(context, bytes, options, started);
  }));
}

Session Session::fromMemory(const Context& context, std::span<const uint8_t> bytes,
                            const SessionOptions& options) {
  return Session(
      guarded("model in memory", [&] { return load(context, bytes, options, Clock::now()); }));
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

const Context& Session::context() const {
  return state_->context;
}
const std::vector<SessionTensorInfo>& Session::inputs() const {
  return state_->inputs;
}
const std::vector<SessionTensorInfo>& Session::outputs() const {
  return state_->outputs;
}

const SessionTensorInfo& Session::input(const std::string& name) const {
  for (const auto& i : state_->inputs)
    if (i.name == name) return i;
  throw Error(ErrorCode::invalidArgument,
              "the model has no input '" + name + "' (inputs: " + namesText(state_->inputs) + ")");
}

const SessionTensorInfo& Session::output(const std::string& name) const {
  for (const auto& o : state_->outputs)
    if (o.name == name) return o;
  throw Error(ErrorCode::invalidArgument, "the model has no output '" + name +
                                              "' (outputs: " + namesText(state_->outputs) + ")");
}

uint32_t Session::batch() const {
  return state_->batch;
}
uint32_t Session::chunkSize() const {
  return state_->chunk;
}
ChannelFormat Session::precision() const {
  return state_->precision;
}
const Graph& Session::graph() const {
  return state_->import.graph;
}
const OnnxModelInfo& Session::modelInfo() const {
  return state_->import.info;
}
const SessionLoadStatistics& Session::loadStatistics() const {
  return state_->load;
}

std::map<std::string, HostTensor> Session::run(const std::map<std::string, HostTensor>& inputs) {
  return guarded(state_->label + ": run", [&] {
    auto& s = *state_;
    for (const auto& [name, tensor] : inputs) (void)input(name);  // no unknown names
    std::vector<std::span<const float>> in;
    for (const auto& info : s.inputs) {
      auto it = inputs.find(info.name);
      if (it == inputs.end())
        throw Error(ErrorCode::invalidArgument,
                    "input '" + info.name + "' " + shapeText(info.shape) +
                        " was not given (inputs: " + namesText(s.inputs) + ")");
      const HostTensor& t = it->second;
      if (!t.shape.empty() && t.shape != info.shape)
        throw Error(ErrorCode::invalidArgument, "input '" + info.name + "' is " +
                                                    shapeText(info.shape) + " but a tensor of " +
                                                    shapeText(t.shape) + " was given");
      in.emplace_back(t.data);
    }
    std::map<std::string, HostTensor> result;
    std::vector<std::span<float>> out;
    for (const auto& info : s.outputs) {
      HostTensor& t = result[info.name];
      t.shape = info.shape;
      t.data.resize(info.elementCount);
    }
    for (const auto& info : s.outputs) out.emplace_back(result[info.name].data);
    run(in, out);
    return result;
  });
}

void Session::run(std::span<const std::span<const float>> inputs,
                  std::span<const std::span<float>> outputs) {
  guarded(state_->label + ": run", [&] {
    auto& s = *state_;
    const bool first = s.load.firstRunMs == 0;
    const auto started = Clock::now();
    detail::LoadClock& clock = detail::loadClock(s.context);
    const detail::LoadClockSnapshot before = clock.snapshot();
    if (inputs.size() != s.inputs.size() || outputs.size() != s.outputs.size())
      throw Error(ErrorCode::invalidArgument,
                  std::to_string(inputs.size()) + " inputs and " + std::to_string(outputs.size()) +
                      " outputs were given; the model has " + std::to_string(s.inputs.size()) +
                      " (" + namesText(s.inputs) + ") and " + std::to_string(s.outputs.size()) +
                      " (" + namesText(s.outputs) + ")");
    auto check = [](const SessionTensorInfo& info, size_t size, const char* what) {
      if (size != info.elementCount)
        throw Error(ErrorCode::invalidArgument, std::string(what) + " '" + info.name + "' " +
                                                    shapeText(info.shape) + " holds " +
                                                    std::to_string(info.elementCount) +
                                                    " values, not " + std::to_string(size));
    };
    for (size_t i = 0; i < inputs.size(); ++i) check(s.inputs[i], inputs[i].size(), "input");
    for (size_t o = 0; o < outputs.size(); ++o) check(s.outputs[o], outputs[o].size(), "output");

    if (s.inputBuffers.empty() && s.outputBuffers.empty()) {
      auto shared = [&](const SessionTensorInfo& info, bool input) {
        BufferOptions o;
        o.storageMode = BufferStorageMode::shared;
        // Inputs are only written by the host: device-local mapped memory where there is some.
        o.cpuCacheMode =
            input ? BufferCpuCacheMode::writeCombined : BufferCpuCacheMode::defaultCache;
        o.label = info.name + (input ? " (host input)" : " (host output)");
        return Buffer(s.context, std::max<size_t>(info.elementCount, 1) * sizeof(float), o);
      };
      for (const auto& in : s.inputs) s.inputBuffers.push_back(shared(in, true));
      for (const auto& out : s.outputs) s.outputBuffers.push_back(shared(out, false));
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      std::memcpy(s.inputBuffers[i].contents(), inputs[i].data(), inputs[i].size_bytes());
    try {
      if (!s.recording) {
        CommandBufferOptions reusable;
        reusable.reusable = true;
        s.recording = std::make_unique<CommandBuffer>(s.context, s.label + " run", reusable);
        encodeThroughBuffers(s, *s.recording, s.inputBuffers, s.outputBuffers);
      }
      s.recording->commit();
      s.recording->waitUntilCompleted();
    } catch (...) {
      s.recording.reset();  // a failed recording or submission is not resubmitted
      throw;
    }
    for (size_t o = 0; o < outputs.size(); ++o)
      std::memcpy(outputs[o].data(), s.outputBuffers[o].contents(), outputs[o].size_bytes());
    if (first) {
      const detail::LoadClockSnapshot during = clock.snapshot().since(before);
      s.load.firstRunMs = std::max(1e-6, millisecondsSince(started));
      s.load.pipelinesMs = during.ms(LoadPhase::pipelines);
      s.load.pipelinesCreated = during.pipelinesCreated;
    }
  });
}

void Session::encode(CommandBuffer& commandBuffer, const std::vector<Buffer>& inputs,
                     const std::vector<Buffer>& outputs) {
  guarded(state_->label + ": encode", [&] {
    checkBuffers(state_->inputs, inputs, "input");
    checkBuffers(state_->outputs, outputs, "output");
    encodeThroughBuffers(*state_, commandBuffer, inputs, outputs);
  });
}

void Session::encode(CommandBuffer& commandBuffer, const std::vector<Image>& inputs,
                     const std::vector<Image>& outputs) {
  guarded(state_->label + ": encode", [&] {
    auto& s = *state_;
    if (inputs.size() != s.inputs.size() || outputs.size() != s.outputs.size())
      throw Error(ErrorCode::invalidArgument,
                  std::to_string(inputs.size()) + " input and " + std::to_string(outputs.size()) +
                      " output Images were given; the model has " +
                      std::to_string(s.inputs.size()) + " inputs (" + namesText(s.inputs) +
                      ") and " + std::to_string(s.outputs.size()) + " outputs (" +
                      namesText(s.outputs) + ")");
    const uint32_t most = std::max(1u, s.import.graph.maxNumberOfImages());
    for (const Image& image : inputs)
      if (image.valid() && image.numberOfImages() > most)
        throw Error(ErrorCode::limitExceeded, "Image '" + image.label() + "' holds " +
                                                  std::to_string(image.numberOfImages()) +
                                                  " images; this network's Images hold at most " +
                                                  std::to_string(most) +
                                                  " on this device (encode the batch in chunks)");
    s.import.graph.encode(commandBuffer, inputs, outputs);
  });
}

void Session::encode(CommandBuffer& commandBuffer) {
  guarded(state_->label + ": encode", [&] {
    auto& s = *state_;
    if (s.inputImages.size() == 1)
      s.import.graph.encode(commandBuffer, s.inputImages[0], s.outputImages[0]);
    else
      s.import.graph.encodeBatch(commandBuffer, s.inputImages, s.outputImages);
  });
}

const std::vector<Image>& Session::inputImages(uint32_t chunk) const {
  if (chunk >= state_->inputImages.size())
    throw Error(ErrorCode::invalidArgument, "chunk " + std::to_string(chunk) + " of " +
                                                std::to_string(state_->inputImages.size()));
  return state_->inputImages[chunk];
}

const std::vector<Image>& Session::outputImages(uint32_t chunk) const {
  if (chunk >= state_->outputImages.size())
    throw Error(ErrorCode::invalidArgument, "chunk " + std::to_string(chunk) + " of " +
                                                std::to_string(state_->outputImages.size()));
  return state_->outputImages[chunk];
}

void Session::releaseRecording() {
  state_->recording.reset();
}

}  // namespace vkcnn
