// The ONNX importer's insides, shared by importer.cpp (the walk over a model) and the operator
// families in ops_*.cpp (what each operator becomes).
//
// Every ONNX value is either a host constant (initializers, Constant nodes and whatever the
// evaluator folds from them and from shapes) or an image value: a Graph tensor plus the ONNX
// dims it stands for. The image holds the value's elements in row-major order (image after image,
// channel planes inside each), so a reshape is free: it changes only the dims. An image value is
// "canonical" when its dims map straight onto its image ([N,C,H,W]; [N,C,L] as H = L, W = 1; [N,C]
// as 1x1; [C] as one 1x1 image); operators that work along axes need canonical inputs.
//
// One table of operators: each family file exports an array of OpEntry (name, opsets, fold,
// translate). The walk, the constant folding and supportedOnnxOperators() all read the same
// arrays, so an operator is added in exactly one place.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_tensor.h"
#include "vkcnn/graph.h"
#include "vkcnn/tensor.h"
#include "vkcnn/onnx.h"

namespace onnx {
class ModelProto;
class NodeProto;
class AttributeProto;
}  // namespace onnx

namespace vkcnn::detail::onnx_import {

// The newest default-domain opset the importer (and onnx 1.12) knows.
inline constexpr int64_t kNewestOpset = 17;
// Largest dimension of an input.
inline constexpr int64_t kMaxInputDimension = int64_t(1) << 24;

// ---- image values -----------------------------------------------------------------------------

struct Shape4 {
  int64_t n = 1, c = 1, h = 1, w = 1;
  bool operator==(const Shape4&) const = default;
};

std::optional<Shape4> canonicalShape(const std::vector<int64_t>& dims);

enum class ImageAxis { n, c, h, w };
// The image axis that axis `axis` of a canonical value of rank `rank` runs along.
ImageAxis imageAxis(size_t rank, int64_t axis);

struct ImageValue {
  GraphTensor tensor;
  std::vector<int64_t> dims;
};

// A constant, or a value of the Graph (`isImage`): an Image, or a Tensor (when it left the image
// layout); `image.dims` are its ONNX dims either way.
struct Value {
  bool isImage = false;
  HostTensor constant;
  ImageValue image;
  ImageValue imageForm;  // a Tensor value's conversion to an Image, once made
};

// invalidModel unless 0 <= v <= kMaxElements.
uint32_t u32(int64_t v, const std::string& what);

class Importer;

// One ONNX operator of the default domain, read in opsets [firstOpset, lastOpset].
//   fold: evaluates the node on the host when every input is a constant (always, with
//         `foldAlways`: Shape and Size read only their input's dims). Null: never folded.
//   translate: maps the node onto Graph nodes when an input is image data. Null: the operator is
//         evaluated only on constants and shapes.
struct OpEntry {
  const char* name;
  int64_t firstOpset, lastOpset;
  void (*fold)(Importer&);
  void (*translate)(Importer&);
  bool foldAlways = false;
};

// The families (ops_*.cpp).
std::span<const OpEntry> shapeOps();          // ops_shape.cpp: constants, shapes, views, Concat
std::span<const OpEntry> elementwiseOps();    // ops_elementwise.cpp
std::span<const OpEntry> convolutionOps();    // ops_conv.cpp: Conv, ConvTranspose, Gemm, MatMul
std::span<const OpEntry> poolingOps();        // ops_pool.cpp: pooling and reductions
std::span<const OpEntry> normalizationOps();  // ops_normalization.cpp: norms and softmax
std::span<const OpEntry> resizeOps();         // ops_resize.cpp: Pad, Resize, Upsample

// The entry named `op`, or null.
const OpEntry* findOperator(const std::string& op);

// Kernel, stride, dilation and pads of one spatial axis of a convolution or pooling window.
struct Window {
  int64_t kernel, stride, dilation, padBegin, padEnd;
};
// Per spatial axis (H then W; one axis for rank 3) from the node's attributes, pads resolved from
// auto_pad (ops_conv.cpp).
std::vector<Window> windows(Importer& im, const std::vector<int64_t>& spatial,
                            const std::vector<int64_t>& kernel, bool transposed = false);
// Before opset 7, broadcast=1 aligned B with A starting at `axis` (ops_elementwise.cpp).
std::vector<int64_t> legacyBroadcastDims(Importer& im, const std::vector<int64_t>& a,
                                         const std::vector<int64_t>& b);
// The new dims of a value reshaped by the node (ops_shape.cpp).
void reshapeLike(Importer& im, std::vector<int64_t> dims);

// By index of the main graph's initializers: the raw_data the model scanner took out of the
// message (onnx/raw_data.h), inside the model's bytes, or nullopt (the tensor holds its own).
using InitializerData = std::vector<std::optional<std::span<const uint8_t>>>;
inline const std::span<const uint8_t>* strippedData(const InitializerData& data, int k) {
  return size_t(k) < data.size() && data[size_t(k)] ? &*data[size_t(k)] : nullptr;
}

// A model parsed, and its main graph's initializers decoded, before there is a Context: a Session
// that makes its own Context does this while the Context starts on another thread.
struct PreparedModel;
struct PreparedModelDeleter {
  void operator()(PreparedModel* p) const;
};
using PreparedModelPtr = std::unique_ptr<PreparedModel, PreparedModelDeleter>;
// Parse errors are thrown here; an initializer that does not decode is left to the import, which
// reports it where it always has (after onnx's checker).
PreparedModelPtr prepareOnnxModel(std::span<const uint8_t> bytes, const OnnxImportOptions& options);
// importOnnxModelFromMemory(context, bytes, options) from the prepared model of `bytes`, which
// still points into them. The parse counts in the Context's load clock (parse) when imported.
OnnxImport importPrepared(const Context& context, PreparedModel& prepared,
                          std::span<const uint8_t> bytes, const OnnxImportOptions& options);
// The time prepareOnnxModel took: the parse and the initializers' decoding.
double preparedMs(const PreparedModel& prepared);

class Importer {
 public:
  // flatBatch: every image input is one image (batch 1) holding its elements in row-major order
  // (the second try for a model whose inputs differ in batch, whose outputs do not split into
  // the batch, or whose inputs have rank 5 to 8; see batchLayoutFailed()). `initializerData`
  // points into the model's bytes, which outlive the import.
  Importer(const Context& context, onnx::ModelProto& model, const InitializerData& initializerData,
           const OnnxImportOptions& options, size_t fileBytes, bool flatBatch = false);
  OnnxImport run();
  // Initializers decoded in advance (by index; nullopt: decode it here), moved from as used.
  void useDecoded(std::vector<std::optional<HostTensor>>& decoded) { decoded_ = &decoded; }
  // Whether run() stopped because the values do not share one batch of images.
  bool batchLayoutFailed() const { return batchLayoutFailed_; }

