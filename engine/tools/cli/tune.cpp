// vkcnn tune: times the candidate configurations of every convolution shape of a model on this
// device and keeps the fastest in the tuning file beside the pipeline cache
// (vkcnn/convolution_tuning.h); later runs on the same device and driver use them.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli.h"
#include "vkcnn/convolution_tuning.h"

namespace vkcnn::cli {

int tune(const std::vector<std::string>& rest) {
  std::vector<Option> options = modelOptions();
  options.push_back({"--iterations", OptionKind::value});
  Arguments args("tune", rest, options);
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn tune MODEL.onnx [options]\n\n"
        "Times every candidate configuration of each convolution shape of the model not tuned "
        "yet\n(--iterations runs of the whole model per candidate, default 5) and keeps the "
        "fastest\nin the tuning file beside the pipeline cache, keyed by device, driver and "
        "shape.\nTune each batch size and precision you run.\n\n%s",
        kModelOptionsHelp);
    return 0;
  }
  const long iterations = std::max(1L, args.number("--iterations", 5));
  const ModelSetup setup = prepareModel(args, false);
  Context context = makeContext(args);
  Session session = loadSession(context, setup);
  std::printf("tuning file %s (%zu entries%s)\n", ConvolutionTuning::file(context).c_str(),
              ConvolutionTuning::size(context),
              ConvolutionTuning::loaded(context) ? "" : ", none read");
  Progress progress("tuning");
  uint32_t rounds = 1;
  // Rounds 0..rounds-1, then round 0 again: see ConvolutionTuning::beginRound.
  for (uint32_t pass = 0; pass <= rounds; ++pass) {
    const uint32_t round = pass == rounds ? 0 : pass;
    if (pass == rounds && rounds == 1) break;
    ConvolutionTuning::beginRound(context, round);
    CommandBufferOptions cbOptions;
    cbOptions.reusable = true;
    cbOptions.profile = true;
    CommandBuffer cb(context, "tune", cbOptions);
    session.encode(cb);
    // Warm-up: clocks and caches; the first pass for about half a second.
    const auto start = std::chrono::steady_clock::now();
    do {
      cb.commit();
      cb.waitUntilCompleted();
    } while (pass == 0 &&
             std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
    for (long i = 0; i < iterations; ++i) {
      cb.commit();
      cb.waitUntilCompleted();
      const std::vector<KernelTiming> timings = cb.kernelTimings();
      rounds = ConvolutionTuning::record(context, timings);
    }
    progress.step(pass + 1, rounds + 1);
  }
  progress.finish();
  const std::vector<TunedConvolution> tuned = ConvolutionTuning::finish(context);
  double before = 0, after = 0;
  std::printf("%-58s %-16s %9s %-16s %9s\n", "shape", "cost model", "ms", "measured best", "ms");
  for (const TunedConvolution& t : tuned) {
    std::printf("%-58.58s %-16s %9.4f %-16s %9.4f\n", t.key.c_str(), t.modelChoice.c_str(),
                t.modelMilliseconds, t.winner.c_str(), t.winnerMilliseconds);
    before += t.modelMilliseconds;
    after += t.winnerMilliseconds;
  }
  std::printf(
      "%zu shapes tuned over %u rounds: %.3f -> %.3f ms (per dispatch of each shape, "
      "summed); %zu entries in %s\n",
      tuned.size(), rounds, before, after, ConvolutionTuning::size(context),
      ConvolutionTuning::file(context).c_str());
  return 0;
}

}  // namespace vkcnn::cli
