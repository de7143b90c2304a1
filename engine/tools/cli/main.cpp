// The vkcnn command-line tool: info, run, bench, profile.
#include <vkcnn/onnx.h>
#include <vkcnn/vkcnn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "npy.h"
#include "picture.h"

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

const char* kUsage =
    "usage: vkcnn <command> [options]\n"
    "\n"
    "commands:\n"
    "  info                       Vulkan devices, the chosen one, its features and limits\n"
    "  run MODEL.onnx --input F   run a model on a picture (PNG, JPEG), a .npy or raw float32 "
    ".bin\n"
    "  bench MODEL.onnx           time a model: wall and GPU time, dispatches, barriers, memory\n"
    "  profile MODEL.onnx         GPU time of every kernel of a model\n"
    "\n"
    "'vkcnn COMMAND --help' describes each command's options.\n";

const char* kCommonOptions =
    "  --device D        device index or name substring (default: VKCNN_DEVICE, else the first\n"
    "                    discrete GPU, then integrated, then CPU)\n"
    "  --fp16 | --fp32   storage of intermediate images (default fp16)\n"
    "  --batch N         images per inference when the model's batch is dynamic (default 1)\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses "--name value" and "--flag" options after a positional model path.
struct Arguments {
  std::string command, model;
  std::map<std::string, std::string> values;
  std::vector<std::string> flags;

  Arguments(const std::string& cmd, const std::vector<std::string>& args,
            const std::vector<std::string>& valueOptions,
            const std::vector<std::string>& flagOptions)
      : command(cmd) {
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--help" || a == "-h") {
        flags.push_back("--help");
      } else if (std::find(valueOptions.begin(), valueOptions.end(), a) != valueOptions.end()) {
        if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
        values[a] = args[++i];
      } else if (std::find(flagOptions.begin(), flagOptions.end(), a) != flagOptions.end()) {
        flags.push_back(a);
      } else if (a.rfind("--", 0) == 0) {
        throw UsageError("unknown option '" + a + "'");
      } else if (model.empty()) {
        model = a;
      } else {
        throw UsageError("unexpected argument '" + a + "'");
      }
    }
  }
  bool has(const std::string& flag) const {
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
  }
  std::string get(const std::string& name, const std::string& fallback = {}) const {
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  }
  long number(const std::string& name, long fallback, long minimum = 1) const {
    auto it = values.find(name);
    if (it == values.end()) return fallback;
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (!end || *end || v < minimum)
      throw UsageError(name + " needs a whole number of at least " + std::to_string(minimum) +
                       ", not '" + it->second + "'");
    return v;
  }
};

vkcnn::Context makeContext(const Arguments& args) {
  vkcnn::ContextOptions options;
  options.device = args.get("--device");
  return vkcnn::Context(options);
}

vkcnn::OnnxImportOptions importOptions(const Arguments& args) {
  vkcnn::OnnxImportOptions o;
  o.channelFormat =
      args.has("--fp32") ? vkcnn::ChannelFormat::float32 : vkcnn::ChannelFormat::float16;
  o.dynamicBatchSize = args.number("--batch", 1);
  return o;
}

size_t elementCount(const vkcnn::OnnxTensorInfo& info) {
  size_t n = 1;
  for (int64_t d : info.dims) n *= size_t(d);
  return n;
}

