// vkcnn bench: wall time GPU-resident and end to end, GPU time, dispatches, barriers, memory, and
// the first inference of a fresh Context with and without the pipeline cache.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "cli.h"
#include "npy.h"
#include "platform/platform.h"
#include "vulkan/overrides.h"

namespace vkcnn::cli {

namespace {

// ||a - b|| / ||b||; infinite when a holds NaN or Inf (sizes are checked before the run).
double relativeL2(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    diff += double(a[i] - b[i]) * (a[i] - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

// Runs `body` `iterations` times, or for `seconds` when that is above 0, timing each run.
template <class F>
std::vector<double> timed(const char* what, long iterations, double seconds, F&& body) {
  Progress progress(what);
  std::vector<double> times;
  const auto begin = Clock::now();
  for (long i = 1;; ++i) {
    const auto start = Clock::now();
    body();
    times.push_back(millisecondsSince(start));
    progress.step(uint64_t(i), seconds > 0 ? 0 : uint64_t(iterations));
    if (seconds > 0 ? millisecondsSince(begin) >= seconds * 1000 : i >= iterations) break;
  }
  return times;
}

// One cold start: a fresh Context, the Session loaded, its first run.
struct ColdStart {
  double contextMs = 0, totalMs = 0;
  std::string device;
  ChannelFormat precision = ChannelFormat::float16;
  uint32_t batch = 1;
  SessionLoadStatistics load;
};

ColdStart coldStart(const Arguments& args, const ModelSetup& setup) {
  ColdStart c;
  const auto start = Clock::now();
  // As an application starts: a Session from the path making its own Context (which starts on a
  // thread while the model is parsed; contextMs overlaps the parse and part of the import).
  SessionOptions options = setup.options;
  options.context = contextOptions(args);
  Session session(setup.path, options);
  const Context& context = session.context();
  c.contextMs = session.loadStatistics().contextMs;
  std::vector<std::vector<float>> in, out;
  for (const auto& i : session.inputs()) in.emplace_back(i.elementCount, 0.5f);
  for (const auto& o : session.outputs()) out.emplace_back(o.elementCount);
  std::vector<std::span<const float>> inSpans(in.begin(), in.end());
  std::vector<std::span<float>> outSpans(out.begin(), out.end());
  session.run(inSpans, outSpans);
  c.totalMs = millisecondsSince(start);
  c.load = session.loadStatistics();
  c.device = context.capabilities().deviceName;
  c.precision = session.precision();
  c.batch = session.batch();
  return c;
}

// The phases of a cold start, in the order they run: (label, JSON key, milliseconds).
std::vector<std::tuple<const char*, const char*, double>> phases(const ColdStart& c) {
  const SessionLoadStatistics& l = c.load;
  return {{"context (overlap)", "context", c.contextMs},
          {"  of it waited for", "context_wait", l.contextWaitMs},
          {"read file", "read", l.readMs},
          {"parse", "parse", l.parseMs},
          {"onnx check", "check", l.checkMs},
          {"import, fold", "import", l.importMs},
          {"shape inference", "shape_inference", l.shapeInferenceMs},
          {"optimize", "optimize", l.optimizeMs},
          {"weight packing", "pack", l.packMs},
          {"upload", "upload", l.uploadMs},
          {"images", "images", l.imagesMs},
          {"load total", "load", l.totalMs},
          {"first run", "first_run", l.firstRunMs},
          {"  of it pipelines", "pipelines", l.pipelinesMs},
          {"total", "total", c.totalMs}};
}

// The cold starts side by side, phase by phase.
void printColdStarts(const std::vector<std::tuple<std::string, std::string, ColdStart>>& colds) {
  if (colds.empty()) return;
  std::printf("  cold start, ms      ");
  for (const auto& [label, key, c] : colds)
    std::printf(" %12s", c.load.pipelineCacheLoaded ? (label + " (read)").c_str() : label.c_str());
  std::printf("\n");
  const auto rows = phases(std::get<2>(colds[0]));
  for (size_t k = 0; k < rows.size(); ++k) {
    std::printf("    %-18s", std::get<0>(rows[k]));
    for (const auto& cold : colds)
      std::printf(" %12.1f", std::get<2>(phases(std::get<2>(cold))[k]));
    std::printf("\n");
  }
  for (const auto& [label, key, c] : colds)
    std::printf("    %s: %llu pipelines created, %.1f MiB uploaded in %llu submissions\n",
                label.c_str(), (unsigned long long)c.load.pipelinesCreated,
                double(c.load.uploadBytes) / 1048576.0,
                (unsigned long long)c.load.uploadSubmissions);
}

}  // namespace

int bench(const std::vector<std::string>& rest) {
  std::vector<Option> options = modelOptions();
  for (const Option& o : pictureOptions()) options.push_back(o);
  for (const char* o :
       {"--iterations", "--warmup", "--duration", "--reference", "--json", "--cache-dir"})
    options.push_back({o, OptionKind::value});
  options.push_back({"--input", OptionKind::repeated});
  options.push_back({"--cold", OptionKind::flag});
  options.push_back({"--cold-only", OptionKind::flag});
  Arguments args("bench", rest, options);
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn bench MODEL.onnx [options]\n\n"
        "Times the model: the recorded command buffer resubmitted with input and output on the\n"
        "GPU (median and p90 wall time, GPU time from timestamps), and end to end (the input\n"
        "copied into host-mapped memory, one submission that uploads it, runs the network and\n"
        "downloads the output, the output copied out); prints dispatches, barriers and memory.\n\n"
        "  --iterations N      timed runs of each kind (default 100)\n"
        "  --duration S        time each kind for S seconds instead of --iterations runs\n"
        "  --warmup N          untimed runs first (default 10)\n"
        "  --input FILE        input data (picture, .npy, .bin; NAME=FILE for one of several\n"
        "                      inputs); default: fixed pseudo-random values\n"
        "  --reference FILE    expected first output (.npy of the same size): prints the\n"
        "                      relative L2 error\n"
        "  --cold              also time the first inference of a fresh Context with and without\n"
        "                      the pipeline cache (a temporary cache directory), phase by phase:\n"
        "                      context, file read, parse, onnx check, import, shape inference,\n"
        "                      optimize, weight packing, upload, images, first run, pipelines\n"
        "  --cold-only         the cold starts alone (no timed runs after them)\n"
        "  --cache-dir DIR     with --cold: one cold start with the pipeline cache in DIR, kept\n"
        "                      (run twice to time a second process that reads the cache)\n"
        "  --json FILE         writes the figures as JSON (- for standard output)\n"
        "%s%s",
        kModelOptionsHelp, kPictureOptionsHelp);
    return 0;
  }
  if (args.has("--iterations") && args.has("--duration"))
    throw UsageError("--iterations and --duration exclude each other");
  const long iterations = args.number("--iterations", 100), warmup = args.number("--warmup", 10, 0);
  const double seconds = args.real("--duration", 0, 0.001);
  const ModelSetup setup = prepareModel(args, true);
  const std::string json = args.get("--json"), referencePath = args.get("--reference");
  if (!json.empty()) checkWritable(json, "--json");
  Array reference;
  if (!referencePath.empty()) {
    checkReadable(referencePath, "--reference");
    reference = readNpy(referencePath);
  }

