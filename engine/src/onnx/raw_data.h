// The weights of an ONNX model read where they lie instead of copied by protobuf.
//
// protobuf copies every TensorProto.raw_data into a std::string (100 MB for resnet50, 550 MB for
// vgg16) which the importer then decodes again. stripInitializerData scans the ModelProto's wire
// format itself (ModelProto.graph = 7, GraphProto.initializer = 5, TensorProto.raw_data = 9) and
// writes a copy of the model without the large raw_data of the main graph's floating-point
// initializers; protobuf parses that small copy and the importer decodes each stripped tensor from
// the caller's bytes (the mapped file) through a span.
//
// A stripped tensor keeps a raw_data of one placeholder byte, so that onnx's checker, which only
// asks whether raw_data is non-empty, judges it as before; the importer's own checks and decoding
// see the span (validateTensorProto, decodeTensorProto). Only the main graph's initializers are
// stripped: tensors in node attributes and subgraphs, small tensors (shape inference reads small
// constants through raw_data) and integer tensors keep the protobuf path, and so does a whole
// model the scanner does not fully understand (a malformed length, a group, an unknown wire type):
// protobuf then parses the original bytes and reports what is wrong, the scanner's finding (the
// byte offset and the field) added to the message. VKCNN_STRIP_RAW_DATA=0 turns the scanner off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace vkcnn::detail::onnx_import {

// raw_data shorter than this stays in the protobuf message.
inline constexpr size_t kStripRawDataBytes = 1024;

struct StrippedModel {
  // Whether anything was stripped: when false, parse the original bytes (`bytes` is empty).
  bool stripped = false;
  std::string bytes;  // the model without the stripped raw_data: what protobuf parses
  // By index of the main graph's initializers (in protobuf's merged order): the stripped raw_data
  // inside the original bytes, or nullopt where the tensor keeps its own.
  std::vector<std::optional<std::span<const uint8_t>>> initializerData;
  // Where the scanner stopped, when the model is malformed (empty: it is not, as far as the
  // scanner looked): "byte N: what".
  std::string malformed;
};

StrippedModel stripInitializerData(std::span<const uint8_t> model);

}  // namespace vkcnn::detail::onnx_import
