// ONNX ModelProto -> Graph. See vkcnn/onnx.h for the contract.
//
// Every ONNX value is either a host constant (initializers, Constant nodes and whatever the
// evaluator folds from them and from shapes) or an image value: a Graph tensor plus the ONNX
// dims it stands for. The image holds the value's elements in row-major order (image after image,
// channel planes inside each), so a reshape is free: it changes only the dims. An image value is
// "canonical" when its dims map straight onto its image ([N,C,H,W]; [N,C,L] as H = L, W = 1; [N,C]
// as 1x1; [C] as one 1x1 image); operators that work along axes need canonical inputs.
#include "vkcnn/onnx.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "onnx/onnx_tensor.h"
#include "vkcnn/convolution_transpose.h"
#include "vkcnn/error.h"
#include "vkcnn/normalization.h"
#include "vkcnn/padding.h"
#include "vkcnn/pooling.h"
#include "vkcnn/rearrange.h"
#include "vkcnn/resize.h"
#include "vkcnn/softmax.h"

namespace vkcnn {
namespace detail::onnx_import {
namespace {

// The newest default-domain opset the importer (and onnx 1.12) knows.
constexpr int64_t kNewestOpset = 17;
// Largest dimension of an input.
constexpr int64_t kMaxInputDimension = int64_t(1) << 24;

// ---- model validation (before onnx's checker sees the model) ----------------------------------

void validateDims(const onnx::TypeProto& type, const std::string& what) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value()) continue;
    if (d.dim_value() < 0)
      invalidModel(what + ": dimension " + std::to_string(d.dim_value()) + " is negative");
    if (d.dim_value() > kMaxElements)
      invalidModel(what + ": dimension " + std::to_string(d.dim_value()) +
                   " exceeds the limit of " + std::to_string(kMaxElements));
  }
}

void validateGraph(const onnx::GraphProto& graph, int depth) {
  if (depth > 16) invalidModel("subgraphs are nested more than 16 deep");
  const std::string where = graph.name().empty() ? "graph" : "graph '" + graph.name() + "'";
  for (const auto& t : graph.initializer())
    validateTensorProto(t, where + " initializer '" + t.name() + "'");
  for (const auto& v : graph.input()) validateDims(v.type(), where + " input '" + v.name() + "'");
  for (const auto& v : graph.output()) validateDims(v.type(), where + " output '" + v.name() + "'");
  for (const auto& v : graph.value_info())
    validateDims(v.type(), where + " value '" + v.name() + "'");
  for (const auto& node : graph.node()) {
    for (const auto& a : node.attribute()) {
      const std::string what = where + " node '" + node.name() + "' (" + node.op_type() +
                               ") attribute '" + a.name() + "'";
      if (a.has_t()) validateTensorProto(a.t(), what);
      for (const auto& t : a.tensors()) validateTensorProto(t, what);
      if (a.has_g()) validateGraph(a.g(), depth + 1);
      for (const auto& g : a.graphs()) validateGraph(g, depth + 1);
    }
  }
}

onnx::ModelProto parseModel(std::span<const uint8_t> bytes) {
  if (bytes.size() > size_t(std::numeric_limits<int>::max()))
    invalidModel("the model is " + std::to_string(bytes.size()) +
                 " bytes; protobuf files are limited to 2 GiB");
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromArray(bytes.data(), int(bytes.size())))
    invalidModel("the " + std::to_string(bytes.size()) +
                 " bytes are not an ONNX model (protobuf parsing failed: truncated or corrupt)");
  if (!model.has_graph()) invalidModel("the model has no graph");
  validateGraph(model.graph(), 0);
  return model;
}

int64_t defaultOpset(const onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  return opset;
}

void runChecker(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    invalidModel(std::string("onnx checker: ") + e.what());
  }
}

