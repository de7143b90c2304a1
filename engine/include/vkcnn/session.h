// Session: a model loaded, compiled and ready to run, for applications that want the network as a
// whole rather than its kernels (onnxruntime's InferenceSession over MPSNNGraph). It owns
// load -> compile -> encode -> read:
//   - load: an ONNX file or its bytes, imported once and compiled once for the batch asked for;
//   - inputs() and outputs(): names and ONNX shapes of the whole batch;
//   - run(): host tensors in, host tensors out, in one submission (the inputs copied into
//     host-mapped Buffers, one command buffer that uploads them, runs the network and downloads
//     the outputs, one wait, the outputs copied out; the command buffer is recorded on the first
//     run and resubmitted after);
//   - encode(): the network into the application's CommandBuffer, GPU-resident, on Images or
//     Buffers the application owns (or on the Session's own Images).
// A batch larger than one input or output Image can hold (the device's array-layer limit, 2048
// layers on most) is split into equal chunks of images, each chunk with Images of its own (MPS's
// ImageBatch), all encoded together by the one compiled Graph: one import, one compile, one
// submission. Inside the network only images too wide for the whole batch are split (Graph).
//
// Errors: every failure is a vkcnn::Error naming what was wrong (an input by name, the shape given
// and the shape expected); no other exception leaves a Session call (a std::bad_alloc becomes
// ErrorCode::outOfMemory, any other std:: exception ErrorCode::invalidArgument).
// Threads: a Session is used by one thread at a time; several Sessions may share one Context and
// run on different threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkcnn/buffer.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/export.h"
#include "vkcnn/graph.h"
#include "vkcnn/image.h"
#include "vkcnn/onnx.h"

