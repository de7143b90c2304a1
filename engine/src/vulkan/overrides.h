// Every VKCNN_* environment variable vkcnn reads, declared once (kVariables in overrides.cpp: its
// name, meaning and default), and read once: when a Context starts (ContextImpl keeps the
// snapshot, ContextImpl::overrides), or once per process for the few read before any Context
// exists (processOverrides: the device the CLI checks, the loader threads, the ONNX importer's
// kill switch, the CLI's test hook). Nothing else in the engine calls getenv for a VKCNN_*
// variable, so `vkcnn info` can print what is in force and a test can see every switch here.
//
// Most are test and benchmark hooks (A/B measurements, forcing a configuration): ContextOptions
// holds the ones an application sets. Tests steer the convolution's choice through
// ChoiceOverrides on a Context (setChoiceOverrides) instead of the environment.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vkcnn/export.h"

namespace vkcnn {
class Context;
}

namespace vkcnn::detail {

// What forces the convolution family's choice (kernels/convolution_choice.h), each empty or 0 when
// the choice decides. The names are those the profile and the tuning file use.
struct ChoiceOverrides {
  // VKCNN_CONVOLUTION_TILE: a configuration name (a tile of convolution_tiles.h, "<tile>s<splits>",
  // matrix_large / matrix_medium / matrix_small, gemm_large / gemm_small / gemm_128x32w16 /
  // gemm_128x32w8 / gemm_128x16w8, "winograd", or "legacy": the choice before the large tiles).
  std::string tile;
  // VKCNN_CONVOLUTION_EPILOGUE: convolution_tiled's epilogue, "ahead", "inline" or "inline-fixed"
  // (anything else reads as empty).
  std::string epilogue;
  // VKCNN_CONVOLUTION_PIECES: a batch's pieces "separate" (one encode each) or "one" (one dispatch
  // wherever it can).
  std::string pieces;
  // VKCNN_FULLY_CONNECTED: batched1/2/4/8, batched, legacy, pieces, tensor, matrixN[/TILE].
  std::string fullyConnected;
  // VKCNN_WINOGRAD_ROUND_BYTES: a smaller round of Winograd's buffers (0: kWinogradRoundBytes).
  uint64_t winogradRoundBytes = 0;
  // VKCNN_WINOGRAD_MATRIX_TILE: WMxWN/FMxFN/STAGED[/KSTEPS], another tile of
  // winograd_matrix_gemm.comp.
  std::string winogradMatrixTile;
};

struct Overrides {
  // Read when a Context starts (ContextOptions win where they hold the same setting).
  std::string device;                            // VKCNN_DEVICE
  bool validation = false;                       // VKCNN_VALIDATION
  std::optional<uint64_t> fenceTimeoutMs;        // VKCNN_FENCE_TIMEOUT_MS
  std::optional<uint32_t> waitSpinMicroseconds;  // VKCNN_WAIT_SPIN_US
  bool noMatrixUnits = false;                    // VKCNN_NO_MATRIX_UNITS
  bool tune = false;                             // VKCNN_TUNE
  bool noWinograd = false;                       // VKCNN_NO_WINOGRAD
  uint32_t maxSharedMemory = 0;                  // VKCNN_MAX_SHARED_MEMORY (0: the device's)
  std::string deviceProfile;                     // VKCNN_DEVICE_PROFILE (empty: native)
  bool float16BitStores = true;                  // VKCNN_FLOAT16_BIT_STORES
  bool pipelineCache = true;                     // VKCNN_PIPELINE_CACHE
  std::string pipelineCacheDirectory;            // VKCNN_PIPELINE_CACHE_DIR
  bool uploadBatch = true;                       // VKCNN_UPLOAD_BATCH
  ChoiceOverrides choice;
  // The Graph's fusions (graph/), read with the Context the Graph is built on.
  bool fuseSilu = true;                                 // VKCNN_FUSE_SILU
  bool fuseSourceActivation = true;                     // VKCNN_FUSE_SOURCE_ACTIVATION
  bool fuseSqueezeExcitation = true;                    // VKCNN_FUSE_SQUEEZE_EXCITATION
  std::optional<uint64_t> squeezeExcitationMaxWeights;  // VKCNN_SE_MAX_WEIGHTS
  // Read once per process (processOverrides): used where no Context may exist yet.
  uint32_t loadThreads = 0;                 // VKCNN_LOAD_THREADS (0: hardware_concurrency)
  bool stripRawData = true;                 // VKCNN_STRIP_RAW_DATA
  bool cliInjectValidationMessage = false;  // VKCNN_CLI_INJECT_VALIDATION_MESSAGE

  // The variables that were set, "NAME=value" each, in overrideVariables' order (vkcnn info).
  std::vector<std::string> set;
};

// One variable: its name, what it does and its default, for `vkcnn info` and docs.
struct OverrideVariable {
  const char* name;
  const char* meaning;
  const char* defaultValue;
  bool perProcess;  // read once per process, not when a Context starts
};
VKCNN_API std::span<const OverrideVariable> overrideVariables();

// Every variable read through `lookup` (a getenv; null: unset).
using EnvironmentLookup = std::function<const char*(const char* name)>;
VKCNN_API Overrides readOverrides(const EnvironmentLookup& lookup);
// From the process environment now (a Context's, as it starts).
VKCNN_API Overrides readOverrides();
// The process's snapshot, read on first use and never changed.
VKCNN_API const Overrides& processOverrides();

// A Context's snapshot, read when it started.
VKCNN_API const Overrides& overrides(const Context& context);
// Test hook: replaces the Context's ChoiceOverrides. Not thread-safe against encodes on the
// Context: call it while no other thread encodes (tests/support's ScopedChoice).
VKCNN_API void setChoiceOverrides(const Context& context, const ChoiceOverrides& choice);
// Test hook: replaces the Context's fusion switches (fuseSilu, fuseSourceActivation,
// fuseSqueezeExcitation, squeezeExcitationMaxWeights) with `fusion`'s; the rest of `fusion` is
// ignored. Graphs read them when they compile (tests/support's ScopedFusion).
VKCNN_API void setFusionOverrides(const Context& context, const Overrides& fusion);

}  // namespace vkcnn::detail