std::vector<std::string> splitLines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find('\n', start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

OnnxTensorInfo declaredInfo(const onnx::ValueInfoProto& v) {
  OnnxTensorInfo info;
  info.name = v.name();
  if (v.type().has_tensor_type()) {
    const auto& tt = v.type().tensor_type();
    info.elementType = elementTypeName(tt.elem_type());
    if (tt.has_shape())
      for (const auto& d : tt.shape().dim()) {
        info.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
        info.dimParams.push_back(d.has_dim_param() ? d.dim_param() : std::string());
      }
  } else {
    info.elementType = "non-tensor";
  }
  return info;
}

// ---- image values -----------------------------------------------------------------------------

struct Shape4 {
  int64_t n = 1, c = 1, h = 1, w = 1;
  bool operator==(const Shape4&) const = default;
};

std::optional<Shape4> canonicalShape(const std::vector<int64_t>& d) {
  switch (d.size()) {
    case 4:
      return Shape4{d[0], d[1], d[2], d[3]};
    case 3:
      return Shape4{d[0], d[1], d[2], 1};
    case 2:
      return Shape4{d[0], d[1], 1, 1};
    case 1:
      return Shape4{1, d[0], 1, 1};
    default:
      return std::nullopt;
  }
}

enum class ImageAxis { n, c, h, w };

ImageAxis imageAxis(size_t rank, int64_t axis) {
  static const ImageAxis r4[] = {ImageAxis::n, ImageAxis::c, ImageAxis::h, ImageAxis::w};
  static const ImageAxis r3[] = {ImageAxis::n, ImageAxis::c, ImageAxis::h};
  static const ImageAxis r2[] = {ImageAxis::n, ImageAxis::c};
  if (rank == 1) return ImageAxis::c;
  return rank == 4 ? r4[axis] : rank == 3 ? r3[axis] : r2[axis];
}

struct ImageValue {
  GraphTensor tensor;
  std::vector<int64_t> dims;
};

// y = scale[c] * x + shift[c] per channel of a canonical image, not yet in the Graph: batch
// normalisations and per-channel or scalar Add/Sub/Mul/Div with constants compose into one, which
// becomes a single batch normalisation node (folded by the Graph into a convolution before it)
// when something reads the value.
struct Affine {
  std::vector<float> scale, shift;
  std::string label;
};

struct Value {
  bool isImage = false;
  HostTensor constant;
  ImageValue image;  // with `affine`: its source
  std::optional<Affine> affine;
};

// A copy of a channel window and a rectangle of its source (Split, Slice): a Neuron of type none
// whose destination is the rectangle's size.
class WindowCopy : public Neuron {
 public:
  WindowCopy(const Context& context, uint32_t width, uint32_t height)
      : Neuron(context, NeuronDescriptor{}), width_(width), height_(height) {}
  uint32_t destinationWidth(uint32_t) const override { return width_; }
  uint32_t destinationHeight(uint32_t) const override { return height_; }

 private:
  uint32_t width_, height_;
};

// An Error's message without the "vkcnn: " its constructor adds (for re-throwing with context).
std::string messageOf(const Error& e) {
  const std::string m = e.what();
  return m.rfind("vkcnn: ", 0) == 0 ? m.substr(7) : m;
}

uint32_t u32(int64_t v, const std::string& what) {
  if (v < 0 || v > kMaxElements)
    invalidModel(what + " " + std::to_string(v) + " is out of range [0, " +
                 std::to_string(kMaxElements) + "]");
  return uint32_t(v);
}

std::string attributeTypeName(int type) {
  return onnx::AttributeProto_AttributeType_Name(onnx::AttributeProto_AttributeType(type));
}

class Importer {
 public:
  Importer(const Context& context, onnx::ModelProto& model, const OnnxImportOptions& options,
           size_t fileBytes)
      : context_(context), model_(model), options_(options), graph_(context, graphOptions()) {
    computedBudget_ += int64_t(fileBytes);
  }

  OnnxImport run();

 private:
  GraphOptions graphOptions() const {
    GraphOptions g;
    g.channelFormat = options_.channelFormat;
    g.optimize = options_.optimize;
    g.label = !options_.label.empty()          ? options_.label
              : !model_.graph().name().empty() ? model_.graph().name()
                                               : "onnx";
    return g;
  }

  // ---- node context ----
  const onnx::NodeProto* node_ = nullptr;
  std::string nodeLabel_;

  std::string nodeName() const { return nodeLabel_; }

  const onnx::AttributeProto* attribute(const std::string& name) const {
    for (const auto& a : node_->attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  const onnx::AttributeProto* typedAttribute(const std::string& name, int type) const {
    const onnx::AttributeProto* a = attribute(name);
    if (a && a->type() != type && a->type() != onnx::AttributeProto::UNDEFINED)
      invalidModel("attribute '" + name + "' is " + attributeTypeName(a->type()) + ", expected " +
                   attributeTypeName(type));
    return a;
  }
  int64_t attrInt(const std::string& name, int64_t fallback) const {
    const auto* a = typedAttribute(name, onnx::AttributeProto::INT);
    return a ? a->i() : fallback;
  }
  float attrFloat(const std::string& name, float fallback) const {
    const auto* a = typedAttribute(name, onnx::AttributeProto::FLOAT);
    return a ? a->f() : fallback;
  }
  std::string attrString(const std::string& name, const std::string& fallback) const {
    const auto* a = typedAttribute(name, onnx::AttributeProto::STRING);
    return a ? a->s() : fallback;
  }
  std::optional<std::vector<int64_t>> attrInts(const std::string& name) const {
    const auto* a = typedAttribute(name, onnx::AttributeProto::INTS);
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }
  std::optional<std::vector<float>> attrFloats(const std::string& name) const {
    const auto* a = typedAttribute(name, onnx::AttributeProto::FLOATS);
    if (!a) return std::nullopt;
    return std::vector<float>(a->floats().begin(), a->floats().end());
  }

  bool hasInput(int k) const { return k < node_->input_size() && !node_->input(k).empty(); }
  const Value& input(int k) const {
    if (!hasInput(k)) invalidModel("input " + std::to_string(k) + " is missing");
    const std::string& name = node_->input(k);
    auto it = values_.find(name);
    if (it == values_.end())
      invalidModel("input '" + name +
                   "' is not produced by any earlier node (the graph is not topologically sorted, "
                   "has a cycle, or names a value that does not exist)");
    return it->second;
  }
  const HostTensor& constantInput(int k, const std::string& role) const {
    const Value& v = input(k);
    if (v.isImage)
      unsupported("input " + std::to_string(k) + " ('" + node_->input(k) + "', " + role +
                  ") is computed from image data; it must be a constant known at import");
    return v.constant;
  }
  const HostTensor& floatConstant(int k, const std::string& role) const {
    const HostTensor& t = constantInput(k, role);
    if (!t.isFloat())
      unsupported("input " + std::to_string(k) + " ('" + node_->input(k) + "', " + role + ") is " +
                  elementTypeName(t.type) + "; only float tensors are supported there");
    return t;
  }
  // The value itself, an affine still pending.
  Value& rawImageInput(int k) {
    input(k);
    Value& v = values_.find(node_->input(k))->second;
    if (!v.isImage)
      unsupported("input " + std::to_string(k) + " ('" + node_->input(k) +
                  "') is a constant, and this operator is only evaluated on image data");
    return v;
  }
  const ImageValue& imageInput(int k) { return materialize(rawImageInput(k)); }
  const ImageValue& materialize(Value& v) {
    if (v.affine) {
      BatchNormalizationParameters p;
      p.gamma = v.affine->scale;
      p.beta = v.affine->shift;
      p.mean.assign(p.gamma.size(), 0.f);
      p.variance.assign(p.gamma.size(), 1.f);
      p.epsilon = 0;
      v.image.tensor = graph_.batchNormalization(v.image.tensor, p, v.affine->label);
      v.affine.reset();
    }
    return v.image;
  }
  // Applies y = scale * x + shift per channel to the canonical image value `x`.
  void setAffine(int k, Value& x, const std::vector<float>& scale,
                 const std::vector<float>& shift) {
    Value out;
    out.isImage = true;
    out.image = x.image;
    Affine a;
    a.label = nodeName();
    a.scale = scale;
    a.shift = shift;
    if (x.affine)
      for (size_t c = 0; c < scale.size(); ++c) {
        a.scale[c] = scale[c] * x.affine->scale[c];
        a.shift[c] = scale[c] * x.affine->shift[c] + shift[c];
      }
    out.affine = std::move(a);
    setOutput(k, std::move(out));
  }

  void setOutput(int k, Value v) {
    if (k >= node_->output_size() || node_->output(k).empty()) return;
    values_[node_->output(k)] = std::move(v);
  }
  void setImage(int k, GraphTensor t, std::vector<int64_t> dims) {
    Value v;
    v.isImage = true;
    v.image = {t, std::move(dims)};
    setOutput(k, std::move(v));
  }
  void setImage(int k, const ImageValue& image) { setImage(k, image.tensor, image.dims); }
  void setConstant(int k, HostTensor t) {
    // Each fold is bounded; so is their sum (a chain of folds could otherwise add up without end).
    computedElements_ += t.size();
    if (computedElements_ > computedBudget_)
      invalidModel("the constants computed at import exceed " + std::to_string(computedBudget_) +
                   " elements");
    Value v;
    v.constant = std::move(t);
    setOutput(k, std::move(v));
  }
  bool outputUsed(int k) const { return k < node_->output_size() && !node_->output(k).empty(); }

  Shape4 imageShape(const ImageValue& v) const {
    const TensorShape s = graph_.shape(v.tensor);
    return Shape4{int64_t(batch_), s.featureChannels, s.height, s.width};
  }
  bool canonical(const ImageValue& v) const {
    auto c = canonicalShape(v.dims);
    return c && *c == imageShape(v);
  }
  Shape4 requireCanonical(const ImageValue& v, size_t minRank = 1) const {
    if (v.dims.size() < minRank || v.dims.size() > 4)
      unsupported("a tensor of rank " + std::to_string(v.dims.size()) + " " + dimsToString(v.dims) +
                  " (image operators take rank " + std::to_string(minRank) +
                  " to 4: [N, C, H, W], [N, C, L], [N, C] or [C]) (tensor rank)");
    if (!canonical(v)) {
      const Shape4 s = imageShape(v);
      unsupported("the tensor " + dimsToString(v.dims) + " is a reshaped view of a " +
                  std::to_string(s.n) + "x" + std::to_string(s.c) + "x" + std::to_string(s.h) +
                  "x" + std::to_string(s.w) +
                  " (NxCxHxW) image whose layout it does not match (tensor layout)");
    }
    return imageShape(v);
  }
  std::vector<int64_t> dimsLike(const ImageValue& like, const TensorShape& s) const {
    switch (like.dims.size()) {
      case 4:
        return {int64_t(batch_), s.featureChannels, s.height, s.width};
      case 3:
        return {int64_t(batch_), s.featureChannels, s.height};
      case 1:
        return {int64_t(s.featureChannels)};
      default:
        return {int64_t(batch_), s.featureChannels};
    }
  }

  // ---- graph building helpers ----
  GraphTensor neuron(const ImageValue& x, const NeuronDescriptor& n) {
    return graph_.neuron(x.tensor, n, nodeName());
  }
  void neuronOp(const NeuronDescriptor& n) {
    const ImageValue& x = imageInput(0);
    setImage(0, neuron(x, n), x.dims);
  }

  void importInputs();
  void importNode(const onnx::NodeProto& node, size_t index);
  void translate();
  bool fold();
  void importOutputs();
  void crossCheckShapes(const std::string& source);

  // Operators.
  void conv();
  void convTranspose();
  void pool(bool max);
  void globalPool(bool max);
  void batchNormalization();
  void instanceNormalization();
  void lrn();
  void gemm(bool matmul);
  void arithmetic(const std::string& op);
  void prelu();
  void sum(bool mean);
  void clip();
  void pow();
  void softmax(bool log);
  void spatialSoftmax(const ImageValue& x, bool log, const Shape4& s);
  void concat();
  void split();
  void slice();
  void reduce(const std::string& op);
  void reshapeLike(std::vector<int64_t> dims);
  void transpose();
  void depthSpace(bool toSpace);

  void pad();
  void resize();

  // Pad, Resize and Upsample parameters in every opset's form, validated.
  struct PadParameters {
    int64_t top = 0, left = 0, bottom = 0, right = 0;  // negative: cropping
    std::string mode = "constant";                     // constant, reflect, edge
    float value = 0;
  };
  struct ResizeParameters {
    uint32_t outputHeight = 0, outputWidth = 0;
    float scaleY = 1, scaleX = 1;  // given, or output / input when sizes were given
    std::string mode = "nearest";  // nearest, linear, cubic
    // half_pixel, asymmetric, align_corners, pytorch_half_pixel, tf_half_pixel_for_nn,
    // tf_crop_and_resize (Resize 10 and Upsample behave as asymmetric).
    std::string coordinateTransformation = "half_pixel";
    std::string nearestMode = "round_prefer_floor";
    float cubicCoefficientA = -0.75f, extrapolationValue = 0;
    bool excludeOutside = false;
    std::vector<float> roi;  // tf_crop_and_resize only
  };
  PadParameters padParameters(const Shape4& s, size_t rank);
  ResizeParameters resizeParameters(const Shape4& s, size_t rank);

  // Shared parameter readers (attribute or input by opset).
  std::vector<int64_t> reshapeTarget(const std::vector<int64_t>& in);
  std::vector<int64_t> flattenTarget(const std::vector<int64_t>& in);
  std::vector<int64_t> squeezeTarget(const std::vector<int64_t>& in);
  std::vector<int64_t> unsqueezeTarget(const std::vector<int64_t>& in);
  std::optional<std::vector<int64_t>> splitSizes(int64_t dim, int outputs);
  void sliceParameters(int64_t rank, std::vector<int64_t>& starts, std::vector<int64_t>& ends,
                       std::vector<int64_t>& axes, std::vector<int64_t>& steps);
  std::optional<std::vector<int64_t>> reduceAxes(const std::string& op, bool& noop);
  std::vector<int64_t> legacyBroadcastDims(const std::vector<int64_t>& a,
                                           const std::vector<int64_t>& b);

  struct Window {
    int64_t kernel, stride, dilation, padBegin, padEnd;
  };
  // Kernel/stride/dilation/pads per spatial axis (H then W; one axis for rank 3) from the
  // conv/pool attributes, pads resolved from auto_pad.
  std::vector<Window> windows(const std::vector<int64_t>& spatial,
                              const std::vector<int64_t>& kernel, bool transposed = false);

  const Context& context_;
  onnx::ModelProto& model_;
  OnnxImportOptions options_;
  Graph graph_;
  int64_t opset_ = 0;
  uint32_t batch_ = 0;  // N of every image value; 0 until the first image input
  std::unordered_map<std::string, Value> values_;
  std::set<uint32_t> convolutionOutputs_;  // tensors a convolution or fully-connected node made
  int64_t computedElements_ = 0;
  // Constants may take what the file holds (transposed weights) plus a fixed allowance.
  int64_t computedBudget_ = 4 * kMaxComputedElements;
  OnnxModelInfo info_;
};

// ---- inputs ----------------------------------------------------------------------------------

void Importer::importInputs() {
  const auto& g = model_.graph();
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) {
    initializers.insert(t.name());
    values_[t.name()] = Value{false, decodeTensorProto(t, "initializer '" + t.name() + "'"), {}};
  }
  std::set<std::string> declared;
  for (const auto& in : g.input()) declared.insert(in.name());
  for (const auto& [name, dims] : options_.inputShapes)
    if (!declared.count(name) || initializers.count(name))
      throw Error(ErrorCode::invalidArgument, "OnnxImportOptions::inputShapes names '" + name +
                                                  "', which is not an input of the model");
  for (const auto& [name, tensor] : options_.constantInputs)
    if (!declared.count(name))
      throw Error(ErrorCode::invalidArgument, "OnnxImportOptions::constantInputs names '" + name +
                                                  "', which is not an input of the model");

  for (auto& in : *model_.mutable_graph()->mutable_input()) {
    if (initializers.count(in.name())) continue;
    const std::string what = "input '" + in.name() + "'";
    if (!in.type().has_tensor_type())
      unsupported(what + " is not a tensor (sequences, maps and optionals are not supported)");
    auto* tensorType = in.mutable_type()->mutable_tensor_type();
    const int32_t type = tensorType->elem_type();

    // Resolve the shape.
    std::vector<int64_t> dims;
    auto given = options_.inputShapes.find(in.name());
    auto constant = options_.constantInputs.find(in.name());
    const bool declaredShape = tensorType->has_shape();
    const int declaredRank = declaredShape ? tensorType->shape().dim_size() : -1;
    if (constant != options_.constantInputs.end()) {
      dims = constant->second.dims;
    } else if (given != options_.inputShapes.end()) {
      dims = given->second;
    } else if (!declaredShape) {
      throw Error(ErrorCode::invalidArgument,
                  what + " declares no shape: give it in OnnxImportOptions::inputShapes");
    } else {
      for (int k = 0; k < declaredRank; ++k) {
        const auto& d = tensorType->shape().dim(k);
        if (d.has_dim_value()) {
          dims.push_back(d.dim_value());
        } else if (k == 0 && options_.dynamicBatchSize > 0) {
          dims.push_back(options_.dynamicBatchSize);
        } else {
          throw Error(ErrorCode::invalidArgument,
                      what + " dimension " + std::to_string(k) +
                          (d.has_dim_param() ? " ('" + d.dim_param() + "')" : std::string()) +
                          " is dynamic: give the input's shape in OnnxImportOptions::inputShapes");
        }
      }
    }
    if (declaredShape) {
      if (int(dims.size()) != declaredRank)
        throw Error(ErrorCode::invalidArgument, what + " has rank " + std::to_string(declaredRank) +
                                                    " but " + dimsToString(dims) +
                                                    " was given for it");
      for (int k = 0; k < declaredRank; ++k) {
        const auto& d = tensorType->shape().dim(k);
        if (d.has_dim_value() && d.dim_value() != dims[size_t(k)])
          throw Error(ErrorCode::invalidArgument,
                      what + " dimension " + std::to_string(k) + " is " +
                          std::to_string(d.dim_value()) + " in the model but " +
                          std::to_string(dims[size_t(k)]) + " was given");
      }
    }
    for (int64_t d : dims) {
      if (d < 0 || d > kMaxElements)
        throw Error(ErrorCode::invalidArgument, what + ": dimension " + std::to_string(d) + " of " +
                                                    dimsToString(dims) + " is out of range");
      // No image holds more (devices allow 16384 to 65536 pixels per side, 2048 layers).
      if (d > kMaxInputDimension)
        throw Error(ErrorCode::limitExceeded,
                    what + ": dimension " + std::to_string(d) + " of " + dimsToString(dims) +
                        " exceeds the importer's limit of " + std::to_string(kMaxInputDimension));
    }
    const int64_t count = checkedElementCount(dims, what);
    // Shape inference sees the resolved sizes.
    auto* shape = tensorType->mutable_shape();
    shape->clear_dim();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);

    if (constant != options_.constantInputs.end()) {
      const OnnxTensor& c = constant->second;
      HostTensor t;
      if (isFloatType(type)) {
        if (int64_t(c.floats.size()) != count || !c.int64s.empty())
          throw Error(ErrorCode::invalidArgument,
                      "OnnxImportOptions::constantInputs['" + in.name() + "'] holds " +
                          std::to_string(c.floats.size()) + " floats for shape " +
                          dimsToString(dims) + " (" + elementTypeName(type) + ")");
        t = HostTensor::floats(dims, c.floats);
        t.type = type;
      } else if (isIntegerType(type)) {
        if (int64_t(c.int64s.size()) != count || !c.floats.empty())
          throw Error(ErrorCode::invalidArgument,
                      "OnnxImportOptions::constantInputs['" + in.name() + "'] holds " +
                          std::to_string(c.int64s.size()) + " int64s for shape " +
                          dimsToString(dims) + " (" + elementTypeName(type) + ")");
        t = HostTensor::int64s(dims, c.int64s, type);
      } else {
        unsupported(what + " is " + elementTypeName(type) + " (data type)");
      }
      values_[in.name()] = Value{false, std::move(t), {}};
      continue;
    }

    if (type != kFloat)
      unsupported(what + " is " + elementTypeName(type) +
                  "; image inputs must be float32 (data type)");
    auto shape4 = canonicalShape(dims);
    if (!shape4)
      unsupported(what + " has rank " + std::to_string(dims.size()) + " " + dimsToString(dims) +
                  "; image inputs have rank 1 to 4 ([N, C, H, W], [N, C, L], [N, C], [C]) "
                  "(tensor rank)");
    if (count == 0) unsupported(what + " is empty " + dimsToString(dims));
    if (batch_ == 0) batch_ = uint32_t(shape4->n);
    if (shape4->n != batch_)
      unsupported(what + " has batch " + std::to_string(shape4->n) + " but an earlier input has " +
                  std::to_string(batch_) + "; every image input must have the same N (batch)");
    GraphTensor t =
        graph_.input(in.name(), {uint32_t(shape4->w), uint32_t(shape4->h), uint32_t(shape4->c)});
    Value v;
    v.isImage = true;
    v.image = {t, dims};
    values_[in.name()] = std::move(v);
    OnnxTensorInfo info = declaredInfo(in);
    info.dims = dims;
    info.numberOfImages = batch_;
    info.featureChannels = uint32_t(shape4->c);
    info.height = uint32_t(shape4->h);
    info.width = uint32_t(shape4->w);
    info_.inputs.push_back(std::move(info));
  }
}

// ---- outputs ---------------------------------------------------------------------------------

void Importer::importOutputs() {
  for (const auto& out : model_.graph().output()) {
    auto it = values_.find(out.name());
    if (it == values_.end()) invalidModel("graph output '" + out.name() + "' is never produced");
    if (!it->second.isImage)
      unsupported("graph output '" + out.name() +
                  "' is a constant computed at import (it does not depend on an image input); "
                  "graphs output images only (constant output)");
    const ImageValue& v = materialize(it->second);
    graph_.output(v.tensor, out.name());
    OnnxTensorInfo info = declaredInfo(out);
    info.dims = v.dims;
    info.dimParams.assign(v.dims.size(), std::string());
    info.elementType = "float32";
    const Shape4 s = imageShape(v);
    info.numberOfImages = uint32_t(s.n);
    info.featureChannels = uint32_t(s.c);
    info.height = uint32_t(s.h);
    info.width = uint32_t(s.w);
    info_.outputs.push_back(std::move(info));
  }
}

// Static shapes the model declares (graph outputs, value_info) or onnx's inference found must be
// the ones the importer computed (a disagreement is a malformed model or an importer bug; either
// way stop). `source` names where they come from.
void Importer::crossCheckShapes(const std::string& source) {
  auto check = [&](const onnx::ValueInfoProto& vi) {
    auto it = values_.find(vi.name());
    if (it == values_.end() || !vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
      return;
    std::vector<int64_t> found;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;
      found.push_back(d.dim_value());
    }
    const auto& dims = it->second.isImage ? it->second.image.dims : it->second.constant.dims;
    if (found != dims)
      invalidModel("value '" + vi.name() + "': " + source + " " + dimsToString(found) +
                   " but the model computes " + dimsToString(dims));
  };
  for (const auto& vi : model_.graph().value_info()) check(vi);
  for (const auto& vi : model_.graph().output()) check(vi);
}

// ---- nodes -----------------------------------------------------------------------------------

void Importer::importNode(const onnx::NodeProto& node, size_t index) {
  node_ = &node;
  nodeLabel_ = !node.name().empty() ? node.name()
               : node.output_size() && !node.output(0).empty()
                   ? node.op_type() + " -> " + node.output(0)
                   : node.op_type() + " #" + std::to_string(index);
  const std::string context = "ONNX node '" + nodeLabel_ + "' (" + node.op_type() + ", opset " +
                              std::to_string(opset_) + "): ";
  try {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      unsupported("operators of domain '" + node.domain() + "' are not supported (operator)");
    if (!fold()) translate();
  } catch (const Error& e) {
    // Kernel and graph argument errors mean the model asked for something inconsistent.
    const ErrorCode code =
        e.code() == ErrorCode::invalidArgument ? ErrorCode::invalidModel : e.code();
    throw Error(code, context + messageOf(e));
  }
}

// Operators evaluated on the host when every input is a constant (and the shape ops that only read
// a value's dims). Returns false to translate the node into kernels instead.
bool Importer::fold() {
  const std::string& op = node_->op_type();
  if (op == "Constant") {
    if (const auto* a = typedAttribute("value", onnx::AttributeProto::TENSOR))
      setConstant(0, decodeTensorProto(a->t(), "Constant value"));
    else if (const auto* f = typedAttribute("value_float", onnx::AttributeProto::FLOAT))
      setConstant(0, HostTensor::floats({}, {f->f()}));
    else if (auto fs = attrFloats("value_floats"))
      setConstant(0, HostTensor::floats({int64_t(fs->size())}, *fs));
    else if (const auto* i = typedAttribute("value_int", onnx::AttributeProto::INT))
      setConstant(0, HostTensor::int64s({}, {i->i()}));
    else if (auto is = attrInts("value_ints"))
      setConstant(0, HostTensor::int64s({int64_t(is->size())}, *is));
    else
      unsupported("Constant without a dense numeric value (sparse or string constants)");
    return true;
  }
  if (op == "Shape" || op == "Size") {
    const Value& v = input(0);
    const std::vector<int64_t>& dims = v.isImage ? v.image.dims : v.constant.dims;
    if (op == "Size") {
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      setConstant(0, HostTensor::int64s({}, {n}));
      return true;
    }
    const int64_t rank = int64_t(dims.size());
    int64_t start = attrInt("start", 0), end = attrInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<int64_t> out(dims.begin() + start, dims.begin() + end);
    setConstant(0, HostTensor::int64s({int64_t(out.size())}, out));
    return true;
  }
  if (op == "ConstantOfShape") {
    HostTensor value = HostTensor::floats({1}, {0.f});
    if (const auto* a = typedAttribute("value", onnx::AttributeProto::TENSOR))
      value = decodeTensorProto(a->t(), "ConstantOfShape value");
    setConstant(0, constantOfShape(toInt64s(constantInput(0, "shape")), value));
    return true;
  }
  // Everything else folds only when all its inputs are constants.
  for (int k = 0; k < node_->input_size(); ++k)
    if (hasInput(k) && input(k).isImage) return false;
  if (node_->input_size() == 0) return false;

  auto in = [&](int k) -> const HostTensor& { return constantInput(k, "operand"); };
  static const std::set<std::string> binaryOps = {
      "Add", "Sub",   "Mul",  "Div",     "Pow",         "Min",
      "Max", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
      "And", "Or",    "Xor"};
  static const std::set<std::string> unaryOps = {
      "Neg",        "Abs",  "Floor",   "Ceil", "Round", "Sqrt", "Exp",     "Log",
      "Reciprocal", "Relu", "Sigmoid", "Tanh", "Not",   "Sign", "Identity"};
  if (binaryOps.count(op)) {
    if ((op == "Min" || op == "Max") && node_->input_size() != 2) return false;
    HostTensor b = in(1);
    if (opset_ < 7 && attrInt("broadcast", 0))
      b = reshaped(b, legacyBroadcastDims(in(0).dims, b.dims));
    setConstant(0, binary(op, in(0), b));
  } else if (unaryOps.count(op)) {
    setConstant(0, unary(op, in(0)));
  } else if (op == "Dropout") {
    setConstant(0, in(0));
    if (outputUsed(1)) {
      if (in(0).size() > kMaxComputedElements) unsupported("Dropout mask of a large constant");
      setConstant(
          1, HostTensor::int64s(in(0).dims, std::vector<int64_t>(size_t(in(0).size()), 1), kBool));
    }
  } else if (op == "Cast") {
    setConstant(0, castTo(in(0), int32_t(attrInt("to", kFloat))));
  } else if (op == "Reshape") {
    setConstant(0, reshaped(in(0), reshapeTarget(in(0).dims)));
  } else if (op == "Flatten") {
    setConstant(0, reshaped(in(0), flattenTarget(in(0).dims)));
  } else if (op == "Squeeze") {
    setConstant(0, reshaped(in(0), squeezeTarget(in(0).dims)));
  } else if (op == "Unsqueeze") {
    setConstant(0, reshaped(in(0), unsqueezeTarget(in(0).dims)));
  } else if (op == "Transpose") {
    std::vector<int64_t> perm;
    if (auto p = attrInts("perm"))
      perm = *p;
    else
      for (int64_t k = in(0).rank(); k-- > 0;) perm.push_back(k);
    setConstant(0, transposed(in(0), perm));
  } else if (op == "Concat") {
    std::vector<const HostTensor*> parts;
    for (int k = 0; k < node_->input_size(); ++k)
      if (hasInput(k)) parts.push_back(&in(k));
    setConstant(0, concatenated(parts, attrInt("axis", opset_ < 4 ? 1 : 0)));
  } else if (op == "Split") {
    const HostTensor& t = in(0);
    const int64_t axis = normalizeAxis(attrInt("axis", 0), t.rank(), "Split");
    auto sizes = splitSizes(t.dims[size_t(axis)], node_->output_size());
    int64_t start = 0;
    for (int k = 0; k < node_->output_size(); ++k) {
      const int64_t size = (*sizes)[size_t(k)];
      setConstant(k, sliced(t, {start}, {start + size}, {axis}, {1}));
      start += size;
    }
  } else if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps;
    sliceParameters(in(0).rank(), starts, ends, axes, steps);
    setConstant(0, sliced(in(0), starts, ends, axes, steps));
  } else if (op == "Gather") {
    setConstant(0, gathered(in(0), in(1), attrInt("axis", 0)));
  } else if (op == "Expand") {
    setConstant(0, expanded(in(0), toInt64s(in(1))));
  } else if (op == "Tile") {
    setConstant(0, tiled(in(0), toInt64s(in(1))));
  } else if (op == "Where") {
    setConstant(0, where(in(0), in(1), in(2)));
  } else if (op == "Range") {
    setConstant(0, range(in(0), in(1), in(2)));
  } else if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceProd" || op == "ReduceMax" ||
             op == "ReduceMin") {
    bool noop = false;
    auto axes = reduceAxes(op, noop);
    if (noop)
      setConstant(0, in(0));
    else
      setConstant(0, reduced(in(0), op, axes ? *axes : std::vector<int64_t>{},
                             attrInt("keepdims", 1) != 0));
  } else {
    return false;
  }
  return true;
}

