// Choice by measurement for convolutions (issue #11): which configuration (a matrix-unit tile of
// convolution_tiles.h, a split-k shader, "legacy", a portable GEMM tile) each convolution shape
// runs with on this device, kept in a file beside the pipeline cache
// (convolution-tuning-VENDOR-DEVICE-UUID.bin in Context::pipelineCacheFile()'s directory; none
// where the pipeline cache is off). The file is read on first use, behind a header (magic,
// version, vendor, device, driver version, device UUID, size, checksum): a truncated, corrupt or
// foreign file is ignored with a warning through the Context's log, never an error.
//
// Precedence at encode: VKCNN_CONVOLUTION_TILE (tests and benchmarks) > the tuning entry of the
// shape > the cost model of convolution.cpp. An entry that does not apply to its shape (a tile
// too wide for a group, a name this build lacks) falls back to the cost model.
//
// Tuning is done in rounds over a whole network (`vkcnn tune`, tools/cli/tune.cpp): in round r
// every convolution shape without an entry encodes its r-th candidate; the caller runs the
// command buffer with profiling and hands the kernel timings back; finish() keeps each shape's
// fastest candidate and writes the file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/export.h"

namespace vkcnn {

// One convolution shape after tuning: what the cost model picked, what won and their times.
struct TunedConvolution {
  std::string key;                                       // the shape, as the file keys it
  std::string modelChoice;                               // what the cost model picks
  std::string winner;                                    // the fastest candidate
  double modelMilliseconds = 0, winnerMilliseconds = 0;  // per dispatch
  uint32_t candidates = 0;                               // configurations timed
};

// The tuning file of a Context and the rounds that fill it (static: the state hangs off the
// Context).
class VKCNN_API ConvolutionTuning {
 public:
  // The file's path ("" when the pipeline cache is off) and whether a valid one was read.
  static std::string file(const Context& context);
  static bool loaded(const Context& context);
  // The entry of a shape key ("" if none); set() replaces it in memory, save() writes the file.
  static std::string lookup(const Context& context, const std::string& key);
  static void set(const Context& context, const std::string& key, const std::string& configuration);
  static void save(const Context& context);
  static size_t size(const Context& context);

  // Trial rounds: until finish(), encodes of shapes without an entry use candidate `round` of
  // their list (the cost model's choice first; shapes with fewer candidates use their last).
  // Round 0 once more after the others times the cost model's choice anew (first rounds run on
  // cold clocks).
  static void beginRound(const Context& context, uint32_t round);
  // The timings of a profiled command buffer encoded in this round, one per dispatch
  // (CommandBufferOptions::profile without profileLevels: a level's time would include its
  // barrier); returns how many rounds the longest candidate list needs.
  static uint32_t record(const Context& context, std::span<const KernelTiming> timings);
  // Keeps each tried shape's fastest candidate, writes the file, ends the trials.
  static std::vector<TunedConvolution> finish(const Context& context);
};

}  // namespace vkcnn