  // ---- what an operator sees: the model and the node being imported ----
  Graph& graph() { return graph_; }
  int64_t opset() const { return opset_; }
  uint32_t batch() const { return batch_; }  // N of every image value
  const std::string& nodeName() const { return nodeLabel_; }
  const std::string& opType() const;
  int inputCount() const;
  int outputCount() const;

  // Attributes, type-checked (invalidModel when the model gives another type).
  std::optional<int64_t> attrIntIf(const std::string& name) const;
  std::optional<float> attrFloatIf(const std::string& name) const;
  std::optional<std::vector<int64_t>> attrInts(const std::string& name) const;
  std::optional<std::vector<float>> attrFloats(const std::string& name) const;
  std::optional<HostTensor> attrTensor(const std::string& name) const;
  int64_t attrInt(const std::string& name, int64_t fallback) const {
    return attrIntIf(name).value_or(fallback);
  }
  float attrFloat(const std::string& name, float fallback) const {
    return attrFloatIf(name).value_or(fallback);
  }
  std::string attrString(const std::string& name, const std::string& fallback) const;

  // Inputs. A missing input is invalidModel; constantInput and floatConstant are unsupported on
  // image data, imageInput on a constant.
  bool hasInput(int k) const;
  const Value& input(int k) const;
  const HostTensor& constantInput(int k, const std::string& role) const;
  const HostTensor& floatConstant(int k, const std::string& role) const;
  // floatConstant's values, moved out of the constant when this node is its only reader in the
  // graph (weights are then not copied again), copied otherwise. The constant keeps its dims.
  std::vector<float> takeFloats(int k, const std::string& role);
  // A Graph value as an Image (a Tensor value is converted, once).
  const ImageValue& imageInput(int k);
  // A Graph value as it is: an Image or a Tensor.
  const ImageValue& valueInput(int k) const;
  bool isTensor(const ImageValue& v) const { return graph_.isTensor(v.tensor); }
  // A Graph Tensor of exactly the value's dims (an Image is converted; a reshape is a view).
  GraphTensor tensorOf(const ImageValue& v);
  // A constant as a Graph Tensor (float data; integers and booleans as floats).
  GraphTensor constantTensor(const HostTensor& t);
  // Input k as a Graph Tensor, whether a Graph value or a constant.
  GraphTensor tensorInput(int k);