void Importer::translate() {
  const std::string& op = node_->op_type();
  // Neurons.
  if (op == "Relu") return neuronOp(NeuronDescriptor::relu());
  if (op == "LeakyRelu")
    return neuronOp(NeuronDescriptor::of(NeuronType::leakyRelu, attrFloat("alpha", 0.01f)));
  if (op == "Sigmoid") return neuronOp(NeuronDescriptor::of(NeuronType::sigmoid));
  if (op == "HardSigmoid")
    return neuronOp(NeuronDescriptor::of(NeuronType::hardSigmoid, attrFloat("alpha", 0.2f),
                                         attrFloat("beta", 0.5f)));
  if (op == "HardSwish") return neuronOp(NeuronDescriptor::of(NeuronType::hardSwish));
  if (op == "Tanh") return neuronOp(NeuronDescriptor::of(NeuronType::tanh, 1.f, 1.f));
  if (op == "Elu") return neuronOp(NeuronDescriptor::of(NeuronType::elu, attrFloat("alpha", 1.f)));
  if (op == "Selu")
    return neuronOp(NeuronDescriptor::of(NeuronType::selu,
                                         attrFloat("alpha", 1.67326319217681884765625f),
                                         attrFloat("gamma", 1.05070102214813232421875f)));
  if (op == "Softplus") return neuronOp(NeuronDescriptor::of(NeuronType::softplus, 1.f, 1.f));
  if (op == "Softsign") return neuronOp(NeuronDescriptor::of(NeuronType::softsign));
  if (op == "Abs") return neuronOp(NeuronDescriptor::of(NeuronType::absolute));
  if (op == "Neg") return neuronOp(NeuronDescriptor::of(NeuronType::linear, -1.f, 0.f));
  if (op == "Exp") return neuronOp(NeuronDescriptor::of(NeuronType::exponential, 1.f, 0.f, 0.f));
  if (op == "Log") return neuronOp(NeuronDescriptor::of(NeuronType::logarithm, 1.f, 0.f, 0.f));
  if (op == "Sqrt") return neuronOp(NeuronDescriptor::of(NeuronType::power, 1.f, 0.f, 0.5f));
  if (op == "Clip") return clip();
  if (op == "PRelu") return prelu();
  if (op == "Pow") return pow();
  if (op == "Identity" || op == "Dropout") {
    if (op == "Dropout") {
      if (opset_ >= 12 && hasInput(2)) {
        const HostTensor& training = constantInput(2, "training_mode");
        if (training.size() == 1 && training.at(0) != 0) unsupported("Dropout in training mode");
      }
      if (outputUsed(1)) unsupported("the Dropout mask output of image data");
    }
    return setImage(0, imageInput(0));
  }
  if (op == "Cast") {
    const int32_t to = int32_t(attrInt("to", kFloat));
    if (!isFloatType(to))
      unsupported(std::string("Cast of image data to ") + elementTypeName(to) + " (data type)");
    return setImage(0, imageInput(0));
  }
  // Layers.
  if (op == "Conv") return conv();
  if (op == "ConvTranspose") return convTranspose();
  if (op == "MaxPool") return pool(true);
  if (op == "AveragePool") return pool(false);
  if (op == "GlobalAveragePool") return globalPool(false);
  if (op == "GlobalMaxPool") return globalPool(true);
  if (op == "BatchNormalization") return batchNormalization();
  if (op == "InstanceNormalization") return instanceNormalization();
  if (op == "LRN") return lrn();
  if (op == "Gemm") return gemm(false);
  if (op == "MatMul") return gemm(true);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return arithmetic(op);
  if (op == "Sum" || op == "Mean") return sum(op == "Mean");
  if (op == "Softmax") return softmax(false);
  if (op == "LogSoftmax") return softmax(true);
  if (op == "Concat") return concat();
  if (op == "Split") return split();
  if (op == "Slice") return slice();
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin")
    return reduce(op);
  if (op == "DepthToSpace") return depthSpace(false);
  if (op == "SpaceToDepth") return depthSpace(true);
  // Views: the image stays, the dims change.
  if (op == "Flatten") return reshapeLike(flattenTarget(imageInput(0).dims));
  if (op == "Reshape") return reshapeLike(reshapeTarget(imageInput(0).dims));
  if (op == "Squeeze") return reshapeLike(squeezeTarget(imageInput(0).dims));
  if (op == "Unsqueeze") return reshapeLike(unsqueezeTarget(imageInput(0).dims));
  if (op == "Transpose") return transpose();
  if (op == "Expand") {
    const ImageValue& x = imageInput(0);
    const auto dims = broadcastShapes(x.dims, toInt64s(constantInput(1, "shape")));
    if (dims != x.dims) unsupported("Expand that enlarges image data (tensor layout)");
    return reshapeLike(dims);
  }
  if (op == "Pad") return pad();
  if (op == "Resize" || op == "Upsample") return resize();
  if (op == "Gather") unsupported("Gather of image data (only constants are gathered)");
  unsupported("operator " + op + " is not supported (operator)");
}

// ---- parameters --------------------------------------------------------------------------------

Importer::PadParameters Importer::padParameters(const Shape4& s, size_t rank) {
  PadParameters p;
  std::vector<int64_t> pads;
  if (opset_ < 11) {
    auto a = attrInts(opset_ < 2 ? "paddings" : "pads");
    if (!a) invalidModel("Pad without pads");
    pads = *a;
    p.value = attrFloat("value", 0.f);
  } else {
    pads = toInt64s(constantInput(1, "pads"));
    if (hasInput(2)) {
      const HostTensor& v = constantInput(2, "constant_value");
      if (v.size() != 1) invalidModel("Pad constant_value must be a scalar");
      p.value = float(v.at(0));
    }
  }
  p.mode = attrString("mode", "constant");
  if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge")
    invalidModel("Pad mode '" + p.mode + "' is not constant, reflect or edge");
  if (pads.size() != 2 * rank)
    invalidModel("Pad has " + std::to_string(pads.size()) + " pads for rank " +
                 std::to_string(rank));
  for (int64_t v : pads)
    if (v < -kMaxInputDimension || v > kMaxInputDimension)
      invalidModel("Pad value " + std::to_string(v) + " is out of range");
  // [x1_begin, x2_begin, ..., x1_end, x2_end]: N and C unpadded; rank 3 pads H.
  if (pads[0] || pads[1] || pads[rank] || pads[rank + 1])
    unsupported("Pad along the batch or channel axes");
  p.top = pads[2];
  p.bottom = pads[rank + 2];
  if (rank == 4) {
    p.left = pads[3];
    p.right = pads[rank + 3];
  }
  if (s.h + p.top + p.bottom < 1 || s.w + p.left + p.right < 1)
    invalidModel("Pad crops the image away");
  return p;
}

