// The VKCNN_* environment variables (engine/src/vulkan/overrides.h) and the device facts
// (vulkan/device_facts.h): the table names each variable once, each reads as documented from a
// synthetic environment, a Context reads them when it starts, and the facts' one fallback.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "test_support.h"
#include "vulkan/device_facts.h"
#include "vulkan/overrides.h"

using namespace vkcnn;
using namespace vkcnn::detail;

namespace {

Overrides read(const std::map<std::string, std::string>& environment) {
  return readOverrides([&](const char* name) -> const char* {
    const auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST_CASE("overrides: every variable is declared once, with its meaning and default") {
  std::set<std::string> names;
  for (const OverrideVariable& v : overrideVariables()) {
    CAPTURE(v.name);
    CHECK(std::string(v.name).rfind("VKCNN_", 0) == 0);
    CHECK(std::string(v.meaning).size() > 10);
    CHECK(std::string(v.defaultValue).size() > 1);
    CHECK(names.insert(v.name).second);
  }
  CHECK(names.size() == 26);
}

TEST_CASE("overrides: an empty environment gives the defaults") {
  const Overrides o = read({});
  CHECK(o.device.empty());
  CHECK_FALSE(o.validation);
  CHECK_FALSE(o.fenceTimeoutMs);
  CHECK_FALSE(o.waitSpinMicroseconds);
  CHECK_FALSE(o.noMatrixUnits);
  CHECK_FALSE(o.tune);
  CHECK_FALSE(o.noWinograd);
  CHECK(o.maxSharedMemory == 0);
  CHECK(o.float16BitStores);
  CHECK(o.pipelineCache);
  CHECK(o.pipelineCacheDirectory.empty());
  CHECK(o.uploadBatch);
  CHECK(o.choice.tile.empty());
  CHECK(o.choice.epilogue.empty());
  CHECK(o.choice.pieces.empty());
  CHECK(o.choice.fullyConnected.empty());
  CHECK(o.choice.winogradRoundBytes == 0);
  CHECK(o.choice.winogradMatrixTile.empty());
  CHECK(o.fuseSilu);
  CHECK(o.fuseSourceActivation);
  CHECK(o.fuseSqueezeExcitation);
  CHECK_FALSE(o.squeezeExcitationMaxWeights);
  CHECK(o.deviceProfile.empty());
  CHECK(o.loadThreads == 0);
  CHECK(o.stripRawData);
  CHECK_FALSE(o.cliInjectValidationMessage);
  CHECK(o.set.empty());
}

TEST_CASE("overrides: each variable reads as it is documented") {
  const Overrides o = read({{"VKCNN_DEVICE", "H200"},
                            {"VKCNN_VALIDATION", "1"},
                            {"VKCNN_FENCE_TIMEOUT_MS", "1234"},
                            {"VKCNN_WAIT_SPIN_US", "99999999999"},
                            {"VKCNN_NO_MATRIX_UNITS", "true"},
                            {"VKCNN_TUNE", "yes"},
                            {"VKCNN_NO_WINOGRAD", "1"},
                            {"VKCNN_MAX_SHARED_MEMORY", "16384"},
                            {"VKCNN_DEVICE_PROFILE", "mobile"},
                            {"VKCNN_FLOAT16_BIT_STORES", "0"},
                            {"VKCNN_PIPELINE_CACHE", "off"},
                            {"VKCNN_PIPELINE_CACHE_DIR", "/tmp/x"},
                            {"VKCNN_UPLOAD_BATCH", "0"},
                            {"VKCNN_CONVOLUTION_TILE", "64x64s2"},
                            {"VKCNN_CONVOLUTION_EPILOGUE", "inline-fixed"},
                            {"VKCNN_CONVOLUTION_PIECES", "one"},
                            {"VKCNN_FULLY_CONNECTED", "matrix2/64x64"},
                            {"VKCNN_WINOGRAD_ROUND_BYTES", "73728"},
                            {"VKCNN_WINOGRAD_MATRIX_TILE", "8x2/1x4/1/1"},
                            {"VKCNN_FUSE_SILU", "0"},
                            {"VKCNN_FUSE_SOURCE_ACTIVATION", "0"},
                            {"VKCNN_FUSE_SQUEEZE_EXCITATION", "0"},
                            {"VKCNN_SE_MAX_WEIGHTS", "77"},
                            {"VKCNN_LOAD_THREADS", "3"},
                            {"VKCNN_STRIP_RAW_DATA", "0"},
                            {"VKCNN_CLI_INJECT_VALIDATION_MESSAGE", "1"},
                            {"NOT_VKCNN", "1"}});
  CHECK(o.device == "H200");
  CHECK(o.validation);
  CHECK(o.fenceTimeoutMs == 1234u);
  CHECK(o.waitSpinMicroseconds == UINT32_MAX);  // as ContextOptions holds it
  CHECK(o.noMatrixUnits);
  CHECK(o.tune);
  CHECK(o.noWinograd);
  CHECK(o.maxSharedMemory == 16384);
  CHECK(o.deviceProfile == "mobile");
  CHECK_FALSE(o.float16BitStores);
  CHECK_FALSE(o.pipelineCache);
  CHECK(o.pipelineCacheDirectory == "/tmp/x");
  CHECK_FALSE(o.uploadBatch);
  CHECK(o.choice.tile == "64x64s2");
  CHECK(o.choice.epilogue == "inline-fixed");
  CHECK(o.choice.pieces == "one");
  CHECK(o.choice.fullyConnected == "matrix2/64x64");
  CHECK(o.choice.winogradRoundBytes == 73728);
  CHECK(o.choice.winogradMatrixTile == "8x2/1x4/1/1");
  CHECK_FALSE(o.fuseSilu);
  CHECK_FALSE(o.fuseSourceActivation);
  CHECK_FALSE(o.fuseSqueezeExcitation);
  CHECK(o.squeezeExcitationMaxWeights == 77u);
  CHECK(o.loadThreads == 3);
  CHECK_FALSE(o.stripRawData);
  CHECK(o.cliInjectValidationMessage);
  CHECK(o.set.size() == 26);
  CHECK(o.set.front() == "VKCNN_DEVICE=H200");
}

TEST_CASE("overrides: switches off only for 0 / false / off, unknown values read as unset") {
  for (const char* off : {"0", "false", "off", ""}) {
    CAPTURE(off);
    CHECK_FALSE(read({{"VKCNN_VALIDATION", off}}).validation);
  }
  CHECK(read({{"VKCNN_PIPELINE_CACHE", "0"}}).pipelineCache == false);
  CHECK(read({{"VKCNN_PIPELINE_CACHE", "1"}}).pipelineCache);
  CHECK(read({{"VKCNN_FLOAT16_BIT_STORES", "off"}}).float16BitStores);  // only "0" turns it off
  CHECK(read({{"VKCNN_CONVOLUTION_EPILOGUE", "sideways"}}).choice.epilogue.empty());
  CHECK(read({{"VKCNN_MAX_SHARED_MEMORY", "-5"}}).maxSharedMemory == 0);
  CHECK(read({{"VKCNN_LOAD_THREADS", "none"}}).loadThreads == 0);
  CHECK_FALSE(read({{"VKCNN_FENCE_TIMEOUT_MS", ""}}).fenceTimeoutMs);
  CHECK_FALSE(read({{"VKCNN_CLI_INJECT_VALIDATION_MESSAGE", "yes"}}).cliInjectValidationMessage);
}

TEST_CASE("overrides: a Context reads the environment when it starts, and keeps it") {
  setenv("VKCNN_CONVOLUTION_TILE", "gemm_small", 1);
  Context ctx = test::makeContext();
  unsetenv("VKCNN_CONVOLUTION_TILE");
  CHECK(overrides(ctx).choice.tile == "gemm_small");
  // The test main sets VKCNN_VALIDATION=1 where the suite runs validated (not under Wine).
  if (test::kValidation) CHECK(overrides(ctx).validation);
  ChoiceOverrides forced;
  forced.epilogue = "ahead";
  setChoiceOverrides(ctx, forced);
  CHECK(overrides(ctx).choice.tile.empty());
  CHECK(overrides(ctx).choice.epilogue == "ahead");
  CHECK(overrides(test::makeContext()).choice.tile.empty());
}

TEST_CASE("device facts: the one multiprocessor fallback, warps of 32, the matrix shape") {
  DeviceFacts f;
  CHECK(f.multiprocessors() == DeviceFacts::kAssumedMultiprocessors);
  CHECK(DeviceFacts::kAssumedMultiprocessors == 132);
  f.multiprocessorsReported = 78;
  CHECK(f.multiprocessors() == 78);
  f.subgroupSize = 32;
  CHECK(f.warpsOf32());
  CHECK_FALSE(f.matrixTiles());
  f.matrixUnits = MatrixExtension::nv;
  CHECK(f.matrixTiles());
  f.subgroupSize = 64;
  CHECK_FALSE(f.matrixTiles());
  CHECK_FALSE(f.hasMatrixShape(convolutionMatrixShape(MatrixExtension::nv)));
  f.matrixShapes.push_back(convolutionMatrixShape(MatrixExtension::nv));
  CHECK(f.hasMatrixShape(convolutionMatrixShape(MatrixExtension::nv)));
  CHECK_FALSE(f.hasMatrixShape(convolutionMatrixShape(MatrixExtension::khr)));
  bool named = false;
  for (const auto& [name, value] : describe(f)) named |= name == "matrix shape";
  CHECK(named);
}

TEST_CASE("device facts: a Context's agree with its capabilities") {
  const DeviceCapabilities& c = test::context().capabilities();
  const DeviceFacts& f = deviceFacts(test::context());
  CHECK(f.subgroupSize == c.subgroupSize);
  CHECK(f.multiprocessorsReported == c.multiprocessorCount);
  CHECK((f.matrixUnits != MatrixExtension::none) == c.matrixUnits);
  CHECK(f.sharedMemoryBytes == c.maxComputeSharedMemorySize);
  CHECK(f.float16Arithmetic == c.shaderFloat16);
  CHECK(f.storage16Bit == c.storage16Bit);
  CHECK(f.imageArrayNonUniformIndexing == c.imageArrayNonUniformIndexing);
  CHECK(f.maxImageArrayLayers == c.maxImageArrayLayers);
  CHECK((f.cooperativeMatrixNV || f.cooperativeMatrixKHR) == c.cooperativeMatrix);
  if (c.matrixUnits) CHECK(f.hasMatrixShape(convolutionMatrixShape(MatrixExtension::nv)));
}