std::string shapeText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The input tensor for `info` from a picture, a .npy or a raw float32 file.
std::vector<float> loadInput(const std::string& path, const vkcnn::OnnxTensorInfo& info,
                             const Arguments& args) {
  const size_t count = elementCount(info);
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  if (endsWith(lower, ".npy")) {
    vkcnn::cli::Array a = vkcnn::cli::readNpy(path);
    if (a.data.size() != count)
      throw vkcnn::Error(vkcnn::ErrorCode::invalidArgument, path + " holds " + shapeText(a.shape) +
                                                                " but input '" + info.name +
                                                                "' is " + shapeText(info.dims));
    return a.data;
  }
  if (endsWith(lower, ".bin") || endsWith(lower, ".raw") || endsWith(lower, ".dat"))
    return vkcnn::cli::readRawFloats(path, count);
  if (info.dims.size() != 4 || (info.dims[1] != 1 && info.dims[1] != 3))
    throw vkcnn::Error(vkcnn::ErrorCode::invalidArgument,
                       "a picture can feed only an input of shape [N, 1 or 3, H, W]; '" +
                           info.name + "' is " + shapeText(info.dims));
  vkcnn::cli::PictureOptions p;
  p.channels = uint32_t(info.dims[1]);
  p.height = uint32_t(info.dims[2]);
  p.width = uint32_t(info.dims[3]);
  if (args.has("--no-normalize")) p.mean = {0, 0, 0}, p.std = {1, 1, 1};
  // --mean a,b,c and --std a,b,c (values on the [0, 1] scale; one value applies to all channels).
  auto triple = [&](const std::string& option, std::array<float, 3>& out) {
    const std::string text = args.get(option);
    if (text.empty()) return;
    std::vector<float> v;
    size_t start = 0;
    while (start <= text.size()) {
      const size_t comma = text.find(',', start);
      const std::string item =
          text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      char* end = nullptr;
      const float f = std::strtof(item.c_str(), &end);
      if (item.empty() || *end)
        throw UsageError(option + " takes numbers separated by commas, not '" + text + "'");
      v.push_back(f);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (v.size() != 1 && v.size() != 3) throw UsageError(option + " takes one or three numbers");
    for (size_t c = 0; c < 3; ++c) out[c] = v[v.size() == 1 ? 0 : c];
  };
  triple("--mean", p.mean);
  triple("--std", p.std);
  if (p.std[0] == 0 || p.std[1] == 0 || p.std[2] == 0) throw UsageError("--std must not be 0");
  std::vector<float> one = vkcnn::cli::loadPicture(path, p);
  std::vector<float> all;
  for (int64_t i = 0; i < info.dims[0]; ++i) all.insert(all.end(), one.begin(), one.end());
  return all;
}

double relativeL2(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    diff += double(a[i] - b[i]) * (a[i] - b[i]);
    norm += double(b[i]) * b[i];
  }
  return a.size() != b.size() ? INFINITY : std::sqrt(diff / std::max(norm, 1e-30));
}

// ---- info ---------------------------------------------------------------------------------------

int info(const std::vector<std::string>& rest) {
  Arguments args("info", rest, {"--device"}, {});
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn info [--device D]\n\nlists the Vulkan devices and what vkcnn sees of the "
        "chosen one\n");
    return 0;
  }
  if (!args.model.empty()) throw UsageError("info takes no model");
  std::printf("devices:\n");
  for (const auto& d : vkcnn::Context::enumerateDevices())
    std::printf("  %u: %s (%s, Vulkan %u.%u)\n", d.index, d.name.c_str(), vkcnn::toString(d.type),
                VK_API_VERSION_MAJOR(d.apiVersion), VK_API_VERSION_MINOR(d.apiVersion));
  vkcnn::Context context = makeContext(args);
  const auto& c = context.capabilities();
  std::printf("chosen: %s (%s), driver %s, Vulkan %u.%u.%u\n", c.deviceName.c_str(),
              vkcnn::toString(c.deviceType), c.driverName.c_str(),
              VK_API_VERSION_MAJOR(c.apiVersion), VK_API_VERSION_MINOR(c.apiVersion),
              VK_API_VERSION_PATCH(c.apiVersion));
  std::printf("features:\n");
  std::printf("  shaderFloat16            %s\n", c.shaderFloat16 ? "yes" : "no");
  std::printf("  16-bit storage           %s\n", c.storage16Bit ? "yes" : "no");
  std::printf("  cooperative matrix       %s\n", c.cooperativeMatrix ? "yes" : "no");
  std::printf("  matrix units in use     %s\n", c.matrixUnits ? "yes" : "no");
  std::printf("  push descriptors         %s\n", c.pushDescriptors ? "yes" : "no");
  std::printf("limits:\n");
  std::printf("  subgroup size            %u\n", c.subgroupSize);
  std::printf("  maxImageArrayLayers      %u\n", c.maxImageArrayLayers);
  std::printf("  maxImageDimension2D      %u\n", c.maxImageDimension2D);
  std::printf("  storage images / stage   %u\n", c.maxPerStageDescriptorStorageImages);
  std::printf("  shared memory            %u bytes\n", c.maxComputeSharedMemorySize);
  std::printf("  workgroup invocations    %u\n", c.maxComputeWorkGroupInvocations);
  std::printf("  timestamp period         %.3f ns\n", double(c.timestampPeriodNs));
  const std::string cache = context.pipelineCacheFile();
  std::printf("pipeline cache: %s\n", cache.empty() ? "off" : cache.c_str());
  return 0;
}