Importer::ResizeParameters Importer::resizeParameters(const Shape4& s, size_t rank) {
  ResizeParameters p;
  const std::string& op = node_->op_type();
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (op == "Upsample") {
    if (opset_ < 9) {
      auto a = attrFloats("scales");
      if (!a) invalidModel("Upsample without scales");
      scales = *a;
    } else {
      scales = toFloats(constantInput(1, "scales"));
    }
    p.coordinateTransformation = "asymmetric";
    p.nearestMode = "floor";
  } else if (opset_ < 11) {
    scales = toFloats(constantInput(1, "scales"));
    p.coordinateTransformation = "asymmetric";
    p.nearestMode = "floor";
  } else {
    if (hasInput(1)) p.roi = toFloats(constantInput(1, "roi"));
    if (hasInput(2)) scales = toFloats(constantInput(2, "scales"));
    if (hasInput(3)) sizes = toInt64s(constantInput(3, "sizes"));
    p.coordinateTransformation = attrString("coordinate_transformation_mode", "half_pixel");
    p.nearestMode = attrString("nearest_mode", "round_prefer_floor");
    p.cubicCoefficientA = attrFloat("cubic_coeff_a", -0.75f);
    p.excludeOutside = attrInt("exclude_outside", 0) != 0;
    p.extrapolationValue = attrFloat("extrapolation_value", 0.f);
  }
  p.mode = attrString("mode", "nearest");
  if (p.mode == "bilinear") p.mode = "linear";  // Upsample 7's name
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
    invalidModel("mode '" + p.mode + "' is not nearest, linear or cubic");
  const int64_t inH = s.h, inW = rank == 4 ? s.w : 1;
  if (!sizes.empty()) {
    if (!scales.empty()) invalidModel("both scales and sizes are given");
    if (sizes.size() != rank) invalidModel("sizes needs one value per axis");
    if (sizes[0] != s.n || sizes[1] != s.c) unsupported("resizing the batch or channel axes");
    const int64_t outW = rank == 4 ? sizes[3] : 1;
    if (sizes[2] < 1 || sizes[2] > kMaxInputDimension || outW < 1 || outW > kMaxInputDimension)
      invalidModel("sizes " + dimsToString(sizes) + " are out of range");
    p.outputHeight = uint32_t(sizes[2]);
    p.outputWidth = uint32_t(outW);
    p.scaleY = float(double(sizes[2]) / double(inH));
    p.scaleX = float(double(outW) / double(inW));
  } else {
    if (scales.size() != rank) invalidModel("scales needs one value per axis");
    if (scales[0] != 1.f || scales[1] != 1.f) unsupported("resizing the batch or channel axes");
    for (float v : scales)
      if (!(v > 0) || !std::isfinite(v)) invalidModel("a scale is not positive and finite");
    p.scaleY = scales[2];
    p.scaleX = rank == 4 ? scales[3] : 1.f;
    const double outH = std::floor(double(inH) * p.scaleY),
                 outW = std::floor(double(inW) * p.scaleX);
    if (outH < 1 || outH > double(kMaxInputDimension) || outW < 1 ||
        outW > double(kMaxInputDimension)) {
      // Printed as doubles: a huge scale gives sizes no integer type holds.
      char size[96];
      std::snprintf(size, sizeof(size), "%.0fx%.0f", outH, outW);
      invalidModel(std::string("the resized image would be ") + size);
    }
    p.outputHeight = uint32_t(outH);
    p.outputWidth = uint32_t(outW);
  }
  return p;
}

std::vector<int64_t> Importer::legacyBroadcastDims(const std::vector<int64_t>& a,
                                                   const std::vector<int64_t>& b) {
  // Before opset 7, broadcast=1 aligned B with A starting at `axis` (default: the trailing axes).
  const int64_t rankA = int64_t(a.size()), rankB = int64_t(b.size());
  int64_t axis = attrInt("axis", rankA - rankB);
  if (axis < -rankA || axis > rankA)
    invalidModel("legacy broadcast axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += rankA;
  if (axis + rankB > rankA)
    invalidModel("legacy broadcast axis " + std::to_string(axis) + " does not fit " +
                 dimsToString(b) + " into " + dimsToString(a));
  std::vector<int64_t> dims = b;
  dims.resize(size_t(rankA - axis), 1);
  return dims;
}

std::vector<int64_t> Importer::reshapeTarget(const std::vector<int64_t>& in) {
  std::vector<int64_t> shape;
  if (opset_ < 5) {
    auto s = attrInts("shape");
    if (!s) invalidModel("Reshape without a shape attribute");
    shape = *s;
  } else {
    shape = toInt64s(constantInput(1, "shape"));
  }
  const bool allowZero = attrInt("allowzero", 0) != 0;
  int64_t known = 1, inferred = -1;
  const int64_t total = checkedElementCount(in, "Reshape input");
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0 && !allowZero) {
      if (k >= in.size())
        invalidModel("Reshape: 0 at axis " + std::to_string(k) + " copies no dim");
      shape[k] = in[k];
    }
    if (shape[k] == -1) {
      if (inferred >= 0) invalidModel("Reshape: more than one -1 in " + dimsToString(shape));
      inferred = int64_t(k);
      continue;
    }
    if (shape[k] < 0)
      invalidModel("Reshape: dimension " + std::to_string(shape[k]) + " is invalid");
    if (shape[k] > kMaxElements || (shape[k] && known > kMaxElements / shape[k]))
      invalidModel("Reshape: " + dimsToString(shape) + " is too large");
    known *= shape[k];
  }
  if (inferred >= 0) {
    if (known == 0 || total % known)
      invalidModel("Reshape: cannot infer -1 in " + dimsToString(shape) + " for " +
                   dimsToString(in));
    shape[size_t(inferred)] = total / known;
  }
  if (checkedElementCount(shape, "Reshape") != total)
    invalidModel("Reshape: " + dimsToString(in) + " cannot become " + dimsToString(shape));
  return shape;
}

std::vector<int64_t> Importer::flattenTarget(const std::vector<int64_t>& in) {
  const int64_t rank = int64_t(in.size());
  int64_t axis = attrInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) invalidModel("Flatten: axis out of range");
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < rank; ++k) (k < axis ? outer : inner) *= in[size_t(k)];
  return {outer, inner};
}

