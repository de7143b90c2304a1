// vkcnn inspect on a compiled model (.vkcnn, told by its magic): what it was compiled from and how
// (the provenance), its inputs and outputs, its weights, and its kernels as they will run
// (Graph::describe() after plan(), on a Context whose device never starts: no GPU is used).
// Called by inspect.cpp, which describes ONNX models.
#include <cinttypes>
#include <cstdio>

#include "archive/archive.h"
#include "cli.h"
#include "graph/serialize.h"
#include "vulkan/context_start.h"

namespace vkcnn::cli {

namespace {

std::string dimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t k = 0; k < dims.size(); ++k) s += (k ? ", " : "") + std::to_string(dims[k]);
  return s + "]";
}

}  // namespace

int inspectCompiled(const std::string& path, const Arguments& args) {
  for (const char* option : {"--shape", "--batch", "--dot", "--fp16", "--fp32", "--accumulate"})
    if (args.has(option))
      throw UsageError(std::string(option) + " does not apply to " + path +
                       ", a compiled model: its shapes and precision are fixed (vkcnn compile "
                       "sets them)");
  const std::string json = args.get("--json");
  const archive::Archive file = archive::Archive::open(path);
  const archive::Provenance& p = file.provenance();
  const OnnxModelInfo info = detail::readModelInfo(file);
  const Context pending = detail::startContext({});
  Graph graph = detail::readGraph(pending, file);
  graph.plan();
  uint64_t weightBytes = 0;
  for (const archive::Weight& w : file.weights()) weightBytes += w.data.size();
  const std::vector<std::string> kernels = graph.describe();

  if (!json.empty()) {
    auto tensors = [](const std::vector<OnnxTensorInfo>& list) {
      std::string s = "[";
      for (size_t k = 0; k < list.size(); ++k) {
        std::string dims = "[";
        for (size_t d = 0; d < list[k].dims.size(); ++d)
          dims += (d ? ", " : "") + std::to_string(list[k].dims[d]);
        s += (k ? ", " : "") + Json().add("name", list[k].name).raw("shape", dims + "]").str();
      }
      return s + "]";
    };
    std::string kernelList = "[";
    for (size_t k = 0; k < kernels.size(); ++k)
      kernelList += (k ? ", " : "") + Json::quote(kernels[k]);
    Json j;
    j.add("model", path)
        .add("format",
             std::to_string(file.formatMajor()) + "." + std::to_string(file.formatMinor()))
        .add("source", p.sourceName)
        .add("source_size", p.sourceSize)
        .add("compiler", p.compiler)
        .add("precision", p.precision)
        .add("batch", p.batch)
        .add("weights", uint64_t(file.weights().size()))
        .add("weight_bytes", weightBytes)
        .raw("inputs", tensors(info.inputs))
        .raw("outputs", tensors(info.outputs))
        .raw("kernels", kernelList + "]");
    writeText(json, j.str() + "\n", "--json");
    if (json == "-") return 0;
  }
  std::printf("%s\n", path.c_str());
  std::printf("  compiled model, format %u.%u, by vkcnn %s for %s%s\n", file.formatMajor(),
              file.formatMinor(), p.compiler.c_str(), p.precision.c_str(),
              p.batch ? (", batch " + std::to_string(p.batch)).c_str() : "");
  std::printf("  from %s (%s, %" PRIu64 " bytes, XXH64 %016" PRIx64 "), producer %s\n",
              p.sourceName.c_str(), p.sourceFormat.c_str(), p.sourceSize, p.sourceHash,
              p.producer.empty() ? "(none)" : p.producer.c_str());
  std::printf("inputs:\n");
  for (const auto& i : info.inputs)
    std::printf("  %-24s %s\n", i.name.c_str(), dimsText(i.dims).c_str());
  std::printf("outputs:\n");
  for (const auto& o : info.outputs)
    std::printf("  %-24s %s\n", o.name.c_str(), dimsText(o.dims).c_str());
  std::printf("weights: %zu, %" PRIu64 " bytes\n", file.weights().size(), weightBytes);
  std::printf("kernels (%zu, as they will run):\n", kernels.size());
  for (const std::string& k : kernels) std::printf("  %s\n", k.c_str());
  return 0;
}

}  // namespace vkcnn::cli