// A model loaded with its input and output Images, ready to encode. A batch larger than one Image
// can hold (the device's array-layer limit) is split into chunks of `chunk` images, each with
// Images of its own, as MPS's ImageBatch does. Each input and output of the whole batch also has a
// shared (host-mapped) Buffer holding it as float32 in ONNX order, so that one inference is one
// submission: the host writes the input buffers, the command buffer moves them into the input
// Images, runs the network and moves the outputs into the output buffers, the host reads those.
// (Graph::encode stays Image to Image: BufferToImage and ImageToBuffer already compose with it in
// one CommandBuffer, and chunking and the tensor layout are the application's choice.)
struct Loaded {
  vkcnn::OnnxImport import;
  uint32_t batch = 1, chunk = 1;
  std::vector<std::vector<vkcnn::Image>> inputs, outputs;  // [chunk][input or output]
  std::vector<vkcnn::Buffer> inputBuffers, outputBuffers;  // [input or output], whole batch

  // The network alone, from the input Images to the output Images (GPU-resident); the chunks of
  // a batch are encoded together, sharing barriers.
  void encode(vkcnn::CommandBuffer& cb) { import.graph.encodeBatch(cb, inputs, outputs); }
  // One whole inference: input buffers -> input Images -> network -> output buffers.
  void encodeEndToEnd(vkcnn::CommandBuffer& cb) {
    for (size_t c = 0; c < inputs.size(); ++c)
      for (size_t i = 0; i < inputs[c].size(); ++i) {
        vkcnn::BufferToImage upload(cb.context());
        upload.bufferOffset = c * upload.tensorBytes(inputs[c][i]);
        upload.encode(cb, inputBuffers[i], inputs[c][i]);
      }
    encode(cb);
    for (size_t c = 0; c < outputs.size(); ++c)
      for (size_t o = 0; o < outputs[c].size(); ++o) {
        vkcnn::ImageToBuffer download(cb.context());
        download.bufferOffset = c * download.tensorBytes(outputs[c][o]);
        download.encode(cb, outputs[c][o], outputBuffers[o]);
      }
  }
  // Input `i` of the whole batch (row-major, image after image), before the commit.
  void write(size_t i, const std::vector<float>& data) {
    if (data.size() * sizeof(float) != inputBuffers[i].size())
      throw vkcnn::Error(vkcnn::ErrorCode::invalidArgument,
                         "input '" + import.info.inputs[i].name +
                             "': " + std::to_string(data.size()) + " values for a tensor of " +
                             std::to_string(inputBuffers[i].floatCount()));
    std::memcpy(inputBuffers[i].contents(), data.data(), inputBuffers[i].size());
  }
  // Output `o` of the whole batch, after the command buffer completed.
  void read(size_t o, std::vector<float>& out) const {
    out.resize(outputBuffers[o].floatCount());
    std::memcpy(out.data(), outputBuffers[o].contents(), outputBuffers[o].size());
  }
  std::vector<float> read(size_t o) const {
    std::vector<float> out;
    read(o, out);
    return out;
  }
  // The tensor's ONNX dims for the whole batch.
  std::vector<int64_t> batchDims(const vkcnn::OnnxTensorInfo& info) const {
    std::vector<int64_t> dims = info.dims;
    if (!dims.empty() && chunk != batch) dims[0] = dims[0] / chunk * batch;
    return dims;
  }
};