std::vector<int64_t> Importer::squeezeTarget(const std::vector<int64_t>& in) {
  std::optional<std::vector<int64_t>> axes;
  if (opset_ < 13)
    axes = attrInts("axes");
  else if (hasInput(1))
    axes = toInt64s(constantInput(1, "axes"));
  const int64_t rank = int64_t(in.size());
  std::vector<bool> drop(in.size(), false);
  if (!axes) {
    for (size_t k = 0; k < in.size(); ++k) drop[k] = in[k] == 1;
  } else {
    for (int64_t a : *axes) {
      a = normalizeAxis(a, rank, "Squeeze");
      if (in[size_t(a)] != 1)
        invalidModel("Squeeze: axis " + std::to_string(a) + " of " + dimsToString(in) +
                     " is not 1");
      drop[size_t(a)] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < in.size(); ++k)
    if (!drop[k]) out.push_back(in[k]);
  return out;
}

std::vector<int64_t> Importer::unsqueezeTarget(const std::vector<int64_t>& in) {
  std::vector<int64_t> axes;
  if (opset_ < 13) {
    auto a = attrInts("axes");
    if (!a) invalidModel("Unsqueeze without axes");
    axes = *a;
  } else {
    axes = toInt64s(constantInput(1, "axes"));
  }
  const int64_t rank = int64_t(in.size() + axes.size());
  std::vector<bool> inserted(size_t(rank), false);
  for (int64_t a : axes) {
    a = normalizeAxis(a, rank, "Unsqueeze");
    if (inserted[size_t(a)]) invalidModel("Unsqueeze: axis " + std::to_string(a) + " repeats");
    inserted[size_t(a)] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t k = 0; k < rank; ++k) out.push_back(inserted[size_t(k)] ? 1 : in[next++]);
  return out;
}

std::optional<std::vector<int64_t>> Importer::splitSizes(int64_t dim, int outputs) {
  std::optional<std::vector<int64_t>> sizes;
  if (opset_ < 13) {
    sizes = attrInts("split");
    if (!sizes && opset_ < 2 && hasInput(1)) sizes = toInt64s(constantInput(1, "split"));
  } else if (hasInput(1)) {
    sizes = toInt64s(constantInput(1, "split"));
  }
  if (!sizes) {
    if (outputs <= 0 || dim % outputs)
      invalidModel("Split: " + std::to_string(dim) + " does not split into " +
                   std::to_string(outputs) + " equal parts");
    sizes = std::vector<int64_t>(size_t(outputs), dim / outputs);
  }
  if (int(sizes->size()) != outputs)
    invalidModel("Split: " + std::to_string(sizes->size()) + " sizes for " +
                 std::to_string(outputs) + " outputs");
  int64_t total = 0;
  for (int64_t s : *sizes) {
    if (s < 0 || s > kMaxElements) invalidModel("Split: size " + std::to_string(s) + " is invalid");
    total += s;
  }
  if (total != dim)
    invalidModel("Split: sizes " + dimsToString(*sizes) + " do not add up to " +
                 std::to_string(dim));
  return sizes;
}

void Importer::sliceParameters(int64_t rank, std::vector<int64_t>& starts,
                               std::vector<int64_t>& ends, std::vector<int64_t>& axes,
                               std::vector<int64_t>& steps) {
  if (opset_ < 10) {
    auto s = attrInts("starts"), e = attrInts("ends");
    if (!s || !e) invalidModel("Slice without starts and ends");
    starts = *s;
    ends = *e;
    if (auto a = attrInts("axes")) axes = *a;
  } else {
    starts = toInt64s(constantInput(1, "starts"));
    ends = toInt64s(constantInput(2, "ends"));
    if (hasInput(3)) axes = toInt64s(constantInput(3, "axes"));
    if (hasInput(4)) steps = toInt64s(constantInput(4, "steps"));
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    invalidModel("Slice: starts, ends, axes and steps differ in length");
  for (int64_t& a : axes) a = normalizeAxis(a, rank, "Slice");
}

std::optional<std::vector<int64_t>> Importer::reduceAxes(const std::string& op, bool& noop) {
  noop = false;
  if (op == "ReduceSum" && opset_ >= 13) {
    if (hasInput(1)) {
      auto axes = toInt64s(constantInput(1, "axes"));
      if (!axes.empty()) return axes;
    }
    noop = attrInt("noop_with_empty_axes", 0) != 0;
    return std::nullopt;
  }
  return attrInts("axes");
}

std::vector<Importer::Window> Importer::windows(const std::vector<int64_t>& spatial,
                                                const std::vector<int64_t>& kernel,
                                                bool transposed) {
  const size_t n = spatial.size();
  auto list = [&](const char* name, int64_t fallback) {
    auto v = attrInts(name);
    if (!v) return std::vector<int64_t>(n, fallback);
    if (v->size() != n)
      invalidModel(std::string("attribute '") + name + "' has " + std::to_string(v->size()) +
                   " values for " + std::to_string(n) + " spatial axes");
    return *v;
  };
  const auto strides = list("strides", 1), dilations = list("dilations", 1);
  std::vector<int64_t> pads(2 * n, 0);
  if (auto p = attrInts("pads")) {
    if (p->size() != 2 * n)
      invalidModel("attribute 'pads' has " + std::to_string(p->size()) + " values for " +
                   std::to_string(n) + " spatial axes");
    pads = *p;
  }
  const std::string autoPad = attrString("auto_pad", "NOTSET");
  std::vector<Window> out(n);
  for (size_t k = 0; k < n; ++k) {
    Window& w = out[k];
    w.kernel = kernel[k];
    w.stride = strides[k];
    w.dilation = dilations[k];
    if (w.kernel < 1 || w.kernel > kMaxElements || w.stride < 1 || w.stride > kMaxElements ||
        w.dilation < 1 || w.dilation > kMaxElements ||
        (w.kernel - 1) * w.dilation + 1 > kMaxElements)
      invalidModel("kernel " + std::to_string(w.kernel) + ", stride " + std::to_string(w.stride) +
                   " and dilation " + std::to_string(w.dilation) + " must each be at least 1");
    w.padBegin = pads[k];
    w.padEnd = pads[k + n];
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      if (transposed) continue;  // ConvTranspose resolves its own
      const int64_t in = spatial[k];
      const int64_t outSize = (in + w.stride - 1) / w.stride;
      const int64_t dilated = (w.kernel - 1) * w.dilation + 1;
      const int64_t total = std::max<int64_t>(0, (outSize - 1) * w.stride + dilated - in);
      w.padBegin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padEnd = total - w.padBegin;
    } else if (autoPad == "VALID") {
      w.padBegin = w.padEnd = 0;
    } else if (autoPad != "NOTSET" && !autoPad.empty()) {
      invalidModel("auto_pad '" + autoPad + "' is not an ONNX value");
    }
    if (w.padBegin < 0 || w.padEnd < 0) unsupported("negative pads (cropping)");
    if (w.padBegin > kMaxElements || w.padEnd > kMaxElements) invalidModel("pads are too large");
  }
  return out;
}

// ---- layers ----------------------------------------------------------------------------------

void Importer::conv() {
  const ImageValue& x = imageInput(0);
  const size_t rank = x.dims.size();
  const Shape4 s = requireCanonical(x, 3);
  const HostTensor& w = floatConstant(1, "weights");
  if (w.rank() != int64_t(rank))
    invalidModel("weights " + dimsToString(w.dims) + " do not match the input rank " +
                 std::to_string(rank));
  const int64_t group = attrInt("group", 1);
  const int64_t m = w.dims[0], perGroup = w.dims[1];
  // Rank 3 ([N, C, L]) runs down the image's height.
  const int64_t kh = w.dims[2], kw = rank == 4 ? w.dims[3] : 1;
  if (group < 1 || group > s.c || perGroup * group != s.c || m % group)
    invalidModel("weights " + dimsToString(w.dims) + " with group " + std::to_string(group) +
                 " do not fit an input of " + std::to_string(s.c) + " channels");
  if (auto ks = attrInts("kernel_shape"))
    if (*ks != std::vector<int64_t>(w.dims.begin() + 2, w.dims.end()))
      invalidModel("kernel_shape " + dimsToString(*ks) + " disagrees with weights " +
                   dimsToString(w.dims));
  const auto win = rank == 4 ? windows({s.h, s.w}, {kh, kw}) : windows({s.h}, {kh});
  const Window wy = win[0], wx = rank == 4 ? win[1] : Window{1, 1, 1, 0, 0};

  ConvolutionDescriptor d = ConvolutionDescriptor::make(
      u32(kw, "kernel width"), u32(kh, "kernel height"), u32(s.c, "channels"), u32(m, "outputs"));
  d.strideInPixelsX = u32(wx.stride, "stride");
  d.strideInPixelsY = u32(wy.stride, "stride");
  d.dilationRateX = u32(wx.dilation, "dilation");
  d.dilationRateY = u32(wy.dilation, "dilation");
  d.groups = u32(group, "group");
  // ONNX [M][C/g][kH][kW] -> MPS [M][kH][kW][C/g].
  std::vector<float> weights(w.f.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < perGroup; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t xx = 0; xx < kw; ++xx)
          weights[size_t(((o * kh + y) * kw + xx) * perGroup + i)] =
              w.f[size_t(((o * perGroup + i) * kh + y) * kw + xx)];
  std::vector<float> bias;
  if (hasInput(2)) {
    bias = floatConstant(2, "bias").f;
    if (int64_t(bias.size()) != m)
      invalidModel(std::to_string(bias.size()) + " bias values for " + std::to_string(m) +
                   " outputs");
  }
  const Padding padding = Padding::explicitPadding(uint32_t(wy.padBegin), uint32_t(wx.padBegin),
                                                   uint32_t(wy.padEnd), uint32_t(wx.padEnd));
  GraphTensor out =
      graph_.convolution(x.tensor, d, std::move(weights), std::move(bias), padding, nodeName());
  convolutionOutputs_.insert(out.id);
  setImage(0, out, dimsLike(x, graph_.shape(out)));
}

void Importer::convTranspose() {
  const ImageValue& x = imageInput(0);
  const size_t rank = x.dims.size();
  const Shape4 s = requireCanonical(x, 3);
  const HostTensor& w = floatConstant(1, "weights");
  if (w.rank() != int64_t(rank))
    invalidModel("weights " + dimsToString(w.dims) + " do not match the input rank");
  const int64_t group = attrInt("group", 1);
  const int64_t c = w.dims[0], mPerGroup = w.dims[1];
  // Rank 3 ([N, C, L]) runs down the image's height.
  const int64_t kh = w.dims[2], kw = rank == 4 ? w.dims[3] : 1;
  if (group < 1 || group > s.c || c != s.c || c % group)
    invalidModel("weights " + dimsToString(w.dims) + " with group " + std::to_string(group) +
                 " do not fit an input of " + std::to_string(s.c) + " channels");
  const std::vector<int64_t> spatial =
      rank == 4 ? std::vector<int64_t>{s.h, s.w} : std::vector<int64_t>{s.h};
  const std::vector<int64_t> kernel =
      rank == 4 ? std::vector<int64_t>{kh, kw} : std::vector<int64_t>{kh};
  auto win = windows(spatial, kernel, true);
  const size_t n = spatial.size();
  std::vector<int64_t> outputPadding(n, 0);
  if (auto op = attrInts("output_padding")) {
    if (op->size() != n) invalidModel("output_padding needs one value per spatial axis");
    outputPadding = *op;
  }
  for (int64_t p : outputPadding)
    if (p < 0 || p > kMaxInputDimension)
      invalidModel("output_padding " + std::to_string(p) + " is out of range");
  std::optional<std::vector<int64_t>> outputShape = attrInts("output_shape");
  if (outputShape && outputShape->size() == n + 2)
    outputShape = std::vector<int64_t>(outputShape->begin() + 2, outputShape->end());
  if (outputShape && outputShape->size() != n)
    invalidModel("output_shape needs one value per spatial axis");
  if (outputShape)
    for (int64_t v : *outputShape)
      if (v < 1 || v > kMaxInputDimension)
        invalidModel("output_shape " + dimsToString(*outputShape) + " is out of range");
  const std::string autoPad = attrString("auto_pad", "NOTSET");
  for (size_t k = 0; k < n; ++k) {
    Window& wk = win[k];
    const int64_t dilated = (wk.kernel - 1) * wk.dilation + 1;
    const bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (!outputShape && !same) continue;
    const int64_t target = outputShape ? (*outputShape)[k] : spatial[k] * wk.stride;
    int64_t total = wk.stride * (spatial[k] - 1) + outputPadding[k] + dilated - target;
    if (total < 0) {
      // The requested size is beyond the full output: the extra pixels come from output padding.
      outputPadding[k] -= total;
      total = 0;
    }
    if (autoPad == "SAME_UPPER") {
      wk.padBegin = total / 2;
      wk.padEnd = total - total / 2;
    } else {
      wk.padBegin = total - total / 2;
      wk.padEnd = total / 2;
    }
  }
  const Window wy = win[0], wx = n == 2 ? win[1] : Window{1, 1, 1, 0, 0};
  ConvolutionTransposeDescriptor d;
  d.kernelWidth = u32(kw, "kernel width");
  d.kernelHeight = u32(kh, "kernel height");
  d.inputFeatureChannels = u32(c, "channels");
  d.outputFeatureChannels = u32(mPerGroup * group, "outputs");
  d.strideInPixelsX = u32(wx.stride, "stride");
  d.strideInPixelsY = u32(wy.stride, "stride");
  d.dilationRateX = u32(wx.dilation, "dilation");
  d.dilationRateY = u32(wy.dilation, "dilation");
  d.groups = u32(group, "group");
  d.padding = Padding::explicitPadding(uint32_t(wy.padBegin), uint32_t(wx.padBegin),
                                       uint32_t(wy.padEnd), uint32_t(wx.padEnd));
  d.outputPaddingY = u32(outputPadding[0], "output padding");
  d.outputPaddingX = n == 2 ? u32(outputPadding[1], "output padding") : 0;
  std::vector<float> bias;
  if (hasInput(2)) bias = floatConstant(2, "bias").f;
  auto kernel_ = std::make_shared<ConvolutionTranspose>(
      context_, d, convolutionTransposeWeightsFromOnnx(d, w.f), bias);
  GraphTensor out = graph_.unary(x.tensor, kernel_, nodeName());
  setImage(0, out, dimsLike(x, graph_.shape(out)));
}

void Importer::pool(bool max) {
  const ImageValue& x = imageInput(0);
  const size_t rank = x.dims.size();
  const Shape4 s = requireCanonical(x, 3);
  if (max && outputUsed(1)) unsupported("the MaxPool Indices output");
  auto ks = attrInts("kernel_shape");
  if (!ks || ks->size() != rank - 2) invalidModel("kernel_shape needs one value per spatial axis");
  const auto win = rank == 4 ? windows({s.h, s.w}, *ks) : windows({s.h}, *ks);
  const Window wy = win[0], wx = rank == 4 ? win[1] : Window{1, 1, 1, 0, 0};
  if (!max && attrInts("dilations") && (wx.dilation != 1 || wy.dilation != 1))
    unsupported("AveragePool with dilations");
  PoolingDescriptor d = PoolingDescriptor::of(u32(wx.kernel, "kernel"), u32(wy.kernel, "kernel"),
                                              u32(wx.stride, "stride"), u32(wy.stride, "stride"));
  d.dilationRateX = u32(wx.dilation, "dilation");
  d.dilationRateY = u32(wy.dilation, "dilation");
  d.padding = Padding::explicitPadding(uint32_t(wy.padBegin), uint32_t(wx.padBegin),
                                       uint32_t(wy.padEnd), uint32_t(wx.padEnd));
  d.padding.ceilMode = attrInt("ceil_mode", 0) != 0;
  d.countIncludePad = attrInt("count_include_pad", 0) != 0;
  std::shared_ptr<UnaryKernel> k;
  if (max)
    k = std::make_shared<PoolingMax>(context_, d);
  else
    k = std::make_shared<PoolingAverage>(context_, d);
  GraphTensor out = graph_.unary(x.tensor, k, nodeName());
  setImage(0, out, dimsLike(x, graph_.shape(out)));
}

void Importer::globalPool(bool max) {
  const ImageValue& x = imageInput(0);
  requireCanonical(x, 3);
  std::shared_ptr<UnaryKernel> k;
  if (max)
    k = std::make_shared<GlobalPoolingMax>(context_);
  else
    k = std::make_shared<GlobalPoolingAverage>(context_);
  GraphTensor out = graph_.unary(x.tensor, k, nodeName());
  setImage(0, out, dimsLike(x, graph_.shape(out)));
}

void Importer::batchNormalization() {
  Value& xv = rawImageInput(0);
  const Shape4 s = requireCanonical(xv.image);
  if (opset_ < 9 && attrInt("spatial", 1) == 0)
    unsupported("BatchNormalization with spatial = 0 (statistics per element)");
  if (attrInt("training_mode", 0) != 0) unsupported("BatchNormalization in training mode");
  for (int k = 1; k < node_->output_size(); ++k)
    if (outputUsed(k)) unsupported("BatchNormalization's training outputs (mean, variance)");
  const std::vector<float>& gamma = floatConstant(1, "scale").f;
  const std::vector<float>& beta = floatConstant(2, "B").f;
  const std::vector<float>& mean = floatConstant(3, "mean").f;
  const std::vector<float>& variance = floatConstant(4, "var").f;
  const double epsilon = attrFloat("epsilon", 1e-5f);
  for (const auto* v : {&gamma, &beta, &mean, &variance})
    if (int64_t(v->size()) != s.c)
      invalidModel("BatchNormalization parameters need " + std::to_string(s.c) +
                   " values, one has " + std::to_string(v->size()));
  std::vector<float> scale(size_t(s.c)), shift(size_t(s.c));
  for (size_t c = 0; c < scale.size(); ++c) {
    const double sc = double(gamma[c]) / std::sqrt(double(variance[c]) + epsilon);
    scale[c] = float(sc);
    shift[c] = float(double(beta[c]) - sc * double(mean[c]));
  }
  setAffine(0, xv, scale, shift);
}

void Importer::instanceNormalization() {
  const ImageValue& x = imageInput(0);
  const Shape4 s = requireCanonical(x, 3);
  InstanceNormalizationDescriptor d;
  d.featureChannels = u32(s.c, "channels");
  d.gamma = floatConstant(1, "scale").f;
  d.beta = floatConstant(2, "B").f;
  d.epsilon = attrFloat("epsilon", 1e-5f);
  GraphTensor out =
      graph_.unary(x.tensor, std::make_shared<InstanceNormalization>(context_, d), nodeName());
  setImage(0, out, x.dims);
}

void Importer::lrn() {
  const ImageValue& x = imageInput(0);
  requireCanonical(x);
  LocalResponseNormalizationDescriptor d;
  const int64_t size = attrInt("size", 0);
  if (size < 1) invalidModel("LRN size must be at least 1");
  d.size = u32(size, "size");
  d.alpha = attrFloat("alpha", 1e-4f);
  d.beta = attrFloat("beta", 0.75f);
  d.bias = attrFloat("bias", 1.0f);
  GraphTensor out =
      graph_.unary(x.tensor, std::make_shared<LocalResponseNormalization>(context_, d), nodeName());
  setImage(0, out, x.dims);
}

void Importer::gemm(bool matmul) {
  const ImageValue& a = imageInput(0);
  if (!matmul && attrInt("transA", 0)) unsupported("Gemm with transA (the image is A)");
  if (a.dims.size() != 2)
    unsupported(std::string(matmul ? "MatMul" : "Gemm") + " of a rank-" +
                std::to_string(a.dims.size()) + " tensor " + dimsToString(a.dims) +
                " (only [N, K] x [K, M] maps to a fully-connected layer) (tensor rank)");
  const Shape4 s = imageShape(a);
  if (a.dims[0] != s.n)
    unsupported("the tensor " + dimsToString(a.dims) + " mixes the batch of its image (" +
                std::to_string(s.n) + " images) into other axes (tensor layout)");
  const int64_t k = a.dims[1];
  const HostTensor& b = floatConstant(1, "B");
  if (b.rank() != 2) unsupported("B of rank " + std::to_string(b.rank()) + " (tensor rank)");
  const bool transB = !matmul && attrInt("transB", 0) != 0;
  const int64_t bk = transB ? b.dims[1] : b.dims[0], m = transB ? b.dims[0] : b.dims[1];
  if (bk != k)
    invalidModel("A " + dimsToString(a.dims) + " and B " + dimsToString(b.dims) +
                 (transB ? " (transposed)" : "") + " do not multiply");
  const float alpha = matmul ? 1.f : attrFloat("alpha", 1.f);
  const float beta = matmul ? 1.f : attrFloat("beta", 1.f);
  // k indexes A's row in CHW order of its image; MPS wants [out][h][w][c].
  const int64_t hw = s.h * s.w;
  std::vector<float> weights(size_t(m * k));
  for (int64_t o = 0; o < m; ++o)
    for (int64_t kk = 0; kk < k; ++kk) {
      const int64_t c = kk / hw, pixel = kk % hw;
      const float v = transB ? b.f[size_t(o * k + kk)] : b.f[size_t(kk * m + o)];
      weights[size_t((o * hw + pixel) * s.c + c)] = alpha * v;
    }
  std::vector<float> bias;
  if (!matmul && hasInput(2)) {
    const HostTensor& cT = floatConstant(2, "C");
    const auto dims = broadcastShapes(cT.dims, {a.dims[0], m});
    if (dims != std::vector<int64_t>{a.dims[0], m})
      invalidModel("C " + dimsToString(cT.dims) + " does not broadcast to the output");
    const bool perRow = cT.rank() == 2 && cT.dims[0] != 1;
    if (perRow && s.n != 1) unsupported("a Gemm bias C that differs between batch rows");
    bias.resize(size_t(m));
    for (int64_t o = 0; o < m; ++o) {
      const int64_t column = cT.dims.empty() || cT.dims.back() == 1 ? 0 : o;
      bias[size_t(o)] = beta * cT.f[size_t(column)];
    }
  }
  ConvolutionDescriptor d = ConvolutionDescriptor::make(u32(s.w, "width"), u32(s.h, "height"),
                                                        u32(s.c, "channels"), u32(m, "outputs"));
  GraphTensor out =
      graph_.fullyConnected(a.tensor, d, std::move(weights), std::move(bias), nodeName());
  convolutionOutputs_.insert(out.id);
  setImage(0, out, {a.dims[0], m});
}

// ---- element-wise ----------------------------------------------------------------------------

void Importer::arithmetic(const std::string& op) {
  const bool imageA = input(0).isImage, imageB = input(1).isImage;
  const bool legacy = opset_ < 7 && attrInt("broadcast", 0) != 0;
  const ArithmeticOperation operation = op == "Add"   ? ArithmeticOperation::add
                                        : op == "Sub" ? ArithmeticOperation::subtract
                                        : op == "Mul" ? ArithmeticOperation::multiply
                                                      : ArithmeticOperation::divide;
  if (imageA && imageB) {
    ImageValue a = imageInput(0), b = imageInput(1);
    if (legacy) b.dims = legacyBroadcastDims(a.dims, b.dims);
    const std::vector<int64_t> dims = broadcastShapes(a.dims, b.dims);
    bool swapped = false;
    if (b.dims == dims && a.dims != dims) {
      if (op == "Div") unsupported("Div that broadcasts its first operand");
      std::swap(a, b);
      swapped = true;
    }
    if (a.dims != dims)
      unsupported("both operands broadcast: " + dimsToString(a.dims) + " and " +
                  dimsToString(b.dims));
    if (!(a.dims == b.dims && imageShape(a) == imageShape(b))) {
      // b broadcasts onto a: both must be canonical images of the same rank.
      requireCanonical(a);
      std::vector<int64_t> bd = b.dims;
      bd.insert(bd.begin(), a.dims.size() - bd.size(), 1);
      if (bd[0] != a.dims[0]) unsupported("an operand broadcast along the batch axis");
      requireCanonical(ImageValue{b.tensor, bd});
    }
    GraphTensor out = graph_.arithmetic(a.tensor, b.tensor, operation, nodeName());
    if (swapped && op == "Sub")
      out = graph_.neuron(out, NeuronDescriptor::of(NeuronType::linear, -1.f, 0.f),
                          nodeName() + " (negated)");
    return setImage(0, out, dims);
  }
  // One constant operand.
  const bool imageFirst = imageA;
  Value& xv = rawImageInput(imageFirst ? 0 : 1);
  HostTensor k = constantInput(imageFirst ? 1 : 0, "constant operand");
  if (legacy && imageFirst) k = reshaped(k, legacyBroadcastDims(xv.image.dims, k.dims));
  if (!k.isFloat()) unsupported("arithmetic with a non-float constant (data type)");
  if (k.size() == 0) invalidModel("an empty constant operand");
  const std::vector<int64_t> dims = broadcastShapes(xv.image.dims, k.dims);
  if (dims != xv.image.dims)
    unsupported("a constant operand that enlarges the image data " + dimsToString(xv.image.dims) +
                " to " + dimsToString(dims));
  if (op == "Div" && !imageFirst) unsupported("dividing a constant by image data");
  // y = scale * x + shift for the constant value v.
  auto affineOf = [&](float v) -> std::pair<float, float> {
    if (op == "Add") return {1.f, v};
    if (op == "Sub") return imageFirst ? std::pair{1.f, -v} : std::pair{-1.f, v};
    if (op == "Mul") return {v, 0.f};
    return {1.f / v, 0.f};
  };
  const bool scalar = std::all_of(k.f.begin(), k.f.end(), [&](float v) { return v == k.f[0]; });
  const bool foldable = xv.affine || convolutionOutputs_.count(xv.image.tensor.id);
  if (scalar && (!foldable || !canonical(xv.image))) {
    // A linear neuron: layout-free, and the Graph fuses it into the node before it.
    const auto [a, b] = affineOf(k.f[0]);
    const ImageValue& x = materialize(xv);
    return setImage(0, neuron(x, NeuronDescriptor::of(NeuronType::linear, a, b)), x.dims);
  }
  // Per channel (or a scalar after a convolution): the constant is 1 everywhere but the channel
  // axis, and joins the value's pending affine.
  const Shape4 s = requireCanonical(xv.image);
  std::vector<float> perChannel(size_t(s.c), k.f[0]);
  if (!scalar) {
    std::vector<int64_t> kd = k.dims;
    kd.insert(kd.begin(), xv.image.dims.size() - kd.size(), 1);
    const size_t channelAxis = xv.image.dims.size() == 1 ? 0 : 1;
    for (size_t a = 0; a < kd.size(); ++a)
      if (a != channelAxis && kd[a] != 1)
        unsupported("a constant operand " + dimsToString(k.dims) + " that varies along axis " +
                    std::to_string(a) + " (only scalars and per-channel constants are supported)");
    perChannel = k.f;
  }
  std::vector<float> scale(size_t(s.c)), shift(size_t(s.c));
  for (size_t c = 0; c < scale.size(); ++c) std::tie(scale[c], shift[c]) = affineOf(perChannel[c]);
  setAffine(0, xv, scale, shift);
}

// Sum and Mean of any number of inputs: a chain of additions (two inputs may broadcast).
void Importer::sum(bool mean) {
  const int n = node_->input_size();
  if (n == 2 && !mean) return arithmetic("Add");
  const ImageValue& first = imageInput(0);
  GraphTensor acc = first.tensor;
  for (int k = 1; k < n; ++k) {
    const ImageValue& x = imageInput(k);
    if (x.dims != first.dims || !(imageShape(x) == imageShape(first)))
      unsupported(std::string(mean ? "Mean" : "Sum") + " of more than two inputs that broadcast (" +
                  dimsToString(first.dims) + " and " + dimsToString(x.dims) + ")");
    acc = graph_.arithmetic(acc, x.tensor, ArithmeticOperation::add,
                            nodeName() + (k + 1 < n ? " #" + std::to_string(k) : std::string()));
  }
  if (mean && n > 1)
    acc = graph_.neuron(acc, NeuronDescriptor::of(NeuronType::linear, 1.f / float(n), 0.f),
                        nodeName() + " (mean)");
  setImage(0, acc, first.dims);
}

void Importer::prelu() {
  const ImageValue& x = imageInput(0);
  const HostTensor& slope = floatConstant(1, "slope");
  NeuronDescriptor n{NeuronType::prelu};
  if (slope.size() == 1 ||
      std::all_of(slope.f.begin(), slope.f.end(), [&](float v) { return v == slope.f[0]; })) {
    if (slope.size() == 0) invalidModel("PRelu with an empty slope");
    n.preluSlopes = {slope.f[0]};
    return setImage(0, neuron(x, n), x.dims);
  }
  const Shape4 s = requireCanonical(x);
  std::vector<int64_t> sd = slope.dims;
  // Before opset 7 a slope of C values was per channel; later it broadcasts numpy-style.
  if (opset_ < 7 && sd.size() == 1 && sd[0] == s.c) sd = {s.c, 1, 1};
  while (sd.size() > x.dims.size() && sd.front() == 1) sd.erase(sd.begin());
  if (sd.size() > x.dims.size())
    invalidModel("PRelu slope " + dimsToString(slope.dims) + " is too large");
  sd.insert(sd.begin(), x.dims.size() - sd.size(), 1);
  for (size_t a = 0; a < sd.size(); ++a)
    if ((a == 1 && sd[a] != s.c) || (a != 1 && sd[a] != 1))
      unsupported("PRelu slope " + dimsToString(slope.dims) +
                  " that is neither one value nor one per channel");
  n.preluSlopes = slope.f;
  setImage(0, neuron(x, n), x.dims);
}

void Importer::clip() {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (opset_ < 11) {
    lo = attrFloat("min", lo);
    hi = attrFloat("max", hi);
  } else {
    auto scalar = [&](int k, const char* role) {
      const HostTensor& t = constantInput(k, role);
      if (t.size() != 1) invalidModel(std::string("Clip ") + role + " must be a scalar");
      return float(t.at(0));
    };
    if (hasInput(1)) lo = scalar(1, "min");
    if (hasInput(2)) hi = scalar(2, "max");
  }
  if (lo == 0 && hi == std::numeric_limits<float>::infinity())
    return neuronOp(NeuronDescriptor::relu());
  neuronOp(NeuronDescriptor::of(NeuronType::clamp, lo, hi));
}

void Importer::pow() {
  const ImageValue& x = imageInput(0);
  const HostTensor& e = constantInput(1, "exponent");
  if (e.size() != 1) unsupported("Pow with an exponent that is not a scalar");
  const double p = e.at(0);
  if (p == 1) return setImage(0, x);
  if (p == 2)
    return setImage(
        0, graph_.arithmetic(x.tensor, x.tensor, ArithmeticOperation::multiply, nodeName()),
        x.dims);
  // The power neuron is pow(), undefined for negative bases: only exponents where ONNX gives NaN
  // there too (non-integers) map to it.
  if (p != std::floor(p))
    return neuronOp(NeuronDescriptor::of(NeuronType::power, 1.f, 0.f, float(p)));
  // Printed as a double: an integer-valued exponent may be past any integer type (or infinite).
  char exponent[64];
  std::snprintf(exponent, sizeof(exponent), "%.0f", p);
  unsupported(std::string("Pow with the integer exponent ") + exponent);
}

void Importer::softmax(bool log) {
  const ImageValue& x = imageInput(0);
  const Shape4 s = requireCanonical(x);
  const int64_t rank = int64_t(x.dims.size());
  const int64_t axis = normalizeAxis(attrInt("axis", opset_ < 13 ? 1 : -1), rank, "Softmax");
  const std::string what = log ? "LogSoftmax" : "Softmax";
  bool channels = false, spatial = false;
  std::vector<bool> reducedAxis(size_t(rank), false);
  for (int64_t a = 0; a < rank; ++a) {
    reducedAxis[size_t(a)] = opset_ < 13 ? a >= axis : a == axis;
    if (!reducedAxis[size_t(a)] || x.dims[size_t(a)] == 1) continue;
    const ImageAxis ia = imageAxis(size_t(rank), a);
    if (ia == ImageAxis::n) unsupported(what + " over the batch axis");
    (ia == ImageAxis::c ? channels : spatial) = true;
  }
  if (channels && spatial)
    unsupported(what + " over channels and space together (" + dimsToString(x.dims) + ", axis " +
                std::to_string(axis) + ")");
  if (spatial) {
    for (int64_t a = 0; a < rank; ++a) {
      const ImageAxis ia = imageAxis(size_t(rank), a);
      if ((ia == ImageAxis::h || ia == ImageAxis::w) && x.dims[size_t(a)] > 1 &&
          !reducedAxis[size_t(a)])
        unsupported(what + " over one spatial axis of " + dimsToString(x.dims) +
                    " (only over the whole H x W plane)");
    }
    return spatialSoftmax(x, log, s);
  }
  if (!channels && s.c > 1) {
    // Every reduced axis has one element: softmax is 1, log-softmax 0.
    return setImage(0, neuron(x, NeuronDescriptor::of(NeuronType::linear, 0.f, log ? 0.f : 1.f)),
                    x.dims);
  }
  std::shared_ptr<UnaryKernel> k;
  if (log)
    k = std::make_shared<LogSoftmax>(context_);
  else
    k = std::make_shared<Softmax>(context_);
  setImage(0, graph_.unary(x.tensor, k, nodeName()), x.dims);
}

// Softmax over the H x W plane of each channel, from global pooling and broadcast arithmetic:
//   m = max over the plane, e = exp(x - m), y = e / sum(e)  or  y = (x - m) - log(sum(e)).
void Importer::spatialSoftmax(const ImageValue& x, bool log, const Shape4& s) {
  const std::string name = nodeName();
  const float pixels = float(s.h * s.w);
  GraphTensor m =
      graph_.unary(x.tensor, std::make_shared<GlobalPoolingMax>(context_), name + " (max)");
  GraphTensor t = graph_.arithmetic(x.tensor, m, ArithmeticOperation::subtract, name + " (shift)");
  GraphTensor e = graph_.neuron(t, NeuronDescriptor::of(NeuronType::exponential, 1.f, 0.f, 0.f),
                                name + " (exp)");
  GraphTensor mean =
      graph_.unary(e, std::make_shared<GlobalPoolingAverage>(context_), name + " (mean)");
  if (!log) {
    GraphTensor y = graph_.arithmetic(e, mean, ArithmeticOperation::divide, name);
    y = graph_.neuron(y, NeuronDescriptor::of(NeuronType::linear, 1.f / pixels, 0.f),
                      name + " (scale)");
    return setImage(0, y, x.dims);
  }
  GraphTensor l = graph_.neuron(mean, NeuronDescriptor::of(NeuronType::logarithm, pixels, 0.f, 0.f),
                                name + " (log)");
  setImage(0, graph_.arithmetic(t, l, ArithmeticOperation::subtract, name), x.dims);
}

// ---- channel and spatial rearrangement --------------------------------------------------------

void Importer::concat() {
  std::vector<const ImageValue*> parts;
  for (int k = 0; k < node_->input_size(); ++k) {
    if (!hasInput(k)) continue;
    if (!input(k).isImage)
      unsupported("Concat of image data with a constant (input " + std::to_string(k) + ")");
    parts.push_back(&imageInput(k));
  }
  if (parts.empty()) invalidModel("Concat without inputs");
  if (parts.size() == 1) return setImage(0, *parts[0]);
  const int64_t rank = int64_t(parts[0]->dims.size());
  const int64_t axis = normalizeAxis(attrInt("axis", opset_ < 4 ? 1 : 0), rank, "Concat");
  std::vector<GraphTensor> tensors;
  std::vector<int64_t> dims = parts[0]->dims;
  dims[size_t(axis)] = 0;
  for (const ImageValue* p : parts) {
    requireCanonical(*p);
    if (int64_t(p->dims.size()) != rank) invalidModel("Concat inputs differ in rank");
    dims[size_t(axis)] += p->dims[size_t(axis)];
    tensors.push_back(p->tensor);
  }
  if (imageAxis(size_t(rank), axis) != ImageAxis::c)
    unsupported("Concat along axis " + std::to_string(axis) + " of " + dimsToString(dims) +
                " (only the channel axis is supported) (tensor layout)");
  setImage(0, graph_.concat(tensors, nodeName()), dims);
}

// One window of a canonical image: channels [c0, +cn), rows [y0, +hn), columns [x0, +wn).
struct Crop {
  int64_t c0, cn, y0, hn, x0, wn;
};

void Importer::split() {
  const ImageValue& x = imageInput(0);
  const Shape4 s = requireCanonical(x);
  const int64_t rank = int64_t(x.dims.size());
  const int64_t axis = normalizeAxis(attrInt("axis", 0), rank, "Split");
  auto sizes = splitSizes(x.dims[size_t(axis)], node_->output_size());
  const ImageAxis ia = imageAxis(size_t(rank), axis);
  if (ia == ImageAxis::n && node_->output_size() > 1) unsupported("Split along the batch axis");
  int64_t start = 0;
  for (int k = 0; k < node_->output_size(); ++k) {
    const int64_t size = (*sizes)[size_t(k)];
    std::vector<int64_t> dims = x.dims;
    dims[size_t(axis)] = size;
    if (outputUsed(k)) {
      if (size == 0) unsupported("an empty Split output");
      if (size == x.dims[size_t(axis)]) {
        setImage(k, x.tensor, dims);
      } else {
        auto copy =
            std::make_shared<WindowCopy>(context_, uint32_t(ia == ImageAxis::w ? size : s.w),
                                         uint32_t(ia == ImageAxis::h ? size : s.h));
        if (ia == ImageAxis::c) {
          copy->sourceFeatureChannelOffset = uint32_t(start);
          copy->sourceFeatureChannelMaxCount = uint32_t(size);
        }
        if (ia == ImageAxis::w) copy->offset.x = int32_t(start);
        if (ia == ImageAxis::h) copy->offset.y = int32_t(start);
        setImage(k, graph_.unary(x.tensor, copy, nodeName() + ":" + std::to_string(k)), dims);
      }
    }
    start += size;
  }
}

void Importer::slice() {
  const ImageValue& x = imageInput(0);
  const int64_t rank = int64_t(x.dims.size());
  std::vector<int64_t> starts, ends, axes, steps;
  sliceParameters(rank, starts, ends, axes, steps);
  std::vector<int64_t> first(size_t(rank), 0), dims = x.dims;
  bool identity = true;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = axes[k];
    const SliceRange r = sliceRange(x.dims[size_t(a)], starts[k], ends[k], steps[k]);
    if (r.count == x.dims[size_t(a)] && (steps[k] == 1 || r.count <= 1) && r.start == 0) continue;
    if (r.count == 0) unsupported("a Slice that leaves nothing");
    if (steps[k] != 1 && r.count > 1) unsupported("Slice with step " + std::to_string(steps[k]));
    first[size_t(a)] = r.start;
    dims[size_t(a)] = r.count;
    identity = false;
  }
  if (identity) return setImage(0, x);
  const Shape4 s = requireCanonical(x);
  Crop crop{0, s.c, 0, s.h, 0, s.w};
  for (int64_t a = 0; a < rank; ++a) {
    if (dims[size_t(a)] == x.dims[size_t(a)]) continue;
    switch (imageAxis(size_t(rank), a)) {
      case ImageAxis::n:
        unsupported("Slice along the batch axis");
      case ImageAxis::c:
        crop.c0 = first[size_t(a)];
        crop.cn = dims[size_t(a)];
        break;
      case ImageAxis::h:
        crop.y0 = first[size_t(a)];
        crop.hn = dims[size_t(a)];
        break;
      case ImageAxis::w:
        crop.x0 = first[size_t(a)];
        crop.wn = dims[size_t(a)];
        break;
    }
  }
  auto copy = std::make_shared<WindowCopy>(context_, uint32_t(crop.wn), uint32_t(crop.hn));
  copy->sourceFeatureChannelOffset = uint32_t(crop.c0);
  copy->sourceFeatureChannelMaxCount = uint32_t(crop.cn);
  copy->offset.x = int32_t(crop.x0);
  copy->offset.y = int32_t(crop.y0);
  setImage(0, graph_.unary(x.tensor, copy, nodeName()), dims);
}

