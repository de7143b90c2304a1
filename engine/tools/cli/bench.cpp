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

// How long the timed phases run: `runs` times each (--iterations), or until a deadline when
// --duration bounds the whole command. A phase always runs its body at least once.
struct Limit {
  long runs = 0;       // 0: no limit on the count
  double seconds = 0;  // 0: no limit on the time
};

// Runs `body` until `limit` is reached, timing each run.
template <class F>
std::vector<double> timed(const char* what, Limit limit, F&& body) {
  Progress progress(what);
  std::vector<double> times;
  const auto begin = Clock::now();
  for (long i = 1;; ++i) {
    const auto start = Clock::now();
    body();
    times.push_back(millisecondsSince(start));
    progress.step(uint64_t(i), limit.seconds > 0 ? 0 : uint64_t(limit.runs));
    if ((limit.runs > 0 && i >= limit.runs) ||
        (limit.seconds > 0 && millisecondsSince(begin) >= limit.seconds * 1000))
      break;
  }
  return times;
}

// The command's time budget: --duration S from the start of the command (the load and the first
// run count against it), or none.
class Budget {
 public:
  Budget(double seconds, Clock::time_point start) : seconds_(seconds), start_(start) {}
  bool bounded() const { return seconds_ > 0; }
  // A share of what is left (at least a microsecond, so that a phase still runs once).
  double share(double fraction) const {
    const double left = seconds_ - millisecondsSince(start_) / 1000;
    return std::max(left * fraction, 1e-6);
  }

 private:
  double seconds_;
  Clock::time_point start_;
};

// --warmup N, --warmup-duration S, or the default: 10 runs, within a tenth of what --duration
// leaves. No limit at all ({0, 0}): no warm-up.
Limit warmupLimit(const Arguments& args, const Budget& budget) {
  if (args.has("--warmup")) return {args.number("--warmup", 10, 0), 0};
  if (args.has("--warmup-duration")) {
    return {0, args.real("--warmup-duration", 0, 0)};
  }
  return {10, budget.bounded() ? budget.share(0.1) : 0};
}

// The latency statistics of one kind of run, as JSON keys `prefix`_min_ms ... and, where a run
// is an inference of `batch` images, its throughput.
void addStats(std::map<std::string, double>& times, const std::string& prefix, const Stats& s,
              uint32_t batch) {
  for (const auto& [name, value] : {std::pair<const char*, double>{"min", s.min},
                                    {"mean", s.mean},
                                    {"median", s.median},
                                    {"p90", s.p90},
                                    {"p95", s.p95},
                                    {"p99", s.p99},
                                    {"max", s.max}})
    times[prefix + "_" + name + "_ms"] = value;
  if (batch) {
    times[prefix + "_inferences_per_s"] = 1000.0 / std::max(s.mean, 1e-9);
    times[prefix + "_images_per_s"] = 1000.0 * batch / std::max(s.mean, 1e-9);
  }
}