Loaded load(const vkcnn::Context& context, const Arguments& args) {
  if (args.model.empty()) throw UsageError(args.command + " needs a model file");
  vkcnn::OnnxImportOptions options = importOptions(args);
  const uint32_t batch = uint32_t(options.dynamicBatchSize);
  vkcnn::OnnxImport import = vkcnn::importOnnxModel(context, args.model, options);
  import.graph.compile();
  uint32_t chunk = batch;
  const uint32_t most = std::max(1u, import.graph.maxNumberOfImages());
  while (chunk > most || batch % chunk) --chunk;  // equal chunks that fit
  if (chunk != batch) {
    options.dynamicBatchSize = chunk;
    import = vkcnn::importOnnxModel(context, args.model, options);
  }
  Loaded l{std::move(import), batch, chunk, {}, {}};
  const auto format =
      args.has("--fp32") ? vkcnn::ChannelFormat::float32 : vkcnn::ChannelFormat::float16;
  for (uint32_t c = 0; c < batch / chunk; ++c) {
    std::vector<vkcnn::Image> ins, outs;
    for (const auto& in : l.import.info.inputs) {
      vkcnn::ImageDescriptor d{in.width, in.height, in.featureChannels, in.numberOfImages,
                               vkcnn::ChannelFormat::float32};
      d.label = in.name;
      ins.emplace_back(context, d);
    }
    for (const auto& out : l.import.info.outputs) {
      vkcnn::ImageDescriptor d{out.width, out.height, out.featureChannels, out.numberOfImages,
                               format};
      d.label = out.name;
      outs.emplace_back(context, d);
    }
    l.inputs.push_back(std::move(ins));
    l.outputs.push_back(std::move(outs));
  }
  const size_t chunks = batch / chunk;
  auto shared = [&](const vkcnn::OnnxTensorInfo& info, bool input) {
    vkcnn::BufferOptions o;
    o.storageMode = vkcnn::BufferStorageMode::shared;
    o.cpuCacheMode =
        input ? vkcnn::BufferCpuCacheMode::writeCombined : vkcnn::BufferCpuCacheMode::defaultCache;
    o.label = info.name + (input ? " (host input)" : " (host output)");
    const size_t floats =
        size_t(info.numberOfImages) * info.featureChannels * info.height * info.width;
    return vkcnn::Buffer(context, floats * chunks * sizeof(float), o);
  };
  for (const auto& in : l.import.info.inputs) l.inputBuffers.push_back(shared(in, true));
  for (const auto& out : l.import.info.outputs) l.outputBuffers.push_back(shared(out, false));
  return l;
}

// ---- run ----------------------------------------------------------------------------------------

int run(const std::vector<std::string>& rest) {
  Arguments args("run", rest,
                 {"--device", "--input", "--output", "--top", "--batch", "--mean", "--std"},
                 {"--fp16", "--fp32", "--no-normalize"});
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn run MODEL.onnx --input FILE [options]\n\n"
        "Runs the model once and prints its outputs (the top-K classes of a classifier).\n\n"
        "  --input FILE      PNG or JPEG (resized to the input size, scaled to [0,1] and "
        "normalised\n"
        "                    with --mean and --std, default ImageNet's, unless --no-normalize),\n"
        "                    .npy, or raw little-endian float32 (.bin)\n"
        "  --output FILE     writes every output: FILE.npy (or .bin: raw float32); with several\n"
        "                    outputs, FILE gets the output's name inserted before the extension\n"
        "  --top K           classes to print for an [N, classes] output (default 5)\n"
        "  --mean A,B,C      per-channel mean of a picture's [0,1] values (default "
        "0.485,0.456,0.406)\n"
        "  --std A,B,C       per-channel std (default 0.229,0.224,0.225)\n%s",
        kCommonOptions);
    return 0;
  }
  if (args.get("--input").empty()) throw UsageError("run needs --input FILE");
  vkcnn::Context context = makeContext(args);
  Loaded l = load(context, args);
  for (size_t i = 0; i < l.import.info.inputs.size(); ++i) {
    vkcnn::OnnxTensorInfo whole = l.import.info.inputs[i];
    whole.dims = l.batchDims(whole);
    l.write(i, loadInput(args.get("--input"), whole, args));
  }
  vkcnn::CommandBuffer cb(context, "run");
  const auto start = Clock::now();
  l.encodeEndToEnd(cb);
  cb.commit();
  cb.waitUntilCompleted();
  const double ms = millisecondsSince(start);
  const long top = args.number("--top", 5);
  for (size_t o = 0; o < l.import.info.outputs.size(); ++o) {
    vkcnn::OnnxTensorInfo info = l.import.info.outputs[o];
    info.dims = l.batchDims(info);
    std::vector<float> values = l.read(o);
    std::printf("output '%s' %s\n", info.name.c_str(), shapeText(info.dims).c_str());
    const size_t perImage =
        values.size() / std::max<size_t>(1, size_t(info.dims.empty() ? 1 : info.dims[0]));
    for (size_t n = 0; n * perImage < values.size(); ++n) {
      std::vector<size_t> order(perImage);
      std::iota(order.begin(), order.end(), 0);
      const size_t k = std::min<size_t>(size_t(top), perImage);
      std::partial_sort(
          order.begin(), order.begin() + long(k), order.end(),
          [&](size_t a, size_t b) { return values[n * perImage + a] > values[n * perImage + b]; });
      for (size_t i = 0; i < k; ++i)
        std::printf("  image %zu  #%zu  class %zu  %.6g\n", n, i + 1, order[i],
                    values[n * perImage + order[i]]);
    }
    const std::string path = args.get("--output");
    if (!path.empty()) {
      std::string file = path;
      if (l.import.info.outputs.size() > 1) {
        const auto dot = path.rfind('.');
        std::string name = info.name;  // a file name: ONNX names hold '/' and ':'
        for (char& ch : name)
          if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.') ch = '_';
        file =
            path.substr(0, dot) + "_" + name + (dot == std::string::npos ? "" : path.substr(dot));
      }
      if (endsWith(file, ".bin"))
        vkcnn::cli::writeRawFloats(file, values);
      else
        vkcnn::cli::writeNpy(file, {info.dims, values});
      std::printf("  written to %s\n", file.c_str());
    }
  }
  std::fprintf(stderr, "ran on %s in %.2f ms (first run, pipelines included)\n",
               context.capabilities().deviceName.c_str(), ms);
  return 0;
}