  // Outputs. An output the node leaves unnamed is dropped.
  bool outputUsed(int k) const;
  void setOutput(int k, Value v);
  void setImage(int k, GraphTensor t, std::vector<int64_t> dims);
  void setImage(int k, const ImageValue& image) { setImage(k, image.tensor, image.dims); }
  // Bounded: each fold by the evaluator, their sum by the file's size plus an allowance.
  void setConstant(int k, HostTensor t);

  // The image behind a value and its layout.
  Shape4 imageShape(const ImageValue& v) const;
  bool canonical(const ImageValue& v) const;
  // The value's shape as [N, C, H, W]; unsupported unless it is canonical of rank minRank to 4.
  Shape4 requireCanonical(const ImageValue& v, size_t minRank = 1) const;
  // The dims of a value of `like`'s rank whose image is `s`.
  std::vector<int64_t> dimsLike(const ImageValue& like, const TensorShape& s) const;

  // A neuron node on `x`; neuronOp: on input 0, as output 0.
  GraphTensor neuron(const ImageValue& x, const NeuronDescriptor& n);
  void neuronOp(const NeuronDescriptor& n);

 private:
  GraphOptions graphOptions() const;
  ImageValue toImageValue(const ImageValue& v);
  const onnx::AttributeProto* typedAttribute(const std::string& name, int type) const;
  void importInputs();
  void importNode(const onnx::NodeProto& node, size_t index);
  void importOutputs();
  void crossCheckShapes(const std::string& source);

  const Context& context_;
  onnx::ModelProto& model_;
  const InitializerData& initializerData_;
  std::vector<std::optional<HostTensor>>* decoded_ = nullptr;
  OnnxImportOptions options_;
  Graph graph_;
  int64_t opset_ = 0;
  uint32_t batch_ = 0;  // 0 until the first image input
  bool flatBatch_ = false;
  bool batchLayoutFailed_ = false;
  const onnx::NodeProto* node_ = nullptr;
  std::string nodeLabel_;
  std::unordered_map<std::string, Value> values_;
  // How many node inputs and graph outputs name each value (takeFloats); empty when a subgraph
  // may read outer values.
  std::unordered_map<std::string, int> readers_;
  int64_t computedElements_ = 0;
  // Constants may take what the file holds (transposed weights) plus a fixed allowance.
  int64_t computedBudget_ = 4 * kMaxComputedElements;
  OnnxModelInfo info_;
};

}  // namespace vkcnn::detail::onnx_import