  std::map<std::string, double> times;     // milliseconds and ratios
  std::map<std::string, uint64_t> counts;  // exact integers: counts and bytes
  const std::string cacheDir = args.get("--cache-dir");
  const bool coldOnly = args.has("--cold-only"), cold = coldOnly || args.has("--cold");
  if (!cacheDir.empty() && !cold) throw UsageError("--cache-dir needs --cold");
  if (coldOnly && (args.has("--iterations") || args.has("--duration") || args.has("--warmup") ||
                   !referencePath.empty()))
    throw UsageError(
        "--cold-only times the cold starts alone: it takes no --iterations, "
        "--duration, --warmup or --reference");
  // (label, JSON prefix, the cold start)
  std::vector<std::tuple<std::string, std::string, ColdStart>> colds;
  if (cold) {
    Progress progress("first inferences (--cold)");
    // As the process started (the Contexts below read it as they start).
    const std::string restore = detail::processOverrides().pipelineCacheDirectory;
    if (!cacheDir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(cacheDir, ec);
      if (ec) throw Error(ErrorCode::io, "--cache-dir " + cacheDir + ": " + ec.message());
      platform::setEnvironment("VKCNN_PIPELINE_CACHE_DIR", cacheDir.c_str());
      colds.emplace_back("cold", "cold", coldStart(args, setup));
    } else {
      const auto dir = std::filesystem::temp_directory_path() /
                       ("vkcnn-bench-cache-" + std::to_string(platform::processId()));
      std::filesystem::remove_all(dir);
      platform::setEnvironment("VKCNN_PIPELINE_CACHE_DIR", dir.string().c_str());
      colds.emplace_back("no cache", "cold_no_cache", coldStart(args, setup));
      colds.emplace_back("with cache", "cold_with_cache", coldStart(args, setup));
      std::filesystem::remove_all(dir);
    }
    platform::setEnvironment("VKCNN_PIPELINE_CACHE_DIR", restore.empty() ? nullptr : restore.c_str());
    progress.finish();
    for (const auto& [label, key, c] : colds) {
      times[key + "_ms"] = c.totalMs;
      for (const auto& [name, phase, ms] : phases(c)) times[key + "_" + phase + "_ms"] = ms;
      counts[key + "_pipelines_created"] = c.load.pipelinesCreated;
      counts[key + "_pipeline_cache_loaded"] = c.load.pipelineCacheLoaded;
      counts[key + "_upload_bytes"] = c.load.uploadBytes;
      counts[key + "_upload_submissions"] = c.load.uploadSubmissions;
    }
  }