// ---- bench --------------------------------------------------------------------------------------

struct Stats {
  double median = 0, p90 = 0;
};

Stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return {};
  return {v[v.size() / 2], v[size_t(0.9 * double(v.size() - 1))]};
}

void progress(const char* what, long i, long n) {
  if (n >= 50 && (i % std::max(1L, n / 10) == 0 || i == n))
    std::fprintf(stderr, "\r%s: %ld/%ld", what, i, n), std::fflush(stderr);
  if (n >= 50 && i == n) std::fprintf(stderr, "\n");
}

int bench(const std::vector<std::string>& rest) {
  Arguments args(
      "bench", rest,
      {"--device", "--iterations", "--batch", "--warmup", "--input", "--reference", "--json"},
      {"--fp16", "--fp32", "--cold"});
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn bench MODEL.onnx [options]\n\n"
        "Times the model: the recorded command buffer resubmitted with input and output on the\n"
        "GPU (median and p90 wall time, GPU time from timestamps), and end to end (the input\n"
        "copied into host-mapped memory, one submission that uploads it, runs the network and\n"
        "downloads the output, the output copied out); prints dispatches, barriers and memory.\n\n"
        "  --iterations N    timed runs of each kind (default 100)\n"
        "  --warmup N        untimed runs first (default 10)\n"
        "  --input FILE      input data (.npy / .bin); default: a fixed pseudo-random tensor\n"
        "  --reference FILE  expected output (.npy): prints the relative L2 error of the first "
        "output\n"
        "  --cold            also time the first inference of a fresh Context with and without\n"
        "                    the pipeline cache (uses a temporary cache directory)\n"
        "  --json FILE       writes the figures as JSON\n%s",
        kCommonOptions);
    return 0;
  }
  const long iterations = args.number("--iterations", 100), warmup = args.number("--warmup", 10, 0);

  std::map<std::string, double> figures;
  if (args.has("--cold")) {
    // First inference of a fresh process-like start: Context, import, pipelines, run.
    const auto dir = std::filesystem::temp_directory_path() /
                     ("vkcnn-bench-cache-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    setenv("VKCNN_PIPELINE_CACHE_DIR", dir.c_str(), 1);
    for (const char* label : {"cold_no_cache_ms", "cold_with_cache_ms"}) {
      const auto start = Clock::now();
      {
        vkcnn::Context context = makeContext(args);
        Loaded l = load(context, args);
        vkcnn::CommandBuffer cb(context);
        l.encodeEndToEnd(cb);
        cb.commit();
        cb.waitUntilCompleted();
        (void)l.read(0);
        figures[label] = millisecondsSince(start);
      }
    }
    std::filesystem::remove_all(dir);
    unsetenv("VKCNN_PIPELINE_CACHE_DIR");
  }

  vkcnn::Context context = makeContext(args);
  const auto importStart = Clock::now();
  Loaded l = load(context, args);
  figures["import_ms"] = millisecondsSince(importStart);
  std::vector<std::vector<float>> inputData;
  for (size_t i = 0; i < l.import.info.inputs.size(); ++i) {
    vkcnn::OnnxTensorInfo info = l.import.info.inputs[i];
    info.dims = l.batchDims(info);
    std::vector<float> data;
    if (!args.get("--input").empty()) {
      data = loadInput(args.get("--input"), info, args);
    } else {
      data.resize(elementCount(info));
      uint32_t state = 12345;
      for (float& v : data)
        state = state * 1664525u + 1013904223u, v = float(state >> 8) / float(1 << 24) - 0.5f;
    }
    l.write(i, data);
    inputData.push_back(std::move(data));
  }

  vkcnn::CommandBufferOptions reusable;
  reusable.reusable = true;
  // End to end, as an application runs it: the input copied into host-mapped memory, one
  // submission that uploads it, runs the network and downloads the output, one wait, the output
  // copied out of host-mapped memory. Its first run also fills the input Images.
  auto e2e = std::make_unique<vkcnn::CommandBuffer>(context, "bench end to end", reusable);
  l.encodeEndToEnd(*e2e);
  e2e->commit();
  e2e->waitUntilCompleted();

  // GPU-resident: the network alone, on those input Images.
  vkcnn::CommandBuffer cb(context, "bench", reusable);
  l.encode(cb);
  const auto encoding = cb.encodingStatistics();
  std::vector<double> resident, endToEnd, gpu;
  for (long i = 0; i < warmup; ++i) cb.commit(), cb.waitUntilCompleted();
  for (long i = 1; i <= iterations; ++i) {
    const auto start = Clock::now();
    cb.commit();
    cb.waitUntilCompleted();
    resident.push_back(millisecondsSince(start));
    progress("GPU-resident", i, iterations);
  }
  std::vector<float> output;
  for (long i = 0; i < warmup; ++i) e2e->commit(), e2e->waitUntilCompleted();
  for (long i = 1; i <= iterations; ++i) {
    const auto start = Clock::now();
    for (size_t k = 0; k < inputData.size(); ++k) l.write(k, inputData[k]);
    e2e->commit();
    e2e->waitUntilCompleted();
    l.read(0, output);
    endToEnd.push_back(millisecondsSince(start));
    progress("end-to-end", i, iterations);
  }
  e2e.reset();  // its temporary memory goes to the profiled run below
  const auto pool = cb.temporaryPoolStatistics();
  {
    vkcnn::CommandBufferOptions profiled;
    profiled.reusable = true;
    profiled.profile = true;
    vkcnn::CommandBuffer pcb(context, "bench profile", profiled);
    l.encode(pcb);
    for (long i = 0; i < std::min(iterations, 20L) + 3; ++i) {
      pcb.commit();
      pcb.waitUntilCompleted();
      if (i >= 3) gpu.push_back(pcb.gpuMilliseconds());
    }
  }
  const Stats r = summarize(resident), e = summarize(endToEnd), g = summarize(gpu);
  figures["resident_median_ms"] = r.median;
  figures["resident_p90_ms"] = r.p90;
  figures["end_to_end_median_ms"] = e.median;
  figures["end_to_end_p90_ms"] = e.p90;
  figures["gpu_median_ms"] = g.median;
  figures["dispatches"] = encoding.dispatches;
  figures["barriers"] = encoding.barriers;
  figures["peak_temporary_bytes"] = double(pool.peakBytesInUse);
  figures["intermediate_tensor_bytes"] = double(l.import.graph.intermediateTensorBytes(l.batch));
  figures["chunks"] = double(l.batch / l.chunk);
  figures["device_bytes"] = double(context.memoryStatistics().deviceBytesAllocated);
  figures["kernels"] = l.import.graph.statistics().kernels;
  if (!args.get("--reference").empty()) {
    vkcnn::cli::Array reference = vkcnn::cli::readNpy(args.get("--reference"));
    figures["relative_l2"] = relativeL2(output, reference.data);
  }

  std::printf("%s on %s, %s, batch %u\n", args.model.c_str(),
              context.capabilities().deviceName.c_str(), args.has("--fp32") ? "fp32" : "fp16",
              l.batch);
  if (l.chunk != l.batch)
    std::printf("  (%u chunks of %u images: the device holds at most %u layers per image)\n",
                l.batch / l.chunk, l.chunk, context.capabilities().maxImageArrayLayers);
  std::printf("  GPU-resident  median %.3f ms  p90 %.3f ms  (GPU %.3f ms)\n", r.median, r.p90,
              g.median);
  std::printf("  end-to-end    median %.3f ms  p90 %.3f ms\n", e.median, e.p90);
  std::printf("  %u kernels: %u dispatches, %u barriers\n", l.import.graph.statistics().kernels,
              encoding.dispatches, encoding.barriers);
  std::printf(
      "  memory: temporary peak %.1f MiB of %.1f MiB intermediates; %.1f MiB device memory\n",
      figures["peak_temporary_bytes"] / 1048576.0, figures["intermediate_tensor_bytes"] / 1048576.0,
      figures["device_bytes"] / 1048576.0);
  if (figures.count("cold_no_cache_ms"))
    std::printf("  first inference: %.1f ms without pipeline cache, %.1f ms with\n",
                figures["cold_no_cache_ms"], figures["cold_with_cache_ms"]);
  if (figures.count("relative_l2"))
    std::printf("  relative L2 vs reference: %.3g\n", figures["relative_l2"]);
  const std::string json = args.get("--json");
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (!f) throw vkcnn::Error(vkcnn::ErrorCode::io, json + ": cannot write");
    std::fprintf(f, "{\"model\": \"%s\", \"device\": \"%s\", \"format\": \"%s\", \"batch\": %u",
                 args.model.c_str(), context.capabilities().deviceName.c_str(),
                 args.has("--fp32") ? "fp32" : "fp16", l.batch);
    for (auto& [k, v] : figures) std::fprintf(f, ", \"%s\": %.6g", k.c_str(), v);
    std::fprintf(f, "}\n");
    std::fclose(f);
  }
  return 0;
}

