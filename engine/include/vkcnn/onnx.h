// ONNX import: a model file (or its bytes) becomes a Graph.
//
// The model is checked with onnx's own checker and every tensor in it against its declared size,
// then translated node by node: convolutions, pooling, normalisations, neurons, element-wise
// arithmetic, concatenation, channel splits and slices, fully-connected layers from Gemm / MatMul
// (after a Flatten or Reshape too), channel shuffle and depth/space patterns. The importer emits
// plain nodes: batch normalisations, and per-channel or scalar arithmetic with constants as affine
// nodes; the Graph's optimizer alone decides what folds into a convolution. Parts that only compute
// shapes (Shape, Gather, Unsqueeze, Concat, Cast, ...) are evaluated at import, once the input
// sizes are known. Last, onnx's shape inference must agree with every shape the importer computed.
// Opsets 1 to 17 of the default domain are read, in the attribute and input forms each opset uses.
//
// Tensors and Images: a tensor of rank 4 [N, C, H, W] is an Image of C feature channels and H x W
// pixels, N images in the batch; rank 3 [N, C, L] is H = L, W = 1 (as PyTorch's 1D layers unsqueeze
// to [N, C, L, 1]); rank 2 [N, C] is 1 x 1 x C; rank 1 [C] is one image of 1 x 1 x C.
// Reshapes and flattens that keep the element order are free: the tensor keeps the image of its
// source (OnnxTensorInfo says which). In every case the tensor's elements in row-major order are
// the images' FeatureChannelsxHeightxWidth data, image after image. Inside the Graph, a value the
// image layout cannot hold (after a transpose across it, broadcasting along N, H or W, a
// concatenation off the channels, a strided slice, ...) is a Tensor of its ONNX shape; an output
// that is one comes back as an Image of the canonical layout above (or [N, elements / N, 1, 1]).
//
// Errors: an operator, attribute or tensor form the importer cannot map is
// Error(ErrorCode::unsupported) naming the node, the operator and the opset; a malformed,
// truncated, inconsistent or hostile file is Error(ErrorCode::invalidModel) (tensors of more than
// 2^31 - 1 elements, external data, constants computed at import beyond 2^24 elements each or the
// file's size plus 2^26 in all); an input dimension beyond 2^24 is Error(limitExceeded); a missing
// file is Error(ErrorCode::io). Neither onnx nor protobuf types appear in this header.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "vkcnn/context.h"
#include "vkcnn/export.h"
#include "vkcnn/graph.h"
#include "vkcnn/image.h"

namespace vkcnn {

// A host tensor: for constant inputs and for moving data in and out of Images. Exactly one of
// floats (float tensors) and int64s (integer and boolean tensors) holds the elements, row-major.
struct OnnxTensor {
  std::vector<int64_t> dims;    // the ONNX shape
  std::vector<float> floats;    // the elements of a float tensor
  std::vector<int64_t> int64s;  // the elements of an integer or boolean tensor
};

// A model's input or output as ONNX declares it and as vkcnn holds it.
struct OnnxTensorInfo {
  std::string name;  // the graph input or output name
  // The ONNX shape. From inspectOnnx a dynamic dimension is -1 and dimParams names it ("" for a
  // static one); after import every dimension is known.
  std::vector<int64_t> dims;
  std::vector<std::string> dimParams;
  std::string elementType;  // "float32", "int64", ... as ONNX names them (lower case)
  // The Image that holds the tensor after import (zero from inspectOnnx): numberOfImages images of
  // width x height x featureChannels. featureChannels * height * width is the product of dims
  // without the first.
  uint32_t numberOfImages = 0, featureChannels = 0, height = 0, width = 0;
};

// What a model file says about itself, and its inputs and outputs.
struct OnnxModelInfo {
  int64_t irVersion = 0;                                 // the ModelProto's ir_version
  int64_t opsetVersion = 0;                              // of the default (ai.onnx) domain
  std::string producerName, producerVersion, graphName;  // as the file names them
  // Graph inputs in the order Graph::encode takes them (initializers and constantInputs are not
  // inputs), and the graph outputs in the order it returns them.
  std::vector<OnnxTensorInfo> inputs, outputs;
};

// How a model is imported (Session takes the same as SessionOptions).
struct OnnxImportOptions {
  // Shapes of named inputs. Needed for dynamic dimensions (a static dimension given a different
  // size is an error). Every dimension of the input is listed.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  // A dynamic first dimension (the batch) of an input not in inputShapes takes this size.
  int64_t dynamicBatchSize = 1;
  // Graph inputs bound to values at import, as if they were initializers (weights given as inputs,
  // a fixed shape tensor). They are no longer inputs of the Graph.
  std::map<std::string, OnnxTensor> constantInputs;
  // Of every intermediate and output image.
  ChannelFormat channelFormat = ChannelFormat::float16;
  bool optimize = true;  // GraphOptions::optimize
  // GraphOptions::accumulatorPrecision.
  AccumulatorPrecision accumulatorPrecision = AccumulatorPrecision::float32;
  std::string label;  // of the Graph; empty: the model's graph name
  // Where the files of tensors stored as ONNX external data are (their locations are relative to
  // it, and may not leave it). importOnnxModel uses the model file's directory when this is empty;
  // from memory, an empty directory makes external data an error.
  std::string externalDataDirectory;
};

// An imported model: its compiled-to-be Graph and the description of its inputs and outputs.
struct OnnxImport {
  Graph graph;         // the network (the first encode compiles it, if compile() was not called)
  OnnxModelInfo info;  // inputs and outputs with their sizes and Images
};

// Reads, checks and translates the model. `bytes` is the serialized ModelProto.
VKCNN_API OnnxImport importOnnxModel(const Context& context, const std::string& path,
                                     const OnnxImportOptions& options = {});
VKCNN_API OnnxImport importOnnxModelFromMemory(const Context& context,
                                               std::span<const uint8_t> bytes,
                                               const OnnxImportOptions& options = {});
// The same, when only the Graph is wanted.
VKCNN_API Graph importOnnx(const Context& context, const std::string& path,
                           const OnnxImportOptions& options = {});
VKCNN_API Graph importOnnxFromMemory(const Context& context, std::span<const uint8_t> bytes,
                                     const OnnxImportOptions& options = {});

// The model's declared inputs and outputs (names, shapes with dynamic dimensions, element types)
// without translating it; for choosing inputShapes. The file is parsed and validated as on import.
VKCNN_API OnnxModelInfo inspectOnnx(const std::string& path);
VKCNN_API OnnxModelInfo inspectOnnxFromMemory(std::span<const uint8_t> bytes);

// Operator types (default domain) the importer knows, sorted: those it maps onto kernels for image
// data, and those it evaluates only on constants and shapes (Shape, Gather, Range, Where, ...).
VKCNN_API std::vector<std::string> supportedOnnxOperators();

// A new Image holding a float tensor laid out as `info` says (an input of an import).
VKCNN_API Image makeOnnxImage(const Context& context, const OnnxTensorInfo& info,
                              std::span<const float> data, ChannelFormat format);
// Writes a float tensor into an existing Image shaped as `info` says.
VKCNN_API void writeOnnxImage(Image& image, const OnnxTensorInfo& info,
                              std::span<const float> data);
// Reads an Image back as the tensor `info` describes (an output of an import): row-major elements.
VKCNN_API std::vector<float> readOnnxImage(const Image& image, const OnnxTensorInfo& info);

}  // namespace vkcnn