void Importer::reduce(const std::string& op) {
  const ImageValue& x = imageInput(0);
  bool noop = false;
  auto axesOpt = reduceAxes(op, noop);
  if (noop) return setImage(0, x);
  const Shape4 s = requireCanonical(x);
  const int64_t rank = int64_t(x.dims.size());
  const bool keep = attrInt("keepdims", 1) != 0;
  std::vector<bool> reducedAxis(size_t(rank), !axesOpt);
  if (axesOpt)
    for (int64_t a : *axesOpt) reducedAxis[size_t(normalizeAxis(a, rank, op))] = true;
  bool spatial = false, channels = false;
  for (int64_t a = 0; a < rank; ++a) {
    if (!reducedAxis[size_t(a)] || x.dims[size_t(a)] == 1) continue;
    switch (imageAxis(size_t(rank), a)) {
      case ImageAxis::n:
        unsupported(op + " over the batch axis");
      case ImageAxis::c:
        channels = true;
        break;
      default:
        spatial = true;
    }
  }
  // A reduced spatial axis must take the whole plane (global pooling reduces H and W together).
  if (spatial)
    for (int64_t a = 0; a < rank; ++a) {
      const ImageAxis ia = imageAxis(size_t(rank), a);
      if ((ia == ImageAxis::h || ia == ImageAxis::w) && x.dims[size_t(a)] > 1 &&
          !reducedAxis[size_t(a)])
        unsupported(op + " over one spatial axis of " + dimsToString(x.dims) +
                    " (only both H and W together)");
    }
  std::vector<int64_t> dims;
  for (int64_t a = 0; a < rank; ++a)
    if (!reducedAxis[size_t(a)])
      dims.push_back(x.dims[size_t(a)]);
    else if (keep)
      dims.push_back(1);
  GraphTensor t = x.tensor;
  const std::string name = nodeName();
  if (spatial) {
    if (op == "ReduceMean" || op == "ReduceSum") {
      t = graph_.unary(t, std::make_shared<GlobalPoolingAverage>(context_), name);
      if (op == "ReduceSum")
        t = graph_.neuron(t, NeuronDescriptor::of(NeuronType::linear, float(s.h * s.w), 0.f),
                          name + " (sum)");
    } else if (op == "ReduceMax") {
      t = graph_.unary(t, std::make_shared<GlobalPoolingMax>(context_), name);
    } else {
      // min(x) = -max(-x)
      t = graph_.neuron(t, NeuronDescriptor::of(NeuronType::linear, -1.f, 0.f), name + " (negate)");
      t = graph_.unary(t, std::make_shared<GlobalPoolingMax>(context_), name);
      t = graph_.neuron(t, NeuronDescriptor::of(NeuronType::linear, -1.f, 0.f),
                        name + " (negate back)");
    }
  }
  if (channels) {
    if (op != "ReduceMean" && op != "ReduceSum")
      unsupported(op + " over the channel axis (only ReduceMean and ReduceSum)");
    // A 1x1 convolution to one channel sums (or averages) the channels.
    const TensorShape ts = graph_.shape(t);
    const float w = op == "ReduceMean" ? 1.f / float(s.c) : 1.f;
    t = graph_.convolution(t, ConvolutionDescriptor::make(1, 1, ts.featureChannels, 1),
                           std::vector<float>(ts.featureChannels, w), {}, {}, name + " (channels)");
  }
  if (!spatial && !channels) return setImage(0, x.tensor, dims);
  setImage(0, t, dims);
}

