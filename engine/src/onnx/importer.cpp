// ONNX ModelProto -> Graph: the walk over a model (inputs, one node at a time through the
// operator table, outputs, onnx's shape inference as a cross-check) and the public entry points.
// The model file's gate (parsing, validation, sorting, the checker) is onnx/model_file.h. See
// vkcnn/onnx.h for the contract and onnx/importer.h for the table; what each operator becomes is
// in onnx/ops_*.cpp.
#include "onnx/importer.h"

#include "onnx/model_file.h"
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string_view>

#include "vkcnn/error.h"
#include "load_clock.h"

namespace vkcnn {
namespace detail::onnx_import {
namespace {

int64_t defaultOpset(const onnx::ModelProto& model) {
  int64_t opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  return opset;
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

// An Error's message without the "vkcnn: " its constructor adds (for re-throwing with context).
std::string messageOf(const Error& e) {
  const std::string m = e.what();
  return m.rfind("vkcnn: ", 0) == 0 ? m.substr(7) : m;
}

std::string attributeTypeName(int type) {
  return onnx::AttributeProto_AttributeType_Name(onnx::AttributeProto_AttributeType(type));
}

// Every family's operators, once.
const std::vector<const OpEntry*>& operatorTable() {
  static const std::vector<const OpEntry*> table = [] {
    std::vector<const OpEntry*> all;
    for (auto family : {shapeOps(), elementwiseOps(), convolutionOps(), poolingOps(),
                        normalizationOps(), resizeOps()})
      for (const OpEntry& e : family) all.push_back(&e);
    std::sort(all.begin(), all.end(), [](const OpEntry* a, const OpEntry* b) {
      return std::string_view(a->name) < std::string_view(b->name);
    });
    return all;
  }();
  return table;
}

}  // namespace

const OpEntry* findOperator(const std::string& op) {
  const auto& table = operatorTable();
  auto it = std::lower_bound(
      table.begin(), table.end(), op,
      [](const OpEntry* e, const std::string& name) { return std::string_view(e->name) < name; });
  return it != table.end() && op == (*it)->name ? *it : nullptr;
}

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

// One image holding a value of any rank 1 to 8 in row-major order: [1, C, H, W] with H and W
// the last two axes (rank 3 up), C the product of the others.
Shape4 flatShape(const std::vector<int64_t>& d) {
  if (d.empty()) return Shape4{1, 1, 1, 1};
  if (d.size() == 1) return Shape4{1, d[0], 1, 1};
  if (d.size() == 2) return Shape4{1, d[0], d[1], 1};
  int64_t c = 1;
  for (size_t k = 0; k + 2 < d.size(); ++k) c *= d[k];
  return Shape4{1, c, d[d.size() - 2], d[d.size() - 1]};
}

ImageAxis imageAxis(size_t rank, int64_t axis) {
  static const ImageAxis r4[] = {ImageAxis::n, ImageAxis::c, ImageAxis::h, ImageAxis::w};
  static const ImageAxis r3[] = {ImageAxis::n, ImageAxis::c, ImageAxis::h};
  static const ImageAxis r2[] = {ImageAxis::n, ImageAxis::c};
  if (rank == 1) return ImageAxis::c;
  return rank == 4 ? r4[axis] : rank == 3 ? r3[axis] : r2[axis];
}

uint32_t u32(int64_t v, const std::string& what) {
  if (v < 0 || v > kMaxElements)
    invalidModel(what + " " + std::to_string(v) + " is out of range [0, " +
                 std::to_string(kMaxElements) + "]");
  return uint32_t(v);
}

// ---- the importer: what operators see -----------------------------------------------------------

Importer::Importer(const Context& context, onnx::ModelProto& model,
                   const InitializerData& initializerData, const OnnxImportOptions& options,
                   size_t fileBytes, bool flatBatch)
    : context_(context),
      model_(model),
      initializerData_(initializerData),
      options_(options),
      graph_(context, graphOptions()),
      flatBatch_(flatBatch) {
  computedBudget_ += int64_t(fileBytes);
}

GraphOptions Importer::graphOptions() const {
  GraphOptions g;
  g.channelFormat = options_.channelFormat;
  g.optimize = options_.optimize;
  g.accumulatorPrecision = options_.accumulatorPrecision;
  g.numberOfImages = batch_;
  g.label = !options_.label.empty()          ? options_.label
            : !model_.graph().name().empty() ? model_.graph().name()
                                             : "onnx";
  return g;
}

const std::string& Importer::opType() const {
  return node_->op_type();
}
int Importer::inputCount() const {
  return node_->input_size();
}
int Importer::outputCount() const {
  return node_->output_size();
}

const onnx::AttributeProto* Importer::typedAttribute(const std::string& name, int type) const {
  for (const auto& a : node_->attribute())
    if (a.name() == name) {
      if (a.type() != type && a.type() != onnx::AttributeProto::UNDEFINED)
        invalidModel("attribute '" + name + "' is " + attributeTypeName(a.type()) + ", expected " +
                     attributeTypeName(type));
      return &a;
    }
  return nullptr;
}
std::optional<int64_t> Importer::attrIntIf(const std::string& name) const {
  const auto* a = typedAttribute(name, onnx::AttributeProto::INT);
  return a ? std::optional<int64_t>(a->i()) : std::nullopt;
}
std::optional<float> Importer::attrFloatIf(const std::string& name) const {
  const auto* a = typedAttribute(name, onnx::AttributeProto::FLOAT);
  return a ? std::optional<float>(a->f()) : std::nullopt;
}
std::string Importer::attrString(const std::string& name, const std::string& fallback) const {
  const auto* a = typedAttribute(name, onnx::AttributeProto::STRING);
  return a ? a->s() : fallback;
}
std::optional<std::vector<int64_t>> Importer::attrInts(const std::string& name) const {
  const auto* a = typedAttribute(name, onnx::AttributeProto::INTS);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}
std::optional<std::vector<float>> Importer::attrFloats(const std::string& name) const {
  const auto* a = typedAttribute(name, onnx::AttributeProto::FLOATS);
  if (!a) return std::nullopt;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}
std::optional<HostTensor> Importer::attrTensor(const std::string& name) const {
  const auto* a = typedAttribute(name, onnx::AttributeProto::TENSOR);
  if (!a) return std::nullopt;
  return decodeTensorProto(a->t(), opType() + " " + name);
}

bool Importer::hasInput(int k) const {
  return k < node_->input_size() && !node_->input(k).empty();
}
const Value& Importer::input(int k) const {
  if (!hasInput(k)) invalidModel("input " + std::to_string(k) + " is missing");
  const std::string& name = node_->input(k);
  auto it = values_.find(name);
  if (it == values_.end())
    invalidModel("input '" + name +
                 "' is not produced by any earlier node (the graph is not topologically sorted, "
                 "has a cycle, or names a value that does not exist)");
  return it->second;
}
const HostTensor& Importer::constantInput(int k, const std::string& role) const {
  const Value& v = input(k);
  if (v.isImage)
    unsupported("input " + std::to_string(k) + " ('" + node_->input(k) + "', " + role +
                ") is computed from image data; it must be a constant known at import");
  return v.constant;
}
const HostTensor& Importer::floatConstant(int k, const std::string& role) const {
  const HostTensor& t = constantInput(k, role);
  if (!t.isFloat())
    unsupported("input " + std::to_string(k) + " ('" + node_->input(k) + "', " + role + ") is " +
                elementTypeName(t.type) + "; only float tensors are supported there");
  return t;
}
std::vector<float> Importer::takeFloats(int k, const std::string& role) {
  const HostTensor& t = floatConstant(k, role);
  const auto r = readers_.find(node_->input(k));
  if (r == readers_.end() || r->second != 1) return t.f;
  return std::move(values_.find(r->first)->second.constant.f);
}
const ImageValue& Importer::valueInput(int k) const {
  const Value& v = input(k);
  if (!v.isImage)
    unsupported("input " + std::to_string(k) + " ('" + node_->input(k) +
                "') is a constant, and this operator is only evaluated on image data");
  return v.image;
}

const ImageValue& Importer::imageInput(int k) {
  valueInput(k);
  Value& v = values_.find(node_->input(k))->second;
  if (!isTensor(v.image)) return v.image;
  if (!v.imageForm.tensor.valid()) v.imageForm = toImageValue(v.image);
  return v.imageForm;
}

// A Tensor value as an Image: its canonical image ([N, C, H, W], [N, C, L], [N, C], [C]) when
// its first axis is the batch, else [batch, elements / batch, 1, 1] viewed with its own dims.
ImageValue Importer::toImageValue(const ImageValue& v) {
  int64_t total = 1;
  for (int64_t d : v.dims) total *= d;
  std::optional<Shape4> s = v.dims.size() <= 4 ? canonicalShape(v.dims) : std::nullopt;
  if (flatBatch_ && (!s || s->n != 1)) s = flatShape(v.dims);
  if (!s || s->n != batch_) {
    if (batch_ == 0 || total % batch_) {
      batchLayoutFailed_ = true;
      unsupported("the tensor " + dimsToString(v.dims) + " does not split into " +
                  std::to_string(batch_) + " images (tensor layout)");
    }
    s = Shape4{batch_, total / batch_, 1, 1};
  }
  const GraphTensor t =
      graph_.reshape(v.tensor, {uint32_t(s->n), uint32_t(s->c), uint32_t(s->h), uint32_t(s->w)},
                     nodeName() + " (image view)");
  return ImageValue{graph_.toImage(t), v.dims};
}

GraphTensor Importer::tensorOf(const ImageValue& v) {
  if (v.dims.size() > kMaxTensorRank)
    unsupported("the tensor " + dimsToString(v.dims) + " has rank " +
                std::to_string(v.dims.size()) + " (Tensors have rank 1 to " +
                std::to_string(kMaxTensorRank) + ") (tensor rank)");
  std::vector<uint32_t> shape;
  for (int64_t d : v.dims) {
    if (d < 1) unsupported("an empty tensor " + dimsToString(v.dims));
    shape.push_back(u32(d, "dimension"));
  }
  if (shape.empty()) shape = {1};  // a scalar
  if (isTensor(v) && graph_.tensorShape(v.tensor) == shape) return v.tensor;
  return graph_.reshape(v.tensor, shape, nodeName() + " (view)");
}

GraphTensor Importer::constantTensor(const HostTensor& t) {
  std::vector<uint32_t> shape;
  for (int64_t d : t.dims) {
    if (d < 1) unsupported("an empty constant " + dimsToString(t.dims));
    shape.push_back(u32(d, "dimension"));
  }
  if (shape.empty()) shape = {1};
  return graph_.constant(shape, toFloats(t), nodeName() + " (constant)");
}

GraphTensor Importer::tensorInput(int k) {
  const Value& v = input(k);
  return v.isImage ? tensorOf(v.image) : constantTensor(v.constant);
}

void Importer::setOutput(int k, Value v) {
  if (k >= node_->output_size() || node_->output(k).empty()) return;
  values_[node_->output(k)] = std::move(v);
}
void Importer::setImage(int k, GraphTensor t, std::vector<int64_t> dims) {
  Value v;
  v.isImage = true;
  v.image = {t, std::move(dims)};
  setOutput(k, std::move(v));
}
void Importer::setConstant(int k, HostTensor t) {
  // Each fold is bounded; so is their sum (a chain of folds could otherwise add up without end).
  computedElements_ += t.size();
  if (computedElements_ > computedBudget_)
    invalidModel("the constants computed at import exceed " + std::to_string(computedBudget_) +
                 " elements");
  Value v;
  v.constant = std::move(t);
  setOutput(k, std::move(v));
}
bool Importer::outputUsed(int k) const {
  return k < node_->output_size() && !node_->output(k).empty();
}

Shape4 Importer::imageShape(const ImageValue& v) const {
  const TensorShape s = graph_.shape(v.tensor);
  return Shape4{int64_t(batch_), s.featureChannels, s.height, s.width};
}
bool Importer::canonical(const ImageValue& v) const {
  auto c = canonicalShape(v.dims);
  return c && *c == imageShape(v);
}
Shape4 Importer::requireCanonical(const ImageValue& v, size_t minRank) const {
  if (v.dims.size() < minRank || v.dims.size() > 4)
    unsupported("a tensor of rank " + std::to_string(v.dims.size()) + " " + dimsToString(v.dims) +
                " (image operators take rank " + std::to_string(minRank) +
                " to 4: [N, C, H, W], [N, C, L], [N, C] or [C]) (tensor rank)");
  if (!canonical(v)) {
    const Shape4 s = imageShape(v);
    unsupported("the tensor " + dimsToString(v.dims) + " is a reshaped view of a " +
                std::to_string(s.n) + "x" + std::to_string(s.c) + "x" + std::to_string(s.h) + "x" +
                std::to_string(s.w) +
                " (NxCxHxW) image whose layout it does not match (tensor layout)");
  }
  return imageShape(v);
}
std::vector<int64_t> Importer::dimsLike(const ImageValue& like, const TensorShape& s) const {
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

GraphTensor Importer::neuron(const ImageValue& x, const NeuronDescriptor& n) {
  return graph_.neuron(x.tensor, n, nodeName());
}
void Importer::neuronOp(const NeuronDescriptor& n) {
  const ImageValue& v = valueInput(0);
  if (isTensor(v) && n.type != NeuronType::prelu)
    return setImage(0, graph_.tensorNeuron(v.tensor, n, nodeName()), v.dims);
  const ImageValue& x = imageInput(0);
  setImage(0, neuron(x, n), x.dims);
}

// ---- inputs ----------------------------------------------------------------------------------

void Importer::importInputs() {
  const auto& g = model_.graph();
  std::set<std::string> initializers;
  for (int k = 0; k < g.initializer_size(); ++k) {
    const auto& t = g.initializer(k);
    initializers.insert(t.name());
    std::optional<HostTensor>* early =
        decoded_ && size_t(k) < decoded_->size() ? &(*decoded_)[size_t(k)] : nullptr;
    values_[t.name()] =
        Value{false,
              early && *early ? std::move(**early)
                              : decodeTensorProto(t, "initializer '" + t.name() + "'",
                                                  strippedData(initializerData_, k)),
              {}};
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
    if (flatBatch_ && dims.size() <= kMaxTensorRank && (!shape4 || shape4->n != 1))
      shape4 = flatShape(dims);
    if (!shape4 && dims.size() <= kMaxTensorRank) batchLayoutFailed_ = true;
    if (!shape4)
      unsupported(what + " has rank " + std::to_string(dims.size()) + " " + dimsToString(dims) +
                  "; image inputs have rank 1 to 4 ([N, C, H, W], [N, C, L], [N, C], [C]) "
                  "(tensor rank)");
    if (count == 0) unsupported(what + " is empty " + dimsToString(dims));
    if (batch_ == 0) {
      // Tensor values hold the batch: the Graph is made for it (no node exists yet).
      batch_ = uint32_t(shape4->n);
      graph_ = Graph(context_, graphOptions());
    }
    if (shape4->n != batch_) batchLayoutFailed_ = true;
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
    const ImageValue& v =
        isTensor(it->second.image) ? toImageValue(it->second.image) : it->second.image;
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
    const OpEntry* op = findOperator(node.op_type());
    if (!op) unsupported("operator " + node.op_type() + " is not supported (operator)");
    if (opset_ < op->firstOpset || opset_ > op->lastOpset)
      unsupported("operator " + node.op_type() + " is read in opsets " +
                  std::to_string(op->firstOpset) + " to " + std::to_string(op->lastOpset) +
                  " (operator)");
    // Folded on the host when every input is a constant (shape operators always).
    bool constant = node.input_size() > 0;
    for (int k = 0; k < node.input_size() && constant; ++k)
      constant = !hasInput(k) || !input(k).isImage;
    if (op->fold && (op->foldAlways || constant)) return op->fold(*this);
    if (!op->translate)
      unsupported("operator " + node.op_type() +
                  " is evaluated only on constants and shapes, not on image data (operator)");
    op->translate(*this);
  } catch (const Error& e) {
    // Kernel and graph argument errors mean the model asked for something inconsistent.
    const ErrorCode code =
        e.code() == ErrorCode::invalidArgument ? ErrorCode::invalidModel : e.code();
    throw Error(code, context + messageOf(e));
  }
}

// ---- driver ----------------------------------------------------------------------------------

OnnxImport Importer::run() {
  opset_ = defaultOpset(model_);
  if (opset_ > kNewestOpset)
    unsupported("opset " + std::to_string(opset_) + " is newer than the importer knows (up to " +
                std::to_string(kNewestOpset) + ")");
  {
    PhaseTimer timer(detail::loadClock(context_), LoadPhase::check);
    checkModel(model_);
  }
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
  bool subgraphs = false;
  for (const auto& node : nodes) {
    for (const auto& in : node.input())
      if (!in.empty()) ++readers_[in];
    for (const auto& a : node.attribute()) subgraphs |= a.has_g() || a.graphs_size() > 0;
  }
  for (const auto& out : model_.graph().output()) ++readers_[out.name()];
  if (subgraphs) readers_.clear();
  for (int k = 0; k < nodes.size(); ++k) importNode(nodes[k], size_t(k));
  node_ = nullptr;
  importOutputs();
  // onnx's shape inference runs last, on a model whose every node the importer understood and
  // whose parameters it validated: onnx 1.12's inference functions divide by strides, block sizes
  // and shape products straight from the file (a zero is SIGFPE) and index dims by the ranks they
  // expect, so a hostile model must never reach them unchecked. The shapes the model declares are
  // checked here and then dropped: inference starts from the resolved inputs alone (a graph
  // output that renames an input with another shape would otherwise hand it a wrong rank). It
  // runs strict (a node it cannot infer is an error) but not type-checked (exporters wrote int64
  // Constants in opsets whose schema allowed only floats), and every static shape it finds must
  // be the one the importer computed.
  crossCheckShapes("the model declares");
  model_.mutable_graph()->clear_value_info();
  for (auto& out : *model_.mutable_graph()->mutable_output())
    if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  try {
    PhaseTimer timer(detail::loadClock(context_), LoadPhase::shapeInference);
    onnx::ShapeInferenceOptions options(false, 1, false);
    onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    invalidModel(std::string("onnx shape inference: ") + splitLines(e.what()).front());
  }
  crossCheckShapes("onnx shape inference gives");
  return OnnxImport{std::move(graph_), std::move(info_)};
}

namespace {

OnnxModelInfo inspect(std::span<const uint8_t> bytes, const std::string& directory) {
  InitializerData data;
  onnx::ModelProto model = parseModel(bytes, directory, data);
  checkModel(model);
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
using detail::LoadPhase;
using detail::PhaseTimer;

namespace detail::onnx_import {
namespace {

// The model in `bytes`, its external data read into `data`; timed as the parse phase.
onnx::ModelProto parseTimed(const Context& context, std::span<const uint8_t> bytes,
                            const OnnxImportOptions& options, InitializerData& data) {
  PhaseTimer timer(detail::loadClock(context), LoadPhase::parse);
  return parseModel(bytes, options.externalDataDirectory, data);
}

// Inputs of different batch sizes, outputs that do not split into the batch, inputs of rank 5
// to 8: again with every image input one image holding its value (the Tensor kernels take the
// axes the image layout cannot).
OnnxImport importFlatBatch(const Context& context, std::span<const uint8_t> bytes,
                           const OnnxImportOptions& options) {
  InitializerData data;
  onnx::ModelProto model = parseTimed(context, bytes, options, data);
  Importer importer(context, model, data, options, bytes.size(), true);
  return importer.run();
}

}  // namespace

struct PreparedModel {
  onnx::ModelProto model;
  InitializerData data;
  std::vector<std::optional<HostTensor>> decoded;
  uint64_t parseNs = 0;
  double decodeMs = 0;
};

void PreparedModelDeleter::operator()(PreparedModel* p) const {
  delete p;
}

PreparedModelPtr prepareOnnxModel(std::span<const uint8_t> bytes,
                                  const OnnxImportOptions& options) {
  using Clock = std::chrono::steady_clock;
  PreparedModelPtr p(new PreparedModel);
  const auto start = Clock::now();
  p->model = parseModel(bytes, options.externalDataDirectory, p->data);
  const auto parsed = Clock::now();
  p->parseNs =
      uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(parsed - start).count());
  const auto& initializers = p->model.graph().initializer();
  p->decoded.resize(size_t(initializers.size()));
  for (int k = 0; k < initializers.size(); ++k) {
    const auto& t = initializers[k];
    try {
      p->decoded[size_t(k)] =
          decodeTensorProto(t, "initializer '" + t.name() + "'", strippedData(p->data, k));
    } catch (const Error&) {
      // Decoded again by the import, which reports it in its place.
    }
  }
  p->decodeMs = std::chrono::duration<double, std::milli>(Clock::now() - parsed).count();
  return p;
}

double preparedMs(const PreparedModel& prepared) {
  return double(prepared.parseNs) / 1e6 + prepared.decodeMs;
}

OnnxImport importPrepared(const Context& context, PreparedModel& prepared,
                          std::span<const uint8_t> bytes, const OnnxImportOptions& options) {
  detail::loadClock(context).add(LoadPhase::parse, prepared.parseNs);
  {
    Importer importer(context, prepared.model, prepared.data, options, bytes.size());
    importer.useDecoded(prepared.decoded);
    try {
      return importer.run();
    } catch (const Error&) {
      if (!importer.batchLayoutFailed()) throw;
    }
  }
  return importFlatBatch(context, bytes, options);
}

}  // namespace detail::onnx_import

OnnxImport importOnnxModelFromMemory(const Context& context, std::span<const uint8_t> bytes,
                                     const OnnxImportOptions& options) {
  {
    InitializerData data;
    onnx::ModelProto model = detail::onnx_import::parseTimed(context, bytes, options, data);
    Importer importer(context, model, data, options, bytes.size());
    try {
      return importer.run();
    } catch (const Error&) {
      if (!importer.batchLayoutFailed()) throw;
    }
  }
  return importFlatBatch(context, bytes, options);
}

OnnxImport importOnnxModel(const Context& context, const std::string& path,
                           const OnnxImportOptions& options) {
  const std::vector<uint8_t> bytes = readModelFile(path);
  try {
    if (!options.externalDataDirectory.empty())
      return importOnnxModelFromMemory(context, bytes, options);
    OnnxImportOptions withDirectory = options;
    withDirectory.externalDataDirectory = modelDirectory(path);
    return importOnnxModelFromMemory(context, bytes, withDirectory);
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
  const std::vector<uint8_t> bytes = readModelFile(path);
  try {
    return inspect(bytes, modelDirectory(path));
  } catch (const Error& e) {
    throw Error(e.code(), prefixed("'" + path + "'", messageOf(e)));
  }
}

OnnxModelInfo inspectOnnxFromMemory(std::span<const uint8_t> bytes) {
  return inspect(bytes, std::string());
}

std::vector<std::string> supportedOnnxOperators() {
  std::vector<std::string> ops;
  for (const OpEntry* e : operatorTable()) ops.push_back(e->name);
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