  if (coldOnly) {
    const ColdStart& c = std::get<2>(colds[0]);
    if (json != "-") {
      std::printf("%s on %s, %s, batch %u\n", setup.path.c_str(), c.device.c_str(),
                  precisionName(c.precision), c.batch);
      printColdStarts(colds);
    }
    if (!json.empty()) {
      Json j;
      j.add("model", setup.path)
          .add("device", c.device)
          .add("format", precisionName(c.precision))
          .add("batch", c.batch);
      for (auto& [k, v] : times) j.add(k, v);
      for (auto& [k, v] : counts) j.add(k, v);
      writeText(json, j.str() + "\n", "--json");
    }
    return 0;
  }

  Context context = makeContext(args);
  const auto importStart = Clock::now();
  Session session = loadSession(context, setup);
  times["import_ms"] = millisecondsSince(importStart);
  if (!referencePath.empty() && reference.data.size() != session.outputs()[0].elementCount)
    throw Error(ErrorCode::invalidArgument,
                "--reference " + referencePath + " holds " + shapeText(reference.shape) + " (" +
                    std::to_string(reference.data.size()) + " values) but output '" +
                    session.outputs()[0].name + "' is " + shapeText(session.outputs()[0].shape) +
                    " (" + std::to_string(session.outputs()[0].elementCount) + ")");
  std::vector<std::vector<float>> inputData, outputData;
  for (const auto& info : session.inputs()) {
    std::vector<float> data;
    auto file = setup.inputFiles.find(info.name);
    if (file != setup.inputFiles.end()) {
      data = loadInput(file->second, info, args);
    } else {
      data.resize(info.elementCount);
      uint32_t state = 12345;
      for (float& v : data)
        state = state * 1664525u + 1013904223u, v = float(state >> 8) / float(1 << 24) - 0.5f;
    }
    inputData.push_back(std::move(data));
  }
  for (const auto& info : session.outputs()) outputData.emplace_back(info.elementCount);
  const std::vector<std::span<const float>> in(inputData.begin(), inputData.end());
  const std::vector<std::span<float>> out(outputData.begin(), outputData.end());