namespace vkcnn {

namespace detail {
struct SessionState;
}

// How a Session loads its model.
struct SessionOptions {
  // Storage of every intermediate and output image: float16 (the default, half the memory and
  // bandwidth) or float32. Kernels compute in float32 either way; inputs are kept in float32.
  ChannelFormat precision = ChannelFormat::float16;
  // Shapes of named inputs, every dimension listed: how dynamic dimensions get their size. A
  // static dimension given a different size is an error.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  // Images per inference. 0: the model's batch, or 1 where the batch is dynamic. A batch on a
  // model whose batch is fixed at another size is an error (a model cannot be re-batched).
  uint32_t batch = 0;
  // For the Context a Session creates itself (the constructors that take no Context).
  ContextOptions context;
  // GraphOptions::optimize (fusion, folding); off only to debug the optimizer.
  bool optimize = true;
  // GraphOptions::accumulatorPrecision: float16 runs the matrix-unit convolutions with float16
  // accumulators (faster, less accurate); float32 storage ignores it.
  AccumulatorPrecision accumulatorPrecision = AccumulatorPrecision::float32;
  // Of the Graph and of the Session's Vulkan objects; empty: the model's graph name.
  std::string label;
  // Where the files of weights stored as ONNX external data are (locations are relative to it and
  // may not leave it). Empty: the model file's directory; from memory, external data is then an
  // error.
  std::string externalDataDirectory;
};

// One input or output of a Session.
struct SessionTensorInfo {
  std::string name;  // the ONNX input or output name
  // The ONNX shape of the whole batch, every dimension known.
  std::vector<int64_t> shape;
  size_t elementCount = 0;  // the product of shape: floats in a host tensor of it
  // The Images that hold it: each chunk of the batch (Session::chunkSize() images of the batch,
  // numberOfImages Images' worth) is numberOfImages images of width x height x featureChannels.
  // The tensor's elements in row-major order are the images' FeatureChannelsxHeightxWidth data,
  // image after image (onnx.h).
  uint32_t width = 0, height = 0, featureChannels = 0, numberOfImages = 0;
};

// Where the time of loading a Session went, in milliseconds of wall time (`vkcnn bench --cold`
// prints it). Phases are exclusive: together with the rest (Context work, bookkeeping) they make
// totalMs. Loads on other threads that share the Context at the same time add into the phases.
struct SessionLoadStatistics {
  double readMs = 0;            // the model file read into memory (0 from memory)
  double parseMs = 0;           // protobuf parsing
  double checkMs = 0;           // onnx's checker
  double importMs = 0;          // operators translated, constants folded, weights copied out
  double shapeInferenceMs = 0;  // onnx's shape inference, cross-checking the importer's shapes
  double optimizeMs = 0;        // the Graph's rewrites: fusion, folding, concatenation planning
  double packMs = 0;            // kernels built: weights folded and repacked (wall time, on
                                // several threads; uploads excluded)
  double uploadMs = 0;          // weights copied into device memory: the submissions and waits
                                // (the copies into staging count as packing when batched)
  double imagesMs = 0;          // the Session's input and output Images
  double totalMs = 0;           // the whole load (the constructor or fromMemory), and the
                                // Context's creation where the Session makes it
  uint64_t uploadBytes = 0;
  uint64_t uploadSubmissions = 0;
  // The first run(): command buffer recorded (pipelines created on first use, through the
  // Context's pipeline cache), submitted and waited for; 0 until run() was called.
  double firstRunMs = 0;
  double pipelinesMs = 0;  // within firstRunMs
  uint64_t pipelinesCreated = 0;
  // Whether the Context read a pipeline cache file (Context::pipelineCacheLoaded()).
  bool pipelineCacheLoaded = false;
  // A Session that makes its own Context (Session(path, options)) starts its device on a thread
  // while the file is mapped, parsed and imported, until something first needs the device (a
  // kernel's weight layout, usually in packing): contextMs is the Context's creation, overlapped
  // with those phases; contextWaitMs the part the load waited for (counted inside the phase that
  // waited), within totalMs. Both 0 when the application gave the Context.
  double contextMs = 0;
  double contextWaitMs = 0;
};

// A float32 tensor on the host: row-major elements and the ONNX shape.
struct HostTensor {
  std::vector<int64_t> shape;  // the ONNX shape; may be empty on input (the input's is taken)
  std::vector<float> data;     // the product of shape floats, row-major
};

// An ONNX model loaded, compiled and ready to run (the file's top comment says how).
class VKCNN_API Session {
 public:
  // Loads a model on a Context of its own (SessionOptions::context) or on `context`. A path that
  // is missing, unreadable or a directory is Error(io) naming it.
  explicit Session(const std::string& path, const SessionOptions& options = {});
  Session(const Context& context, const std::string& path, const SessionOptions& options = {});
  // The same from a serialized ONNX ModelProto (the bytes need not outlive the call).
  static Session fromMemory(std::span<const uint8_t> bytes, const SessionOptions& options = {});
  static Session fromMemory(const Context& context, std::span<const uint8_t> bytes,
                            const SessionOptions& options = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // The Context it runs on (its own, or the one it was given).
  const Context& context() const;
  // In the order the run() and encode() overloads taking vectors and spans use.
  const std::vector<SessionTensorInfo>& inputs() const;
  const std::vector<SessionTensorInfo>& outputs() const;
  // By name; an unknown name is Error(invalidArgument) listing the names there are.
  const SessionTensorInfo& input(const std::string& name) const;
  const SessionTensorInfo& output(const std::string& name) const;

  // Images per inference: the whole batch run() takes and gives.
  uint32_t batch() const;
  // Images per chunk: batch() when one Image of each input and output holds the batch, else its
  // largest divisor that fits.
  uint32_t chunkSize() const;
  uint32_t chunks() const { return batch() / chunkSize(); }
  ChannelFormat precision() const;
  // The compiled network (statistics(), describe(), intermediateTensorBytes()) and the model's
  // description as imported (opset, producer; its tensor infos describe the whole batch).
  const Graph& graph() const;
  const OnnxModelInfo& modelInfo() const;
  // Where the load's time went, and the first run()'s.
  const SessionLoadStatistics& loadStatistics() const;

  // ---- host to host, one submission each ----

  // Every input by name (shape, if given, must be the input's; data must hold its elementCount
  // floats); returns every output by name.
  std::map<std::string, HostTensor> run(const std::map<std::string, HostTensor>& inputs);
  // Without allocations: inputs()[i] from inputs[i], outputs()[o] into outputs[o], each span
  // exactly elementCount floats. Used by benchmarks to time what an application pays per run.
  void run(std::span<const std::span<const float>> inputs,
           std::span<const std::span<float>> outputs);

  // ---- GPU-resident: encoded into the caller's CommandBuffer, which the caller commits ----

  // On the application's Buffers: inputs[i] holds inputs()[i] as float32 NCHW (ONNX order) from
  // byte 0, the whole batch; outputs[o] receives outputs()[o] the same way. The Session uploads
  // them into Images of its own, runs the network and downloads the outputs (BufferToImage,
  // Graph::encodeBatch, ImageToBuffer). Buffers smaller than their tensor are errors.
  void encode(CommandBuffer& commandBuffer, const std::vector<Buffer>& inputs,
              const std::vector<Buffer>& outputs);
  // On the application's Images, one chunk: inputs[i] and outputs[o] shaped as inputs()[i] and
  // outputs()[o] say (width, height, featureChannels), all with the same numberOfImages (at most
  // chunkSize()), any channel format (Graph::encode checks them).
  void encode(CommandBuffer& commandBuffer, const std::vector<Image>& inputs,
              const std::vector<Image>& outputs);
  // On the Session's own Images (inputImages(), outputImages()): the network alone, every chunk.
  void encode(CommandBuffer& commandBuffer);
  // The Session's own Images of chunk `chunk`, in input and output order: inputs float32, outputs
  // in precision(). run() and encode(CommandBuffer&, Buffers...) go through them too: wait for a
  // command buffer that uses them before calling run(), and commit it only after run() returned.
  const std::vector<Image>& inputImages(uint32_t chunk = 0) const;
  const std::vector<Image>& outputImages(uint32_t chunk = 0) const;

  // Frees the recording run() keeps (and its temporary memory) until the next run().
  void releaseRecording();

 private:
  explicit Session(std::unique_ptr<detail::SessionState> state);
  std::unique_ptr<detail::SessionState> state_;
};

}  // namespace vkcnn
