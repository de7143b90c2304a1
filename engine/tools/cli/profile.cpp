// vkcnn profile: the GPU time of every kernel of a model, from timestamps around each dispatch,
// or of every barrier level (--levels), from timestamps at the barriers. --trace writes the last
// run's timeline in Chrome's trace-event format (Perfetto, chrome://tracing).
#include <algorithm>
#include <cstdio>
#include <string_view>

#include "cli.h"

namespace vkcnn::cli {

namespace {

constexpr size_t kKernelColumn = 52;

// `text` in pieces of at most `width` characters, broken after a space, comma, slash or closing
// bracket where one is near the end of a piece, so that a long kernel name keeps every character
// over several lines of its column.
std::vector<std::string> wrapped(const std::string& text, size_t width) {
  std::vector<std::string> pieces;
  size_t at = 0;
  while (text.size() - at > width) {
    size_t cut = width;
    for (size_t k = width; k > width / 2; --k)
      if (std::string_view(" ,/)]").find(text[at + k - 1]) != std::string_view::npos) {
        cut = k;
        break;
      }
    pieces.push_back(text.substr(at, cut));
    at += cut;
  }
  pieces.push_back(text.substr(at));
  return pieces;
}

// The last run's dispatches (or levels) as Chrome trace events: complete events ("ph": "X", times
// in microseconds from the first dispatch's start) on one track, as vkcnn records everything on
// the Context's one queue. The gap before a dispatch is drawn as its own event: the wait at a
// barrier (or the launch) between the previous dispatch's end and its start. `barrierLevels`, if
// given, is a run of its own with timestamps at the barriers only (--levels' timing), drawn as a
// second process: which dispatches share a barrier, and what each level costs with its barrier.
std::string traceEvents(const std::vector<KernelTiming>& run,
                        const std::vector<std::string>& labels,
                        const std::vector<std::string>& configs, const std::vector<double>& medians,
                        const std::string& device, bool levels,
                        const std::vector<KernelTiming>& barrierLevels) {
  constexpr uint64_t kTid = 1;
  uint64_t pid = 1;
  auto event = [&](const char* phase, const std::string& name) {
    Json e;
    e.add("name", name).add("ph", phase).add("pid", pid).add("tid", kTid);
    return e;
  };
  std::string events =
      event("M", "process_name").raw("args", Json().add("name", "vkcnn on " + device).str()).str();
  events +=
      ", " +
      event("M", "thread_name").raw("args", Json().add("name", "queue 0 (compute)").str()).str();
  double previousEnd = 0;
  for (size_t k = 0; k < run.size() && k < labels.size(); ++k) {
    const double start = run[k].startMilliseconds * 1e3, duration = run[k].milliseconds * 1e3;
    if (k > 0 && start > previousEnd)
      events += ", " + event("X", "wait (barrier or launch)")
                           .add("cat", "wait")
                           .add("ts", previousEnd)
                           .add("dur", start - previousEnd)
                           .str();
    Json args;
    args.add("index", uint64_t(k)).add("dispatches", run[k].dispatches);
    if (!configs[k].empty()) args.add("configuration", configs[k]);
    args.add("median_ms", medians[k]);
    events += ", " + event("X", labels[k])
                         .add("cat", levels ? "level" : "dispatch")
                         .add("ts", start)
                         .add("dur", duration)
                         .raw("args", args.str())
                         .str();
    previousEnd = std::max(previousEnd, start + duration);
  }
  if (!barrierLevels.empty()) {
    pid = 2;
    events += ", " + event("M", "process_name")
                         .raw("args", Json().add("name", "barrier levels (a run of its own)").str())
                         .str();
    events +=
        ", " +
        event("M", "thread_name").raw("args", Json().add("name", "queue 0 (compute)").str()).str();
    for (size_t k = 0; k < barrierLevels.size(); ++k)
      events += ", " + event("X", "level " + std::to_string(k) + " (" +
                                      std::to_string(barrierLevels[k].dispatches) + " dispatches)")
                           .add("cat", "level")
                           .add("ts", barrierLevels[k].startMilliseconds * 1e3)
                           .add("dur", barrierLevels[k].milliseconds * 1e3)
                           .raw("args", Json().add("dispatches", barrierLevels[k].label).str())
                           .str();
  }
  return Json().raw("traceEvents", "[" + events + "]").add("displayTimeUnit", "ms").str() + "\n";
}

// One run of `session` with timestamps at the barriers only (after one untimed run).
std::vector<KernelTiming> levelRun(const Context& context, Session& session) {
  CommandBufferOptions options;
  options.reusable = options.profile = options.profileLevels = true;
  CommandBuffer cb(context, "profile levels", options);
  session.encode(cb);
  for (int run = 0; run < 2; ++run) {
    cb.commit();
    cb.waitUntilCompleted();
  }
  return cb.kernelTimings();
}

}  // namespace

int profile(const std::vector<std::string>& rest) {
  std::vector<Option> options = modelOptions();
  options.push_back({"--iterations", OptionKind::value});
  options.push_back({"--json", OptionKind::value});
  options.push_back({"--levels", OptionKind::flag});
  options.push_back({"--trace", OptionKind::value});
  Arguments args("profile", rest, options);
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn profile MODEL.onnx [options]\n\n"
        "Prints the GPU time of every kernel (median of --iterations runs, default 10), in "
        "order.\n\n"
        "  --levels            the time of every barrier level instead: the dispatches between\n"
        "                      two barriers run side by side, as in an inference (a timestamp\n"
        "                      around each dispatch runs them one by one, so a batch split in\n"
        "                      pieces shows the pieces' times added up)\n"
        "  --json FILE         the same as JSON (- for standard output)\n"
        "  --trace FILE.json   the last run's timeline in Chrome's trace-event format, for\n"
        "                      Perfetto (ui.perfetto.dev) or chrome://tracing: each dispatch (or\n"
        "                      level) with its layer, configuration and the wait before it,\n"
        "                      and a run timed at the barriers only: which dispatches share "
        "one\n%s",
        kModelOptionsHelp);
    return 0;
  }
  const long iterations = args.number("--iterations", 10);
  const ModelSetup setup = prepareModel(args, false);
  const std::string json = args.get("--json");
  const bool levels = args.has("--levels");
  const std::string trace = args.get("--trace");
  if (!json.empty()) checkWritable(json, "--json");
  if (!trace.empty()) checkWritable(trace, "--trace");
  if (trace == "-" && json == "-")
    throw UsageError("--json - and --trace - would both write to standard output; give one a file");
  const bool quiet = json == "-" || trace == "-";  // standard output holds JSON only
  Context context = makeContext(args);
  Session session = loadSession(context, setup);
  CommandBufferOptions cbOptions;
  cbOptions.reusable = true;
  cbOptions.profile = true;
  cbOptions.profileLevels = levels;
  CommandBuffer cb(context, "profile", cbOptions);
  session.encode(cb);
  std::vector<std::vector<double>> times;
  std::vector<std::string> labels;
  std::vector<uint32_t> dispatches;
  std::vector<KernelTiming> last;  // the last run's, for --trace
  Progress progress("profiling");
  cb.commit();
  cb.waitUntilCompleted();
  for (long i = 0; i < iterations; ++i) {
    cb.commit();
    cb.waitUntilCompleted();
    const auto t = cb.kernelTimings();
    last = t;
    if (times.empty()) {
      times.resize(t.size());
      for (const auto& k : t) labels.push_back(k.label), dispatches.push_back(k.dispatches);
    }
    for (size_t k = 0; k < t.size() && k < times.size(); ++k) times[k].push_back(t[k].milliseconds);
    progress.step(uint64_t(i + 1), uint64_t(iterations));
  }
  progress.finish();
  double total = 0;
  std::vector<double> medians;
  for (auto& t : times) medians.push_back(summarize(t).median), total += medians.back();
  const uint32_t barriers = cb.encodingStatistics().barriers;
  uint64_t count = 0;
  for (uint32_t d : dispatches) count += d;
  // A convolution's label ends with its configuration in parentheses (Convolution::configuration).
  // A level's label lists its dispatches' labels whole.
  std::vector<std::string> configs(labels.size());
  for (size_t k = 0; k < labels.size() && !levels; ++k)
    if (const size_t open = labels[k].rfind(" (");
        open != std::string::npos && labels[k].back() == ')') {
      configs[k] = labels[k].substr(open + 2, labels[k].size() - open - 3);
      labels[k].resize(open);
    }
  if (!quiet && levels) {
    std::printf("%-4s %10s %7s %5s  %s\n", "#", "ms", "%", "disp.", "dispatches side by side");
    for (size_t k = 0; k < medians.size(); ++k)
      std::printf("%-4zu %10.4f %6.1f%% %5u  %s\n", k, medians[k],
                  100.0 * medians[k] / std::max(total, 1e-12), dispatches[k], labels[k].c_str());
    std::printf("total GPU time %.3f ms over %zu levels, %llu dispatches (%u barriers)\n", total,
                medians.size(), static_cast<unsigned long long>(count), barriers);
  } else if (!quiet) {
    // Whole names: a long one continues on the next lines of its column.
    int configWidth = 18;
    for (const std::string& c : configs) configWidth = std::max(configWidth, int(c.size()));
    std::printf("%-4s %-*s %-*s %10s %7s\n", "#", int(kKernelColumn), "kernel", configWidth,
                "configuration", "ms", "%");
    for (size_t k = 0; k < medians.size(); ++k) {
      const std::vector<std::string> name = wrapped(labels[k], kKernelColumn);
      std::printf("%-4zu %-*s %-*s %10.4f %6.1f%%\n", k, int(kKernelColumn), name[0].c_str(),
                  configWidth, configs[k].c_str(), medians[k],
                  100.0 * medians[k] / std::max(total, 1e-12));
      for (size_t line = 1; line < name.size(); ++line)
        std::printf("%-4s %s\n", "", name[line].c_str());
    }
    std::printf("total kernel time %.3f ms over %zu dispatches (%u barriers)\n", total,
                medians.size(), barriers);
  }
  // The values that left the image layout (issue #12): the nodes whose output is a Tensor
  // (constants left out).
  std::vector<std::string> tensorValues;
  for (const std::string& line : session.graph().describe())
    if (line.find(") -> tensor [") != std::string::npos &&
        line.find("(constant) -> tensor") == std::string::npos)
      tensorValues.push_back(line);
  if (!quiet && !tensorValues.empty()) {
    std::printf("values on Tensors (%zu):\n", tensorValues.size());
    for (const std::string& line : tensorValues) std::printf("  %s\n", line.c_str());
  }
  if (!json.empty()) {
    std::string kernels = "[";
    for (size_t k = 0; k < medians.size(); ++k)
      kernels += (k ? ", " : "") + Json()
                                       .add("label", labels[k])
                                       .add("configuration", configs[k])
                                       .add("median_ms", medians[k])
                                       .add("dispatches", uint64_t(dispatches[k]))
                                       .str();
    Json j;
    j.add("model", setup.path)
        .add("device", context.capabilities().deviceName)
        .add("format", precisionName(session.precision()))
        .add("batch", session.batch())
        .add("iterations", uint64_t(iterations))
        .add("levels", levels)
        .add("total_ms", total)
        .add("dispatches", count)
        .add("barriers", barriers)
        .raw("kernels", kernels + "]");
    std::string values = "[";
    for (size_t k = 0; k < tensorValues.size(); ++k)
      values += (k ? ", " : "") + Json().add("node", tensorValues[k]).str();
    j.raw("tensor_values", values + "]");
    writeText(json, j.str() + "\n", "--json");
  }
  if (!trace.empty())
    writeText(trace,
              traceEvents(last, labels, configs, medians, context.capabilities().deviceName, levels,
                          levels ? std::vector<KernelTiming>{} : levelRun(context, session)),
              "--trace");
  return 0;
}

}  // namespace vkcnn::cli