  // End to end, as an application runs it; its first run also fills the input Images that the
  // GPU-resident runs read.
  session.run(in, out);
  CommandBufferOptions reusable;
  reusable.reusable = true;
  CommandBuffer cb(context, "bench", reusable);
  // What recording the network costs the CPU (its pipelines exist by now: session.run made them).
  const auto encodeStart = std::chrono::steady_clock::now();
  session.encode(cb);
  const double encodeMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - encodeStart)
          .count();
  const auto encoding = cb.encodingStatistics();
  {
    Progress progress("warm-up");
    for (long i = 0; i < warmup; ++i) {
      cb.commit(), cb.waitUntilCompleted();
      session.run(in, out);
      progress.step(uint64_t(i + 1), uint64_t(warmup));
    }
  }
  const std::vector<double> resident = timed("GPU-resident runs", iterations, seconds, [&] {
    cb.commit();
    cb.waitUntilCompleted();
  });
  const std::vector<double> endToEnd =
      timed("end-to-end runs", iterations, seconds, [&] { session.run(in, out); });
  session.releaseRecording();  // its temporary memory goes to the profiled run below
  const auto pool = cb.temporaryPoolStatistics();
  std::vector<double> gpu;
  {
    CommandBufferOptions profiled;
    profiled.reusable = true;
    profiled.profile = true;
    CommandBuffer pcb(context, "bench profile", profiled);
    session.encode(pcb);
    const long runs = std::min<long>(seconds > 0 ? long(resident.size()) : iterations, 20) + 3;
    for (long i = 0; i < runs; ++i) {
      pcb.commit();
      pcb.waitUntilCompleted();
      if (i >= 3) gpu.push_back(pcb.gpuMilliseconds());
    }
  }
  const Stats r = summarize(resident), e = summarize(endToEnd), g = summarize(gpu);
  times["resident_median_ms"] = r.median;
  times["resident_p90_ms"] = r.p90;
  times["end_to_end_median_ms"] = e.median;
  times["end_to_end_p90_ms"] = e.p90;
  times["gpu_median_ms"] = g.median;
  times["encode_ms"] = encodeMs;
  counts["resident_runs"] = resident.size();
  counts["end_to_end_runs"] = endToEnd.size();
  counts["dispatches"] = encoding.dispatches;
  counts["barriers"] = encoding.barriers;
  counts["peak_temporary_bytes"] = pool.peakBytesInUse;
  counts["intermediate_tensor_bytes"] = session.graph().intermediateTensorBytes(session.batch());
  counts["chunks"] = session.chunks();
  counts["device_bytes"] = context.memoryStatistics().deviceBytesAllocated;
  counts["kernels"] = session.graph().statistics().kernels;
  double l2 = 0;
  if (!referencePath.empty()) times["relative_l2"] = l2 = relativeL2(outputData[0], reference.data);

  const bool quiet = json == "-";
  if (!quiet) {
    std::printf("%s on %s, %s, batch %u\n", setup.path.c_str(),
                context.capabilities().deviceName.c_str(), precisionName(session.precision()),
                session.batch());
    if (session.chunks() > 1)
      std::printf(
          "  (%u chunks of %u images: each input and output Image holds at most %u "
          "array layers)\n",
          session.chunks(), session.chunkSize(), context.capabilities().maxImageArrayLayers);
    std::printf("  GPU-resident  median %.3f ms  p90 %.3f ms  (GPU %.3f ms; %zu runs)\n", r.median,
                r.p90, g.median, resident.size());
    std::printf("  end-to-end    median %.3f ms  p90 %.3f ms  (%zu runs)\n", e.median, e.p90,
                endToEnd.size());
    std::printf("  %u kernels: %u dispatches, %u barriers, encoded in %.2f ms\n",
                session.graph().statistics().kernels, encoding.dispatches, encoding.barriers,
                encodeMs);
    std::printf(
        "  memory: temporary peak %.1f MiB of %.1f MiB intermediates; %.1f MiB device memory\n",
        double(counts["peak_temporary_bytes"]) / 1048576.0,
        double(counts["intermediate_tensor_bytes"]) / 1048576.0,
        double(counts["device_bytes"]) / 1048576.0);
    if (times.count("cold_no_cache_ms"))
      std::printf("  first inference: %.1f ms without pipeline cache, %.1f ms with\n",
                  times["cold_no_cache_ms"], times["cold_with_cache_ms"]);
    printColdStarts(colds);
    if (!referencePath.empty()) {
      if (std::isfinite(l2))
        std::printf("  relative L2 vs reference: %.3g\n", l2);
      else
        std::printf("  relative L2 vs reference: not finite (the output holds NaN or Inf)\n");
    }
  }
  if (!json.empty()) {
    Json j;
    j.add("model", setup.path)
        .add("device", context.capabilities().deviceName)
        .add("format", precisionName(session.precision()))
        .add("batch", session.batch());
    for (auto& [k, v] : times) j.add(k, v);
    for (auto& [k, v] : counts) j.add(k, v);
    writeText(json, j.str() + "\n", "--json");
  }
  if (!referencePath.empty() && !std::isfinite(l2)) {
    std::fprintf(stderr, "vkcnn bench: output '%s' holds NaN or Inf\n",
                 session.outputs()[0].name.c_str());
    return 1;
  }
  return 0;
}

}  // namespace vkcnn::cli
