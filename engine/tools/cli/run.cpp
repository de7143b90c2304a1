// vkcnn run: one inference of a model on pictures, .npy or raw float32 files; prints the top
// classes (with --labels, names and softmax probabilities) and writes the outputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <set>

#include "cli.h"
#include "npy.h"

namespace vkcnn::cli {

namespace {

std::vector<std::string> readLabels(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::io, "--labels " + path + ": cannot open");
  std::vector<std::string> labels;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels.push_back(line);
  }
  return labels;
}

// Scores as probabilities: kept if they already are (non-negative, summing to 1), else softmax.
std::vector<double> probabilities(const float* scores, size_t n) {
  std::vector<double> p(scores, scores + n);
  double sum = 0;
  bool nonNegative = true;
  for (double v : p) sum += v, nonNegative &= v >= 0;
  if (nonNegative && std::abs(sum - 1) < 1e-3) return p;
  const double top = *std::max_element(p.begin(), p.end());
  double total = 0;
  for (double& v : p) total += (v = std::exp(v - top));
  for (double& v : p) v /= total;
  return p;
}

// The file of each output: `path` itself for one output, else `path` with the output's name
// (made a file name: ONNX names hold '/' and ':') before the extension. Names that become the
// same file ('a/b' and 'a_b') get _2, _3, ... so that no output overwrites another.
std::vector<std::string> outputFiles(const std::string& path,
                                     const std::vector<SessionTensorInfo>& outputs) {
  if (outputs.size() == 1) return {path};
  const auto slash = path.rfind('/');
  auto dot = path.rfind('.');
  if (dot != std::string::npos && slash != std::string::npos && dot < slash)
    dot = std::string::npos;
  const std::string stem = path.substr(0, dot);
  const std::string extension = dot == std::string::npos ? "" : path.substr(dot);
  std::vector<std::string> files;
  std::set<std::string> taken;
  for (const SessionTensorInfo& info : outputs) {
    std::string name = info.name;
    for (char& ch : name)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.') ch = '_';
    std::string file = stem + "_" + name + extension;
    for (int n = 2; taken.count(file); ++n)
      file = stem + "_" + name + "_" + std::to_string(n) + extension;
    taken.insert(file);
    files.push_back(file);
  }
  return files;
}

// float16 holds nothing below about 6e-8: a model whose outputs are that small (logits of 1e-9)
// comes back as zeros. An output that is all zero in float16 is worth a second look in float32.
void warnIfUnderflowed(const Session& session, const SessionTensorInfo& info,
                       const std::vector<float>& values) {
  if (session.precision() != ChannelFormat::float16 || values.empty()) return;
  if (std::any_of(values.begin(), values.end(), [](float v) { return v != 0; })) return;
  std::fprintf(stderr,
               "vkcnn run: warning: output '%s' is all zero in float16; values below 6e-8 "
               "underflow to zero there: run with --fp32 to check\n",
               info.name.c_str());
}

}  // namespace

