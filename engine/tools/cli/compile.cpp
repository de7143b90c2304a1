// vkcnn compile: an ONNX model to a .vkcnn file (docs/model-format.md), the optimised Graph for
// one precision, batch and set of input shapes, and its weights, with what it was compiled from.
// It needs no Vulkan device: the import and the rewrites are host-only (Graph::plan()'s part), run
// on a Context whose device is never started. Built with ONNX only (no_onnx.cpp says so
// otherwise); the file it writes loads with libvkcnn alone.
#include <cstdio>
#include <filesystem>

#include "archive/archive.h"
#include "cli.h"
#include "graph/serialize.h"
#include "vkcnn/version.h"
#include "vulkan/context_start.h"

namespace vkcnn::cli {

namespace {

archive::Provenance provenanceOf(const ModelSetup& setup, const OnnxModelInfo& info) {
  archive::Provenance p;
  p.sourceName = std::filesystem::path(setup.path).filename().string();
  p.sourceFormat = "onnx";
  const archive::SourceDigest digest =
      archive::digestFile(setup.path, "ONNX model '" + setup.path + "'");
  p.sourceSize = digest.size;
  p.sourceHash = digest.hash;
  p.opsets.push_back({"", info.opsetVersion});
  p.producer = info.producerName + (info.producerVersion.empty() ? "" : " " + info.producerVersion);
  p.compiler = versionString();
  p.precision = setup.options.precision == ChannelFormat::float32 ? "fp32" : "fp16";
  for (const auto& [name, dims] : setup.options.inputShapes) p.shapes.push_back({name, dims});
  p.batch = setup.options.batch;
  return p;
}

}  // namespace

int compile(const std::vector<std::string>& rest) {
  std::vector<std::string> given = rest;
  for (std::string& a : given)
    if (a == "-o") a = "--output";
  std::vector<Option> options = modelOptions();
  options.push_back({"--output", OptionKind::value});
  Arguments args("compile", given, options);
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn compile MODEL.onnx -o MODEL.vkcnn [options]\n\n"
        "Compiles the model for one precision, batch and input shape into a .vkcnn file, which\n"
        "run, bench, profile and inspect take (and Session, the C API and Python) where they take\n"
        "the .onnx, without ONNX. Needs no Vulkan device.\n\n"
        "  -o, --output FILE   the .vkcnn file to write (replaced whole, never half written)\n"
        "%s",
        kModelOptionsHelp);
    return 0;
  }
  if (!args.has("--output")) throw UsageError("compile needs -o MODEL.vkcnn");
  if (args.has("--device")) throw UsageError("compile uses no device: --device does not apply");
  const std::string output = args.get("--output");
  checkWritable(output, "--output");
  const ModelSetup setup = prepareModel(args, false);

  Progress progress("compiling " + setup.path);
  // A Context whose device never starts: anything that reached for it would wait, and nothing
  // does (tests/test_onnx_plan.cpp).
  const ContextOptions contextOptions;
  const Context context = detail::startContext(contextOptions);
  OnnxImportOptions o;
  o.inputShapes = setup.options.inputShapes;
  o.dynamicBatchSize = setup.options.batch ? setup.options.batch : 1;
  o.channelFormat = setup.options.precision;
  o.accumulatorPrecision = setup.options.accumulatorPrecision;
  OnnxImport imported = importOnnxModel(context, setup.path, o);
  archive::Writer writer(provenanceOf(setup, imported.info));
  detail::writeGraph(imported.graph, writer, &imported.info);
  writer.write(output);
  progress.finish();
  const GraphStatistics statistics = imported.graph.statistics();
  std::printf("%s: %u nodes (%u fused neurons, %u folded batch normalizations), %llu bytes\n",
              output.c_str(), statistics.nodes, statistics.fusedNeurons,
              statistics.foldedBatchNormalizations,
              static_cast<unsigned long long>(std::filesystem::file_size(output)));
  return 0;
}

}  // namespace vkcnn::cli
