// ONNX external data: tensors whose bytes live in side files (TensorProto.external_data, written by
// onnx.save_model(..., save_as_external_data=True) and by newer PyTorch exporters for large
// models). resolveExternalData reads them into raw_data before the model is validated, so the rest
// of the importer only ever sees self-contained tensors.
#pragma once

#include <string>

namespace onnx {
class ModelProto;
}

namespace vkcnn::detail::onnx_import {

// Replaces every external tensor of the model (initializers, Constant and other attribute tensors,
// subgraphs included) by its bytes read from `directory` / location at offset, length bytes (the
// rest of the file when no length is given). A location that is absolute or leads outside
// `directory` (by .. or a symbolic link), a missing or unreadable file, or a file shorter than
// offset + length is Error(invalidModel) naming the tensor and the file. With an empty `directory`
// (a model imported from memory) external tensors are left as they are and validation rejects
// them with the reason.
void resolveExternalData(onnx::ModelProto& model, const std::string& directory);

}  // namespace vkcnn::detail::onnx_import
