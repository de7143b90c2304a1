// libFuzzer target: the ONNX importer on arbitrary model bytes. vkcnn::Error is the expected
// outcome of a bad model; anything else (a crash, a sanitizer report, another exception escaping,
// a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "fuzz_common.h"
#include "vkcnn/error.h"
#include "vkcnn/onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vkcnn::Context& context = vkcnn::fuzz::context();
  static const bool verbose = std::getenv("VKCNN_FUZZ_VERBOSE") != nullptr;
  const std::span<const uint8_t> bytes(data, size);
  try {
    vkcnn::inspectOnnxFromMemory(bytes);
  } catch (const vkcnn::Error&) {
  }
  try {
    vkcnn::OnnxImportOptions options;
    options.optimize = (size & 1) == 0;
    vkcnn::importOnnxFromMemory(context, bytes, options);
    if (verbose) std::fprintf(stderr, "imported\n");
  } catch (const vkcnn::Error& e) {
    if (verbose) std::fprintf(stderr, "Error: %s\n", e.what());
  }
  return 0;
}