void Importer::reshapeLike(std::vector<int64_t> dims) {
  const ImageValue& x = imageInput(0);
  if (checkedElementCount(dims, "reshaped tensor") != checkedElementCount(x.dims, "tensor"))
    invalidModel(dimsToString(x.dims) + " cannot become " + dimsToString(dims));
  setImage(0, x.tensor, std::move(dims));
}

void Importer::transpose() {
  const ImageValue& x = imageInput(0);
  const int64_t rank = int64_t(x.dims.size());
  std::vector<int64_t> perm;
  if (auto p = attrInts("perm"))
    perm = *p;
  else
    for (int64_t k = rank; k-- > 0;) perm.push_back(k);
  if (int64_t(perm.size()) != rank) invalidModel("Transpose perm has the wrong length");
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  std::vector<bool> seen(size_t(rank), false);
  for (int64_t k = 0; k < rank; ++k) {
    if (perm[size_t(k)] < 0 || perm[size_t(k)] >= rank || seen[size_t(perm[size_t(k)])])
      invalidModel("Transpose perm " + dimsToString(perm) + " is not a permutation");
    seen[size_t(perm[size_t(k)])] = true;
    dims[size_t(k)] = x.dims[size_t(perm[size_t(k)])];
  }
  // Only axes of extent 1 move: the element order stays.
  std::vector<int64_t> order;
  for (int64_t p : perm)
    if (x.dims[size_t(p)] != 1) order.push_back(p);
  if (std::is_sorted(order.begin(), order.end())) return reshapeLike(dims);

  const Shape4 s = imageShape(x);
  const auto& d = x.dims;
  auto product = [&](size_t from, size_t to) {
    int64_t p = 1;
    for (size_t k = from; k < to; ++k) p *= d[k];
    return p;
  };
  // Channel shuffle: [N, g, C/g, rest...] with axes 1 and 2 swapped.
  if (rank >= 3 && d[0] == s.n && d[1] * d[2] == s.c && product(3, size_t(rank)) == s.h * s.w &&
      perm[0] == 0 && perm[1] == 2 && perm[2] == 1) {
    bool restInPlace = true;
    for (int64_t k = 3; k < rank; ++k) restInPlace &= perm[size_t(k)] == k;
    if (restInPlace) {
      auto k = std::make_shared<ChannelShuffle>(context_, u32(d[1], "groups"));
      return setImage(0, graph_.unary(x.tensor, k, nodeName()), dims);
    }
  }
  // Depth to space and back, as PixelShuffle exports: rank 6 views of [N, C, H, W].
  if (rank == 6 && d[0] == s.n) {
    const std::vector<int64_t> crd = {0, 1, 4, 2, 5, 3}, dcr = {0, 3, 4, 1, 5, 2},
                               s2d = {0, 3, 5, 1, 2, 4};
    // CRD: [N, C', b, b, H, W] -> [N, C', H, b, W, b]; DCR: [N, b, b, C', H, W] -> the same.
    if ((perm == crd || perm == dcr) && d[2] == (perm == crd ? d[3] : d[1]) && d[4] == s.h &&
        d[5] == s.w && d[1] * d[2] * d[3] == s.c) {
      const bool isCrd = perm == crd;
      const int64_t b = isCrd ? d[2] : d[1];
      if ((isCrd && d[3] == b) || (!isCrd && d[2] == b)) {
        auto k = std::make_shared<DepthToSpace>(
            context_, u32(b, "block"), isCrd ? DepthToSpace::Mode::CRD : DepthToSpace::Mode::DCR);
        return setImage(0, graph_.unary(x.tensor, k, nodeName()), dims);
      }
    }
    // [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b]
    if (perm == s2d && d[1] == s.c && d[3] == d[5] && d[2] * d[3] == s.h && d[4] * d[5] == s.w) {
      auto k = std::make_shared<SpaceToDepth>(context_, u32(d[3], "block"));
      return setImage(0, graph_.unary(x.tensor, k, nodeName()), dims);
    }
  }
  unsupported("Transpose with perm " + dimsToString(perm) + " of " + dimsToString(x.dims) +
              " moves data across the image layout (tensor layout)");
}

void Importer::pad() {
  const ImageValue& x = imageInput(0);
  const Shape4 s = requireCanonical(x, 3);
  const PadParameters p = padParameters(s, x.dims.size());
  PadDescriptor d;
  d.mode = p.mode == "edge"      ? PadMode::edge
           : p.mode == "reflect" ? PadMode::reflect
                                 : PadMode::constant;
  d.top = int32_t(p.top);
  d.left = int32_t(p.left);
  d.bottom = int32_t(p.bottom);
  d.right = int32_t(p.right);
  d.value = p.value;
  if (d.mode == PadMode::reflect) {
    // The kernel reflects once; ONNX (numpy) would reflect again for larger amounts.
    const auto once = [&](int64_t amount, int64_t extent, const char* side) {
      if (amount >= extent)
        unsupported("reflect padding of " + std::to_string(amount) + " pixels at the " + side +
                    " of an extent of " + std::to_string(extent) + " (more than one reflection)");
    };
    once(p.top, s.h, "top");
    once(p.bottom, s.h, "bottom");
    once(p.left, s.w, "left");
    once(p.right, s.w, "right");
  }
  GraphTensor out = graph_.unary(x.tensor, std::make_shared<Pad>(context_, d), nodeName());
  setImage(0, out, dimsLike(x, graph_.shape(out)));
}

