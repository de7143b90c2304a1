// libvkcnn_onnx's entry for the Session of libvkcnn (session/onnx_entry.h): the importer's
// functions in one constant table, returned by the one C function libvkcnn looks up.
#include "onnx/importer.h"
#include "session/onnx_entry.h"
#include "vkcnn/export.h"

namespace vkcnn::detail {
namespace {

onnx_import::PreparedModel* prepare(std::span<const uint8_t> bytes,
                                    const OnnxImportOptions& options) {
  return onnx_import::prepareOnnxModel(bytes, options).release();
}

void release(onnx_import::PreparedModel* prepared) {
  onnx_import::PreparedModelDeleter{}(prepared);
}

OnnxImport importFromMemory(const Context& context, std::span<const uint8_t> bytes,
                            const OnnxImportOptions& options) {
  return importOnnxModelFromMemory(context, bytes, options);
}

constexpr OnnxEntry kEntry{
    kOnnxEntryVersion,           prepare,         release, onnx_import::preparedMs,
    onnx_import::importPrepared, importFromMemory};

}  // namespace
}  // namespace vkcnn::detail

extern "C" VKCNN_API const vkcnn::detail::OnnxEntry* vkcnn_onnx_entry_v1() {
  return &vkcnn::detail::kEntry;
}