// ---- profile ------------------------------------------------------------------------------------

int profile(const std::vector<std::string>& rest) {
  Arguments args("profile", rest, {"--device", "--batch", "--iterations"}, {"--fp16", "--fp32"});
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn profile MODEL.onnx [options]\n\n"
        "Prints the GPU time of every kernel (median of --iterations runs, default 10), in "
        "order.\n%s",
        kCommonOptions);
    return 0;
  }
  vkcnn::Context context = makeContext(args);
  Loaded l = load(context, args);
  vkcnn::CommandBufferOptions options;
  options.reusable = true;
  options.profile = true;
  vkcnn::CommandBuffer cb(context, "profile", options);
  l.encode(cb);
  const long iterations = args.number("--iterations", 10);
  std::vector<std::vector<double>> times;
  std::vector<std::string> labels;
  cb.commit();
  cb.waitUntilCompleted();
  for (long i = 0; i < iterations; ++i) {
    cb.commit();
    cb.waitUntilCompleted();
    auto t = cb.kernelTimings();
    if (times.empty())
      times.resize(t.size()), std::transform(t.begin(), t.end(), std::back_inserter(labels),
                                             [](auto& k) { return k.label; });
    for (size_t k = 0; k < t.size() && k < times.size(); ++k) times[k].push_back(t[k].milliseconds);
  }
  double total = 0;
  std::vector<double> medians;
  for (auto& t : times) medians.push_back(summarize(t).median), total += medians.back();
  std::printf("%-4s %-60s %10s %7s\n", "#", "kernel", "ms", "%");
  for (size_t k = 0; k < medians.size(); ++k)
    std::printf("%-4zu %-60.60s %10.4f %6.1f%%\n", k, labels[k].c_str(), medians[k],
                100.0 * medians[k] / std::max(total, 1e-12));
  std::printf("total kernel time %.3f ms over %zu dispatches (%u barriers)\n", total,
              medians.size(), cb.encodingStatistics().barriers);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "info") return info(args);
    if (command == "run") return run(args);
    if (command == "bench") return bench(args);
    if (command == "profile") return profile(args);
    std::fprintf(stderr, "vkcnn: unknown command '%s' (try vkcnn --help)\n", command.c_str());
    return 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "vkcnn %s: %s (try vkcnn %s --help)\n", command.c_str(), e.what(),
                 command.c_str());
    return 2;
  } catch (const vkcnn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