// The latency table: one row per kind of run.
void printLatencies(const std::vector<std::tuple<const char*, Stats, size_t, bool>>& rows,
                    uint32_t batch) {
  std::printf("  %-13s %9s %9s %9s %9s %9s %9s %9s %6s %12s %12s\n", "latency, ms", "min", "mean",
              "median", "p90", "p95", "p99", "max", "runs", "inferences/s", "images/s");
  for (const auto& [label, s, runs, throughput] : rows) {
    std::printf("  %-13s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %6zu", label, s.min, s.mean,
                s.median, s.p90, s.p95, s.p99, s.max, runs);
    if (throughput)
      std::printf(" %12.1f %12.1f", 1000.0 / std::max(s.mean, 1e-9),
                  1000.0 * batch / std::max(s.mean, 1e-9));
    std::printf("\n");
  }
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

// GPU time from timestamps, on a profiled copy of the recording: 20 runs at most (3 untimed
// first), within what --duration leaves.
std::vector<double> gpuTimes(const Context& context, Session& session, const Budget& budget,
                             long iterations) {
  CommandBufferOptions profiled;
  profiled.reusable = true;
  profiled.profile = true;
  CommandBuffer pcb(context, "bench profile", profiled);
  session.encode(pcb);
  const long untimed = budget.bounded() ? 1 : 3;
  const long runs = (budget.bounded() ? 20 : std::min<long>(iterations, 20)) + untimed;
  const double seconds = budget.bounded() ? budget.share(1.0) : 0;
  std::vector<double> gpu;
  const auto start = Clock::now();
  for (long i = 0; i < runs; ++i) {
    pcb.commit();
    pcb.waitUntilCompleted();
    if (i >= untimed) gpu.push_back(pcb.gpuMilliseconds());
    if (!gpu.empty() && seconds > 0 && millisecondsSince(start) >= seconds * 1000) break;
  }
  return gpu;
}

void printHelp() {
  std::printf(
      "usage: vkcnn bench MODEL.onnx [options]\n\n"
      "Times the model: the recorded command buffer resubmitted with input and output on the\n"
      "GPU (wall time, and GPU time from timestamps), and end to end (the input copied into\n"
      "host-mapped memory, one submission that uploads it, runs the network and downloads the\n"
      "output, the output copied out). Prints min, mean, median, p90, p95, p99 and max\n"
      "latency, throughput (inferences/s, and images/s: inferences x --batch), dispatches,\n"
      "barriers and memory.\n\n"
      "  --iterations N      timed runs of each kind (default 100)\n"
      "  --duration S        the whole command takes about S seconds (load, warm-up and every\n"
      "                      kind of run), instead of --iterations runs; each kind runs at\n"
      "                      least once\n"
      "  --warmup N          untimed runs first (default 10, within a tenth of --duration)\n"
      "  --warmup-duration S untimed runs for S seconds first, instead of --warmup\n"
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
}

using ColdStarts = std::vector<std::tuple<std::string, std::string, ColdStart>>;

// --cold: a cold start without and one with the pipeline cache (a temporary directory), or one
// with the cache in --cache-dir; their figures into `times` and `counts`.
ColdStarts coldStarts(const Arguments& args, const ModelSetup& setup, const std::string& cacheDir,
                      std::map<std::string, double>& times,
                      std::map<std::string, uint64_t>& counts) {
  ColdStarts colds;
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
  return colds;
}

}  // namespace

int bench(const std::vector<std::string>& rest) {
  const auto commandStart = Clock::now();
  std::vector<Option> options = modelOptions();
  for (const Option& o : pictureOptions()) options.push_back(o);
  for (const char* o : {"--iterations", "--warmup", "--warmup-duration", "--duration",
                        "--reference", "--json", "--cache-dir"})
    options.push_back({o, OptionKind::value});
  options.push_back({"--input", OptionKind::repeated});
  options.push_back({"--cold", OptionKind::flag});
  options.push_back({"--cold-only", OptionKind::flag});
  Arguments args("bench", rest, options);
  if (args.has("--help")) {
    printHelp();
    return 0;
  }
  if (args.has("--iterations") && args.has("--duration"))
    throw UsageError("--iterations and --duration exclude each other");
  if (args.has("--warmup") && args.has("--warmup-duration"))
    throw UsageError("--warmup and --warmup-duration exclude each other");
  const long iterations = args.number("--iterations", 100);
  const Budget budget(args.real("--duration", 0, 0.001), commandStart);
  warmupLimit(args, budget);  // its values checked before the load
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
                   args.has("--warmup-duration") || !referencePath.empty()))
    throw UsageError(
        "--cold-only times the cold starts alone: it takes no --iterations, "
        "--duration, --warmup, --warmup-duration or --reference");
  // (label, JSON prefix, the cold start)
  ColdStarts colds;
  if (cold) colds = coldStarts(args, setup, cacheDir, times, counts);

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
  // Warm-up: both kinds of run, untimed.
  const Limit warmup = warmupLimit(args, budget);
  size_t warmupRuns = 0;
  const auto warmupStart = Clock::now();
  if (warmup.runs > 0 || warmup.seconds > 0)
    warmupRuns = timed("warm-up", warmup, [&] {
                   cb.commit(), cb.waitUntilCompleted();
                   session.run(in, out);
                 }).size();
  times["warmup_ms"] = millisecondsSince(warmupStart);
  // With --duration: what is left after the warm-up, 45% to each kind of run and the rest to the
  // GPU-time runs below.
  const auto phase = [&](double fraction) {
    return budget.bounded() ? Limit{0, budget.share(fraction)} : Limit{iterations, 0};
  };
  const std::vector<double> resident = timed("GPU-resident runs", phase(0.45), [&] {
    cb.commit();
    cb.waitUntilCompleted();
  });
  const std::vector<double> endToEnd =
      timed("end-to-end runs", phase(0.45 / 0.55), [&] { session.run(in, out); });
  session.releaseRecording();  // its temporary memory goes to the profiled run below
  const auto pool = cb.temporaryPoolStatistics();
  const std::vector<double> gpu = gpuTimes(context, session, budget, iterations);
  const Stats r = summarize(resident), e = summarize(endToEnd), g = summarize(gpu);
  addStats(times, "resident", r, session.batch());
  addStats(times, "end_to_end", e, session.batch());
  addStats(times, "gpu", g, 0);
  times["encode_ms"] = encodeMs;
  counts["resident_runs"] = resident.size();
  counts["end_to_end_runs"] = endToEnd.size();
  counts["gpu_runs"] = gpu.size();
  counts["warmup_runs"] = warmupRuns;
  counts["dispatches"] = encoding.dispatches;
  counts["barriers"] = encoding.barriers;
  counts["peak_temporary_bytes"] = pool.peakBytesInUse;
  counts["intermediate_tensor_bytes"] = session.graph().intermediateTensorBytes(session.batch());
  counts["chunks"] = session.chunks();
  counts["device_bytes"] = context.memoryStatistics().deviceBytesAllocated;
  counts["kernels"] = session.graph().statistics().kernels;
  times["bench_s"] = millisecondsSince(commandStart) / 1000;
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
    printLatencies({{"GPU-resident", r, resident.size(), true},
                    {"end-to-end", e, endToEnd.size(), true},
                    {"GPU time", g, gpu.size(), false}},
                   session.batch());
    std::printf("  (%zu warm-up runs in %.1f ms; the command took %.2f s)\n", warmupRuns,
                times["warmup_ms"], times["bench_s"]);
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
        .add("accumulate",
             setup.options.accumulatorPrecision == AccumulatorPrecision::float16 ? "fp16" : "fp32")
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
