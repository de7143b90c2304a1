// The ONNX importer as the Session reaches it: Session lives in libvkcnn, which links no import
// code, and opens libvkcnn_onnx (platform::openLibrary, by its file name beside libvkcnn) only when
// it is given an ONNX model; a .vkcnn model needs neither. libvkcnn_onnx exports one C function,
// kOnnxEntryName, that returns this table (constant data: nothing is registered anywhere).
// Defined by engine/src/onnx/entry.cpp; used by engine/src/session/session.cpp.
#pragma once

#include <cstdint>
#include <span>

#include "vkcnn/onnx.h"

namespace vkcnn::detail {

namespace onnx_import {
struct PreparedModel;  // onnx/importer.h
}

// Bumped when the table changes: a libvkcnn_onnx of another version is refused by name.
inline constexpr uint32_t kOnnxEntryVersion = 1;
inline constexpr char kOnnxEntryName[] = "vkcnn_onnx_entry_v1";

struct OnnxEntry {
  uint32_t version;
  // onnx/importer.h's prepareOnnxModel (the result released with `release`), preparedMs and
  // importPrepared; importOnnxModelFromMemory.
  onnx_import::PreparedModel* (*prepare)(std::span<const uint8_t> bytes,
                                         const OnnxImportOptions& options);
  void (*release)(onnx_import::PreparedModel* prepared);
  double (*preparedMs)(const onnx_import::PreparedModel& prepared);
  OnnxImport (*importPrepared)(const Context& context, onnx_import::PreparedModel& prepared,
                               std::span<const uint8_t> bytes, const OnnxImportOptions& options);
  OnnxImport (*import)(const Context& context, std::span<const uint8_t> bytes,
                       const OnnxImportOptions& options);
};

using OnnxEntryFunction = const OnnxEntry* (*)();

}  // namespace vkcnn::detail