void Importer::resize() {
  const ImageValue& x = imageInput(0);
  const Shape4 s = requireCanonical(x, 3);
  const std::string& op = node_->op_type();
  const ResizeParameters p = resizeParameters(s, x.dims.size());
  if (attrInt("antialias", 0) != 0) unsupported(op + " with antialias");
  ResizeDescriptor d;
  d.width = p.outputWidth;
  d.height = p.outputHeight;
  if (p.mode == "cubic") unsupported(op + " in cubic mode");
  d.mode = p.mode == "linear" ? ResizeMode::bilinear : ResizeMode::nearest;
  const std::string& ct = p.coordinateTransformation;
  if (ct == "half_pixel")
    d.coordinateTransformationMode = CoordinateTransformationMode::halfPixel;
  else if (ct == "pytorch_half_pixel")
    d.coordinateTransformationMode = CoordinateTransformationMode::pytorchHalfPixel;
  else if (ct == "align_corners")
    d.coordinateTransformationMode = CoordinateTransformationMode::alignCorners;
  else if (ct == "asymmetric")
    d.coordinateTransformationMode = CoordinateTransformationMode::asymmetric;
  else if (ct == "tf_half_pixel_for_nn")
    d.coordinateTransformationMode = CoordinateTransformationMode::tfHalfPixelForNN;
  else if (ct == "tf_crop_and_resize")
    unsupported(op + " with coordinate_transformation_mode tf_crop_and_resize");
  else
    invalidModel("coordinate_transformation_mode '" + ct + "' is not an ONNX value");
  const std::string& nm = p.nearestMode;
  if (nm == "round_prefer_floor")
    d.nearestMode = NearestMode::roundPreferFloor;
  else if (nm == "round_prefer_ceil")
    d.nearestMode = NearestMode::roundPreferCeil;
  else if (nm == "floor")
    d.nearestMode = NearestMode::floor;
  else if (nm == "ceil")
    d.nearestMode = NearestMode::ceil;
  else
    invalidModel("nearest_mode '" + nm + "' is not an ONNX value");
  // The kernel maps coordinates with the sizes (scale = output / input); ONNX with the given
  // scale, and align_corners with the unfloored resized length input * scale. Both differ when
  // input * scale is not whole (the output size is floored then).
  const auto check = [&](float scale, int64_t in, uint32_t outSize, const char* axis) {
    const double exact = double(outSize) / double(in);
    if (std::fabs(double(scale) - exact) > 1e-6 * exact)
      unsupported(op + " scale " + std::to_string(scale) + " along " + axis + " (size " +
                  std::to_string(in) + " -> " + std::to_string(outSize) +
                  ") that is not output size / input size (the kernel resizes to whole sizes)");
  };
  check(p.scaleY, s.h, p.outputHeight, "the height");
  check(p.scaleX, x.dims.size() == 4 ? s.w : 1, p.outputWidth, "the width");
  GraphTensor out = graph_.unary(x.tensor, std::make_shared<Resize>(context_, d), nodeName());
  setImage(0, out, dimsLike(x, graph_.shape(out)));
}

void Importer::depthSpace(bool toSpace) {
  const ImageValue& x = imageInput(0);
  if (x.dims.size() != 4)
    unsupported("a rank-" + std::to_string(x.dims.size()) + " input (tensor rank)");
  const Shape4 s = requireCanonical(x, 4);
  const int64_t b = attrInt("blocksize", 0);
  if (b < 1 || b > 4096) invalidModel("blocksize " + std::to_string(b) + " is not in [1, 4096]");
  std::shared_ptr<UnaryKernel> k;
  if (toSpace) {
    if (s.h % b || s.w % b) invalidModel("the input's size is not a multiple of the block size");
    k = std::make_shared<SpaceToDepth>(context_, u32(b, "blocksize"));
  } else {
    if (s.c % (b * b)) invalidModel("the input's channels are not a multiple of blocksize^2");
    const std::string mode = attrString("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") invalidModel("mode '" + mode + "' is not DCR or CRD");
    k = std::make_shared<DepthToSpace>(
        context_, u32(b, "blocksize"),
        mode == "CRD" ? DepthToSpace::Mode::CRD : DepthToSpace::Mode::DCR);
  }
  GraphTensor out = graph_.unary(x.tensor, k, nodeName());
  setImage(0, out, dimsLike(x, graph_.shape(out)));
}

// ---- driver ----------------------------------------------------------------------------------

OnnxImport Importer::run() {
  opset_ = defaultOpset(model_);
  if (opset_ > kNewestOpset)
    unsupported("opset " + std::to_string(opset_) + " is newer than the importer knows (up to " +
                std::to_string(kNewestOpset) + ")");
  runChecker(model_);
  if (opset_ < 0)
    unsupported(
        "the model imports no version of the default (ai.onnx) domain, only other "
        "domains' operators (operator)");
  if (model_.graph().sparse_initializer_size())
    unsupported("sparse initializers are not supported");
  info_.irVersion = model_.ir_version();
  info_.opsetVersion = opset_;
  info_.producerName = model_.producer_name();
  info_.producerVersion = model_.producer_version();
  info_.graphName = model_.graph().name();

  importInputs();
  if (batch_ == 0)
    unsupported("the model has no float image input (every input is a constant) (constant output)");
  const auto& nodes = model_.graph().node();
  for (int k = 0; k < nodes.size(); ++k) importNode(nodes[k], size_t(k));
  node_ = nullptr;
  importOutputs();
  // onnx's shape inference runs last, on a model whose every node the importer understood and
  // whose parameters it validated: onnx 1.12's inference functions divide by strides, block sizes
  // and shape products straight from the file (a zero is SIGFPE) and index dims by the ranks they
  // expect, so a hostile model must never reach them unchecked. The shapes the model declares are
  // checked here and then dropped: inference starts from the resolved inputs alone (a graph output
  // that renames an input with another shape would otherwise hand it a wrong rank). It runs
  // strict (a node it cannot infer is an error) but not type-checked (exporters wrote int64
  // Constants in opsets whose schema allowed only floats), and every static shape it finds must
  // be the one the importer computed.
  crossCheckShapes("the model declares");
  model_.mutable_graph()->clear_value_info();
  for (auto& out : *model_.mutable_graph()->mutable_output())
    if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  try {
    onnx::ShapeInferenceOptions options(false, 1, false);
    onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    invalidModel(std::string("onnx shape inference: ") + splitLines(e.what()).front());
  }
  crossCheckShapes("onnx shape inference gives");
  return OnnxImport{std::move(graph_), std::move(info_)};
}

std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) throw Error(ErrorCode::io, "cannot open ONNX model '" + path + "'");
  const std::streamoff size = file.tellg();
  if (size < 0) throw Error(ErrorCode::io, "cannot read ONNX model '" + path + "'");
  if (size > std::numeric_limits<int>::max())
    invalidModel("'" + path + "' is " + std::to_string(size) +
                 " bytes; protobuf files are limited to 2 GiB");
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(bytes.data()), size))
    throw Error(ErrorCode::io, "cannot read ONNX model '" + path + "'");
  return bytes;
}

OnnxModelInfo inspect(std::span<const uint8_t> bytes) {
  onnx::ModelProto model = parseModel(bytes);
  runChecker(model);
  OnnxModelInfo info;
  info.irVersion = model.ir_version();
  info.opsetVersion = defaultOpset(model);
  info.producerName = model.producer_name();
  info.producerVersion = model.producer_version();
  info.graphName = model.graph().name();
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  for (const auto& in : model.graph().input())
    if (!initializers.count(in.name())) info.inputs.push_back(declaredInfo(in));
  for (const auto& out : model.graph().output()) info.outputs.push_back(declaredInfo(out));
  return info;
}

std::string prefixed(const std::string& source, const std::string& message) {
  return source + ": " + message;
}

}  // namespace
}  // namespace detail::onnx_import

using namespace detail::onnx_import;

OnnxImport importOnnxModelFromMemory(const Context& context, std::span<const uint8_t> bytes,
                                     const OnnxImportOptions& options) {
  onnx::ModelProto model = parseModel(bytes);
  Importer importer(context, model, options, bytes.size());
  return importer.run();
}

OnnxImport importOnnxModel(const Context& context, const std::string& path,
                           const OnnxImportOptions& options) {
  const std::vector<uint8_t> bytes = readFile(path);
  try {
    return importOnnxModelFromMemory(context, bytes, options);
  } catch (const Error& e) {
    throw Error(e.code(), prefixed("'" + path + "'", messageOf(e)));
  }
}

Graph importOnnx(const Context& context, const std::string& path,
                 const OnnxImportOptions& options) {
  return importOnnxModel(context, path, options).graph;
}

Graph importOnnxFromMemory(const Context& context, std::span<const uint8_t> bytes,
                           const OnnxImportOptions& options) {
  return importOnnxModelFromMemory(context, bytes, options).graph;
}

OnnxModelInfo inspectOnnx(const std::string& path) {
  const std::vector<uint8_t> bytes = readFile(path);
  try {
    return inspect(bytes);
  } catch (const Error& e) {
    throw Error(e.code(), prefixed("'" + path + "'", messageOf(e)));
  }
}

OnnxModelInfo inspectOnnxFromMemory(std::span<const uint8_t> bytes) {
  return inspect(bytes);
}

std::vector<std::string> supportedOnnxOperators() {
  // Kept in step with Importer::translate and Importer::fold.
  std::vector<std::string> ops = {
      // On image data (and constants).
      "Abs", "Add", "AveragePool", "BatchNormalization", "Cast", "Clip", "Concat", "Conv",
      "ConvTranspose", "DepthToSpace", "Div", "Dropout", "Elu", "Exp", "Expand", "Flatten", "Gemm",
      "GlobalAveragePool", "GlobalMaxPool", "HardSigmoid", "HardSwish", "Identity",
      "InstanceNormalization", "LRN", "LeakyRelu", "Log", "LogSoftmax", "MatMul", "MaxPool", "Mean",
      "Mul", "Neg", "PRelu", "Pad", "Pow", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum",
      "Relu", "Reshape", "Resize", "Selu", "Sigmoid", "Slice", "Softmax", "Softplus", "Softsign",
      "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "Transpose", "Unsqueeze",
      "Upsample",
      // On constants and shapes only.
      "And", "Ceil", "Constant", "ConstantOfShape", "Equal", "Floor", "Gather", "Greater",
      "GreaterOrEqual", "Less", "LessOrEqual", "Max", "Min", "Not", "Or", "Range", "Reciprocal",
      "ReduceProd", "Round", "Shape", "Sign", "Size", "Tile", "Where", "Xor"};
  std::sort(ops.begin(), ops.end());
  return ops;
}

namespace {
size_t imageElements(const OnnxTensorInfo& info) {
  return size_t(info.featureChannels) * info.height * info.width;
}
void checkInfo(const OnnxTensorInfo& info, size_t count, const std::string& what) {
  if (!info.numberOfImages || !imageElements(info))
    throw Error(ErrorCode::invalidArgument, what + ": tensor '" + info.name +
                                                "' has no image shape (use an imported model's "
                                                "info, not inspectOnnx's)");
  if (count != info.numberOfImages * imageElements(info))
    throw Error(ErrorCode::invalidArgument,
                what + ": " + std::to_string(count) + " values for tensor '" + info.name + "' of " +
                    std::to_string(info.numberOfImages * imageElements(info)) + " elements");
}
void checkImage(const Image& image, const OnnxTensorInfo& info, const std::string& what) {
  if (!image.valid() || image.numberOfImages() != info.numberOfImages ||
      image.featureChannels() != info.featureChannels || image.height() != info.height ||
      image.width() != info.width)
    throw Error(ErrorCode::invalidArgument,
                what + ": the image does not have the shape of tensor '" + info.name + "' (" +
                    std::to_string(info.numberOfImages) + " images of " +
                    std::to_string(info.width) + "x" + std::to_string(info.height) + "x" +
                    std::to_string(info.featureChannels) + ")");
}
}  // namespace

Image makeOnnxImage(const Context& context, const OnnxTensorInfo& info, std::span<const float> data,
                    ChannelFormat format) {
  checkInfo(info, data.size(), "makeOnnxImage");
  ImageDescriptor d{info.width, info.height, info.featureChannels, info.numberOfImages, format};
  d.label = info.name;
  Image image(context, d);
  writeOnnxImage(image, info, data);
  return image;
}

void writeOnnxImage(Image& image, const OnnxTensorInfo& info, std::span<const float> data) {
  checkInfo(info, data.size(), "writeOnnxImage");
  checkImage(image, info, "writeOnnxImage");
  const size_t per = imageElements(info);
  for (uint32_t i = 0; i < info.numberOfImages; ++i)
    image.writeFloats(data.subspan(i * per, per), DataLayout::FeatureChannelsxHeightxWidth, i);
}

std::vector<float> readOnnxImage(const Image& image, const OnnxTensorInfo& info) {
  checkImage(image, info, "readOnnxImage");
  std::vector<float> out;
  out.reserve(info.numberOfImages * imageElements(info));
  for (uint32_t i = 0; i < info.numberOfImages; ++i) {
    const std::vector<float> one = image.readFloats(DataLayout::FeatureChannelsxHeightxWidth, i);
    out.insert(out.end(), one.begin(), one.end());
  }
  return out;
}

}  // namespace vkcnn