int run(const std::vector<std::string>& rest) {
  std::vector<Option> options = modelOptions();
  for (const Option& o : pictureOptions()) options.push_back(o);
  for (const char* o : {"--output", "--top", "--labels", "--json"})
    options.push_back({o, OptionKind::value});
  options.push_back({"--input", OptionKind::repeated});
  Arguments args("run", rest, options);
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn run MODEL.onnx --input FILE [options]\n\n"
        "Runs the model once and prints its outputs (the top-K classes of a classifier).\n\n"
        "  --input FILE        a picture (PNG, JPEG, ...), a .npy, or raw little-endian float32\n"
        "                      (.bin); a .npy's shape sets its input's dynamic dimensions\n"
        "  --input NAME=FILE   the same for input NAME of a model with several inputs\n"
        "  --output FILE       writes every output: FILE.npy (or .bin: raw float32); with several\n"
        "                      outputs, FILE gets the output's name inserted before the extension\n"
        "  --top K             classes to print per image (default 5)\n"
        "  --labels FILE       class names, one per line: prints them with softmax\n"
        "                      probabilities\n"
        "  --json FILE         the outputs' top classes and the time as JSON (- for standard "
        "output)\n"
        "%s%s",
        kModelOptionsHelp, kPictureOptionsHelp);
    return 0;
  }
  if (!args.has("--input")) throw UsageError("run needs --input FILE");
  const ModelSetup setup = prepareModel(args, true);
  for (const auto& input : setup.declared.inputs)
    if (!setup.inputFiles.count(input.name))
      throw UsageError("input '" + input.name + "' has no file: give --input " + input.name +
                       "=FILE");
  const std::string outputPath = args.get("--output"), json = args.get("--json");
  if (!outputPath.empty()) checkWritable(outputPath, "--output");
  if (!json.empty()) checkWritable(json, "--json");
  std::vector<std::string> labels;
  if (args.has("--labels")) {
    checkReadable(args.get("--labels"), "--labels");
    labels = readLabels(args.get("--labels"));
  }
  const long top = args.number("--top", 5);

  Context context = makeContext(args);
  Session session = loadSession(context, setup);
  std::map<std::string, HostTensor> inputs;
  for (const auto& info : session.inputs())
    inputs[info.name] = {info.shape, loadInput(setup.inputFiles.at(info.name), info, args)};
  Progress progress("running");
  const auto start = Clock::now();
  std::map<std::string, HostTensor> outputs = session.run(inputs);
  const double ms = millisecondsSince(start);
  progress.finish();

  const bool quiet = json == "-";  // standard output is the JSON's
  std::string outputsJson = "[";
  const std::vector<std::string> files =
      outputPath.empty() ? std::vector<std::string>{} : outputFiles(outputPath, session.outputs());
  for (size_t index = 0; index < session.outputs().size(); ++index) {
    const SessionTensorInfo& info = session.outputs()[index];
    const std::vector<float>& values = outputs[info.name].data;
    if (!quiet) warnIfUnderflowed(session, info, values);
    if (!quiet) std::printf("output '%s' %s\n", info.name.c_str(), shapeText(info.shape).c_str());
    const size_t images = info.shape.empty() ? 1 : size_t(std::max<int64_t>(info.shape[0], 1));
    const size_t perImage = values.size() / images;
    if (!labels.empty() && labels.size() != perImage && !quiet)
      std::fprintf(stderr, "vkcnn run: --labels has %zu names for %zu classes of output '%s'\n",
                   labels.size(), perImage, info.name.c_str());
    std::string topJson = "[";
    for (size_t n = 0; n < images && perImage; ++n) {
      const float* scores = values.data() + n * perImage;
      std::vector<size_t> order(perImage);
      std::iota(order.begin(), order.end(), 0);
      const size_t k = std::min<size_t>(size_t(top), perImage);
      std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                        [&](size_t a, size_t b) { return scores[a] > scores[b]; });
      const std::vector<double> p =
          labels.empty() ? std::vector<double>{} : probabilities(scores, perImage);
      for (size_t i = 0; i < k; ++i) {
        const size_t cls = order[i];
        const std::string label = cls < labels.size() ? labels[cls] : "";
        if (!quiet) {
          if (labels.empty())
            std::printf("  image %zu  #%zu  class %zu  %.6g\n", n, i + 1, cls, scores[cls]);
          else
            std::printf("  image %zu  #%zu  class %zu  %6.2f%%  %s\n", n, i + 1, cls, 100 * p[cls],
                        label.c_str());
        }
        Json entry;
        entry.add("image", uint64_t(n)).add("rank", uint64_t(i + 1)).add("class", uint64_t(cls));
        entry.add("score", double(scores[cls]));
        if (!labels.empty()) entry.add("probability", p[cls]).add("label", label);
        topJson += (topJson.size() > 1 ? ", " : "") + entry.str();
      }
    }
    topJson += "]";
    Json o;
    std::string dims = "[";
    for (int64_t d : info.shape) dims += (dims.size() > 1 ? ", " : "") + std::to_string(d);
    o.add("name", info.name).raw("shape", dims + "]").raw("top", topJson);
    if (!outputPath.empty()) {
      const std::string& file = files[index];
      if (endsWith(lower(file), ".bin"))
        writeRawFloats(file, values);
      else
        writeNpy(file, {info.shape, values});
      if (!quiet) std::printf("  written to %s\n", file.c_str());
      o.add("file", file);
    }
    outputsJson += (outputsJson.size() > 1 ? ", " : "") + o.str();
  }
  outputsJson += "]";
  if (!json.empty()) {
    Json j;
    j.add("model", setup.path)
        .add("device", context.capabilities().deviceName)
        .add("format", precisionName(session.precision()))
        .add("batch", session.batch())
        .add("milliseconds", ms)
        .raw("outputs", outputsJson);
    writeText(json, j.str() + "\n", "--json");
  }
  std::fprintf(stderr, "ran on %s in %.2f ms (first run, pipelines included)\n",
               context.capabilities().deviceName.c_str(), ms);
  return 0;
}

}  // namespace vkcnn::cli
