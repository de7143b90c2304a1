// The table of VKCNN_* environment variables (overrides.h): each one's name, meaning, default and
// how its value is read, in one place.
#include "vulkan/overrides.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "vulkan/context_impl.h"

namespace vkcnn::detail {
namespace {

// Set and not "0", "false" or "off".
bool on(const char* v) {
  const std::string_view s(v);
  return !s.empty() && s != "0" && s != "false" && s != "off";
}
bool zero(const char* v) {
  return std::string_view(v) == "0";
}
uint64_t number(const char* v) {
  return std::strtoull(v, nullptr, 10);
}
// A positive int, as atoi reads it; 0 otherwise.
uint32_t positive(const char* v) {
  const int n = std::atoi(v);
  return n > 0 ? uint32_t(n) : 0;
}

struct Variable {
  OverrideVariable about;
  void (*read)(Overrides& o, const char* value);  // value: set (possibly empty)
};

const Variable kVariables[] = {
    {{"VKCNN_DEVICE", "the device, by index or a substring of its name (ContextOptions::device)",
      "the first discrete GPU, then integrated, virtual, CPU", false},
     [](Overrides& o, const char* v) { o.device = v; }},
    {{"VKCNN_VALIDATION",
      "1: the Khronos validation layer with synchronization validation "
      "(ContextOptions::validation)",
      "off", false},
     [](Overrides& o, const char* v) { o.validation = on(v); }},
    {{"VKCNN_FENCE_TIMEOUT_MS",
      "how long a wait for the GPU may take before the device is lost "
      "(ContextOptions::fenceTimeoutMs)",
      "300000", false},
     [](Overrides& o, const char* v) {
       if (*v) o.fenceTimeoutMs = number(v);
     }},
    {{"VKCNN_WAIT_SPIN_US",
      "how long a wait polls the fence before it blocks (ContextOptions::waitSpinMicroseconds)",
      "2000 on GPUs, 0 on CPU devices", false},
     [](Overrides& o, const char* v) {
       if (*v) o.waitSpinMicroseconds = uint32_t(std::min<uint64_t>(number(v), UINT32_MAX));
     }},
    {{"VKCNN_NO_MATRIX_UNITS", "1: no cooperative matrices (ContextOptions::matrixUnits false)",
      "matrix units where the device has them", false},
     [](Overrides& o, const char* v) { o.noMatrixUnits = on(v); }},
    {{"VKCNN_TUNE", "1: convolution shapes without a tuning entry are timed at their first encode",
      "off", false},
     [](Overrides& o, const char* v) { o.tune = on(v); }},
    {{"VKCNN_NO_WINOGRAD", "1: no Winograd weights, 3x3 layers on the GEMM tiles", "Winograd on",
      false},
     [](Overrides& o, const char* v) { o.noWinograd = on(v); }},
    {{"VKCNN_MAX_SHARED_MEMORY",
      "N: at most N bytes of shared memory a workgroup, as a smaller device has (test hook)",
      "the device's", false},
     [](Overrides& o, const char* v) { o.maxSharedMemory = positive(v); }},
    {{"VKCNN_DEVICE_PROFILE",
      "native or mobile: mobile clamps the device's limits and features to a mobile-class "
      "device's (ContextOptions::deviceProfile)",
      "native", false},
     [](Overrides& o, const char* v) { o.deviceProfile = v; }},
    {{"VKCNN_FLOAT16_BIT_STORES", "0: float16 images written as floats, not as their bits",
      "bits where the driver rounds to nearest even", false},
     [](Overrides& o, const char* v) { o.float16BitStores = !zero(v); }},
    {{"VKCNN_PIPELINE_CACHE", "0 or off: no pipeline cache file", "on", false},
     [](Overrides& o, const char* v) {
       o.pipelineCache = !(zero(v) || std::string_view(v) == "off");
     }},
    {{"VKCNN_PIPELINE_CACHE_DIR", "the directory of the pipeline cache and tuning files",
      "$XDG_CACHE_HOME/vkcnn, else ~/.cache/vkcnn", false},
     [](Overrides& o, const char* v) { o.pipelineCacheDirectory = v; }},
    {{"VKCNN_UPLOAD_BATCH", "0: every weight buffer uploads at once (the kill switch)",
      "uploads batched", false},
     [](Overrides& o, const char* v) { o.uploadBatch = !zero(v); }},
    {{"VKCNN_CONVOLUTION_TILE",
      "forces a convolution configuration by name (test and benchmark hook)", "the choice decides",
      false},
     [](Overrides& o, const char* v) { o.choice.tile = v; }},
    {{"VKCNN_CONVOLUTION_EPILOGUE",
      "ahead, inline or inline-fixed: forces convolution_tiled's epilogue (test hook)",
      "by the layer's workgroups", false},
     [](Overrides& o, const char* v) {
       const std::string_view s(v);
       o.choice.epilogue = s == "ahead" || s == "inline" || s == "inline-fixed" ? v : "";
     }},
    {{"VKCNN_CONVOLUTION_PIECES",
      "separate or one: a batch's pieces encoded one by one, or in one dispatch (test hook)",
      "one dispatch where that saves a wave", false},
     [](Overrides& o, const char* v) { o.choice.pieces = v; }},
    {{"VKCNN_FULLY_CONNECTED",
      "batched1/2/4/8, batched, legacy, pieces, tensor, matrixN[/TILE]: forces the fully "
      "connected shader (test and benchmark hook)",
      "the choice decides", false},
     [](Overrides& o, const char* v) { o.choice.fullyConnected = v; }},
    {{"VKCNN_WINOGRAD_ROUND_BYTES", "N: smaller rounds of Winograd's buffers (test hook)",
      "128 MiB", false},
     [](Overrides& o, const char* v) { o.choice.winogradRoundBytes = number(v); }},
    {{"VKCNN_WINOGRAD_MATRIX_TILE",
      "WMxWN/FMxFN/STAGED[/KSTEPS]: another tile of winograd_matrix_gemm.comp (benchmark hook)",
      "convolution_tiles.h's", false},
     [](Overrides& o, const char* v) { o.choice.winogradMatrixTile = v; }},
    {{"VKCNN_FUSE_SILU", "0: the Graph leaves x * sigmoid(x) unfused", "fused", false},
     [](Overrides& o, const char* v) { o.fuseSilu = !zero(v); }},
    {{"VKCNN_FUSE_SOURCE_ACTIVATION",
      "0: the Graph leaves a batch normalisation before a convolution as a layer", "fused", false},
     [](Overrides& o, const char* v) { o.fuseSourceActivation = !zero(v); }},
    {{"VKCNN_FUSE_SQUEEZE_EXCITATION", "0: the Graph leaves squeeze-excitation blocks unfused",
      "fused", false},
     [](Overrides& o, const char* v) { o.fuseSqueezeExcitation = !zero(v); }},
    {{"VKCNN_SE_MAX_WEIGHTS", "N: the most fc1 weights a fused squeeze-excitation block takes",
      "SqueezeExcitation::kFusedWeightLimit", false},
     [](Overrides& o, const char* v) {
       if (*v) o.squeezeExcitationMaxWeights = number(v);
     }},
    {{"VKCNN_LOAD_THREADS", "N: at most N threads pack and upload weights", "hardware_concurrency",
      true},
     [](Overrides& o, const char* v) { o.loadThreads = positive(v); }},
    {{"VKCNN_STRIP_RAW_DATA",
      "0: the ONNX importer parses initializers' raw data with protobuf (the kill switch)",
      "stripped and mapped", true},
     [](Overrides& o, const char* v) { o.stripRawData = !zero(v); }},
    {{"VKCNN_CLI_INJECT_VALIDATION_MESSAGE",
      "1: the CLI sends a validation message through its Context (tests/test_cli.cpp)", "off",
      true},
     [](Overrides& o, const char* v) { o.cliInjectValidationMessage = std::strcmp(v, "1") == 0; }},
};

const OverrideVariable* aboutTable() {
  static const auto table = [] {
    std::vector<OverrideVariable> t;
    for (const Variable& v : kVariables) t.push_back(v.about);
    return t;
  }();
  return table.data();
}

}  // namespace

std::span<const OverrideVariable> overrideVariables() {
  return {aboutTable(), std::size(kVariables)};
}

Overrides readOverrides(const EnvironmentLookup& lookup) {
  Overrides o;
  for (const Variable& v : kVariables)
    if (const char* value = lookup(v.about.name)) {
      v.read(o, value);
      o.set.push_back(std::string(v.about.name) + "=" + value);
    }
  return o;
}

Overrides readOverrides() {
  return readOverrides(
      [](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

const Overrides& processOverrides() {
  static const Overrides snapshot = readOverrides();
  return snapshot;
}

const Overrides& overrides(const Context& context) {
  return context.impl()->overrides();
}

void setChoiceOverrides(const Context& context, const ChoiceOverrides& choice) {
  context.impl()->setChoiceOverrides(choice);
}

void setFusionOverrides(const Context& context, const Overrides& fusion) {
  context.impl()->setFusionOverrides(fusion);
}

}  // namespace vkcnn::detail
