// The gate of an ONNX model file: everything a hostile file could break is checked here, before
// the importer (onnx/importer.cpp) or onnx's own checker and shape inference read the model. In
// order: the file (a regular file, at most protobuf's 2 GiB), the bytes (protobuf parses them, the
// large raw_data read in place: onnx/raw_data.h), external data (onnx/external_data.h), every
// tensor's declared size against its data and every dimension against kMaxElements (through
// validateTensorProto, onnx/onnx_tensor.h), subgraph nesting, then the nodes' order
// (onnx/topological_sort.h) and onnx's checker.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "onnx/importer.h"

namespace vkcnn::detail::onnx_import {

// The bytes of the model file at `path`; only a regular file is opened (a FIFO given as the model
// is refused, not waited on). invalidModel past 2 GiB.
std::vector<uint8_t> readModelFile(const std::string& path);
// Where external data files are looked up: the model's directory.
std::string modelDirectory(const std::string& path);

// The model in `bytes`, validated and its nodes sorted topologically (not yet checked by onnx's
// checker). `directory`: where the model's external data files are (empty: external data is an
// error). `data` receives where the large initializers' raw_data lies in `bytes`
// (onnx/raw_data.h), which must outlive the model's use. Error(invalidModel) naming what is wrong.
onnx::ModelProto parseModel(std::span<const uint8_t> bytes, const std::string& directory,
                            InitializerData& data);
// onnx's checker on a parsed model; its complaint becomes Error(invalidModel).
void checkModel(const onnx::ModelProto& model);

}  // namespace vkcnn::detail::onnx_import
