// The graph section's Tensor nodes (serialize.h): the conversions between Images and Tensors,
// constants, transposes, element-wise nodes, slices, concatenations and the Tensor kernels'
// parameters (TensorKernelParameters), one line per field each way. Keys are per node kind and
// are the file's: never renumber one, only add. A decoder checks enumerators and the parameters
// the kernels' constructors check (kernels/tensor_checks.h); serialize_check.cpp checks what
// depends on the node's values (axes against ranks).
#include <type_traits>

#include "graph/serialize.h"
#include "kernels/tensor_checks.h"
#include "vkcnn/error.h"

namespace vkcnn::detail {

using archive::FieldKey;
using archive::RecordReader;
using archive::RecordWriter;

namespace {

constexpr FieldKey kValues{1, "values"};                              // ConstantNode
constexpr FieldKey kPerm{1, "perm"};                                  // TransposeNode
constexpr FieldKey kOperation{1, "operation"}, kNeuron{2, "neuron"};  // unary, binary, reduction
constexpr FieldKey kAxes{1, "axes"}, kStarts{2, "starts"}, kEnds{3, "ends"},
    kSteps{4, "steps"};               // SliceNode
constexpr FieldKey kAxis{1, "axis"};  // tensor concat, softmax, arg reduction, layer norm, gather
// TensorSoftmaxParameters, TensorArgReductionParameters, TensorLayerNormalizationParameters
constexpr FieldKey kLogarithm{2, "logarithm"}, kMaximum{2, "maximum"},
    kKeepDimensions{3, "keep dimensions"}, kSelectLastIndex{4, "select last index"},
    kEpsilon{2, "epsilon"};
// TensorReductionParameters (kOperation, then these)
constexpr FieldKey kReductionAxes{2, "axes"}, kReductionKeep{3, "keep dimensions"};
// GemmDescriptor
constexpr FieldKey kTransposeA{1, "transpose a"}, kTransposeB{2, "transpose b"}, kAlpha{3, "alpha"},
    kBeta{4, "beta"};
// TensorResizeDescriptor
constexpr FieldKey kInterpolation{1, "interpolation"}, kCoordinates{2, "coordinate transformation"},
    kNearestMode{3, "nearest mode"}, kCubicCoefficient{4, "cubic coefficient"},
    kExcludeOutside{5, "exclude outside"}, kExtrapolation{6, "extrapolation value"},
    kSizes{7, "sizes"}, kScales{8, "scales"}, kRoi{9, "roi"};
// TensorPadParameters
constexpr FieldKey kPadMode{1, "mode"}, kPads{2, "pads"}, kPadValue{3, "value"};

bool flag(const RecordReader& r, FieldKey key) {
  return r.u32(key, 0) != 0;
}

// A kernel's own parameter check (tensor_checks.h), failing as the file's error.
template <class Check>
void checked(const RecordReader& r, Check&& check) {
  try {
    check();
  } catch (const Error& e) {
    r.fail(e.what());
  }
}

struct EncodeTensorKernel {
  RecordWriter& r;
  NodeKind operator()(const TensorSoftmaxParameters& p) const {
    r.i32(kAxis, p.axis).u32(kLogarithm, p.logarithm);
    return NodeKind::tensorSoftmax;
  }
  NodeKind operator()(const TensorReductionParameters& p) const {
    r.u32(kOperation, uint32_t(p.operation)).i32s(kReductionAxes, p.axes);
    r.u32(kReductionKeep, p.keepDimensions);
    return NodeKind::tensorReduction;
  }
  NodeKind operator()(const TensorArgReductionParameters& p) const {
    r.i32(kAxis, p.axis).u32(kMaximum, p.maximum).u32(kKeepDimensions, p.keepDimensions);
    r.u32(kSelectLastIndex, p.selectLastIndex);
    return NodeKind::tensorArgReduction;
  }
  NodeKind operator()(const TensorMatMulParameters&) const { return NodeKind::tensorMatMul; }
  NodeKind operator()(const GemmDescriptor& d) const {
    r.u32(kTransposeA, d.transposeA).u32(kTransposeB, d.transposeB);
    r.f32(kAlpha, d.alpha).f32(kBeta, d.beta);
    return NodeKind::tensorGemm;
  }
  NodeKind operator()(const TensorLayerNormalizationParameters& p) const {
    r.i32(kAxis, p.axis).f32(kEpsilon, p.epsilon);
    return NodeKind::tensorLayerNormalization;
  }
  NodeKind operator()(const TensorResizeDescriptor& d) const {
    r.u32(kInterpolation, uint32_t(d.interpolation));
    r.u32(kCoordinates, uint32_t(d.coordinateTransformation)).u32(kNearestMode, d.nearestMode);
    r.f32(kCubicCoefficient, d.cubicCoefficient).u32(kExcludeOutside, d.excludeOutside);
    r.f32(kExtrapolation, d.extrapolationValue);
    r.u32s(kSizes, d.sizes).f32s(kScales, d.scales).f32s(kRoi, d.roi);
    return NodeKind::tensorResize;
  }
  NodeKind operator()(const TensorGatherParameters& p) const {
    r.i32(kAxis, p.axis);
    return NodeKind::tensorGather;
  }
  NodeKind operator()(const TensorPadParameters& p) const {
    r.u32(kPadMode, uint32_t(p.mode)).i64s(kPads, p.pads).f32(kPadValue, p.value);
    return NodeKind::tensorPad;
  }
};

bool decodeTensorKernel(NodeKind kind, const RecordReader& r, TensorKernelParameters& out) {
  switch (kind) {
    case NodeKind::tensorSoftmax:
      out = TensorSoftmaxParameters{r.i32(kAxis), flag(r, kLogarithm)};
      return true;
    case NodeKind::tensorReduction: {
      TensorReductionParameters p{enumerator(r, kOperation, TensorReductionOperation::logSum),
                                  r.i32s(kReductionAxes), flag(r, kReductionKeep)};
      out = std::move(p);
      return true;
    }
    case NodeKind::tensorArgReduction:
      out = TensorArgReductionParameters{flag(r, kMaximum), r.i32(kAxis), flag(r, kKeepDimensions),
                                         flag(r, kSelectLastIndex)};
      return true;
    case NodeKind::tensorMatMul:
      out = TensorMatMulParameters{};
      return true;
    case NodeKind::tensorGemm:
      out = GemmDescriptor{flag(r, kTransposeA), flag(r, kTransposeB), r.f32(kAlpha), r.f32(kBeta)};
      return true;
    case NodeKind::tensorLayerNormalization: {
      TensorLayerNormalizationParameters p{r.i32(kAxis), r.f32(kEpsilon)};
      checked(r, [&] { checkTensorLayerNormalization(p.epsilon, "layer normalization"); });
      out = p;
      return true;
    }
    case NodeKind::tensorResize: {
      TensorResizeDescriptor d;
      d.interpolation = enumerator(r, kInterpolation, TensorInterpolation::cubic);
      d.coordinateTransformation =
          enumerator(r, kCoordinates, TensorCoordinateTransformation::tfHalfPixelForNN);
      d.nearestMode = r.u32(kNearestMode, 0);
      d.cubicCoefficient = r.f32(kCubicCoefficient, -0.75f);
      d.excludeOutside = flag(r, kExcludeOutside);
      d.extrapolationValue = r.f32(kExtrapolation, 0);
      d.sizes = r.u32s(kSizes);
      d.scales = r.f32s(kScales);
      d.roi = r.f32s(kRoi);
      checked(r, [&] { checkTensorResize(d, "resize"); });
      out = std::move(d);
      return true;
    }
    case NodeKind::tensorGather:
      out = TensorGatherParameters{r.i32(kAxis)};
      return true;
    case NodeKind::tensorPad: {
      TensorPadParameters p{enumerator(r, kPadMode, TensorPaddingMode::wrap), r.i64s(kPads),
                            r.f32(kPadValue, 0)};
      checked(r, [&] { checkTensorPad(p.mode, p.pads.size(), 0, "pad"); });
      out = std::move(p);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

bool encodeTensorNode(const NodeParameters& p, NodeKind& kind, RecordWriter& r, WeightSink& w) {
  if (std::holds_alternative<ToTensorNode>(p)) {
    kind = NodeKind::toTensor;
  } else if (std::holds_alternative<ToImageNode>(p)) {
    kind = NodeKind::toImage;
  } else if (const auto* c = std::get_if<ConstantNode>(&p)) {
    w.floats(r, kValues, c->values);
    kind = NodeKind::constant;
  } else if (const auto* t = std::get_if<TransposeNode>(&p)) {
    r.u32s(kPerm, t->perm);
    kind = NodeKind::transpose;
  } else if (const auto* u = std::get_if<TensorUnaryNode>(&p)) {
    r.u32(kOperation, uint32_t(u->operation)).record(kNeuron, encodeNeuron(u->neuron));
    kind = NodeKind::tensorUnary;
  } else if (const auto* b = std::get_if<TensorBinaryNode>(&p)) {
    r.u32(kOperation, uint32_t(b->operation));
    kind = NodeKind::tensorBinary;
  } else if (std::holds_alternative<WhereNode>(p)) {
    kind = NodeKind::where;
  } else if (const auto* s = std::get_if<SliceNode>(&p)) {
    r.i32s(kAxes, s->axes).i64s(kStarts, s->starts).i64s(kEnds, s->ends).i64s(kSteps, s->steps);
    kind = NodeKind::slice;
  } else if (const auto* c = std::get_if<TensorConcatNode>(&p)) {
    r.u32(kAxis, c->axis);
    kind = NodeKind::tensorConcat;
  } else if (const auto* k = std::get_if<TensorKernelNode>(&p)) {
    kind = std::visit(EncodeTensorKernel{r}, k->parameters);
  } else {
    return false;
  }
  return true;
}

bool decodeTensorNode(NodeKind kind, const RecordReader& r, const WeightSource& w,
                      NodeParameters& p) {
  TensorKernelParameters kernel;
  switch (kind) {
    case NodeKind::toTensor:
      p = ToTensorNode{};
      return true;
    case NodeKind::toImage:
      p = ToImageNode{};
      return true;
    case NodeKind::constant:
      p = ConstantNode{w.floats(r, kValues), {}};
      return true;
    case NodeKind::transpose:
      p = TransposeNode{r.u32s(kPerm)};
      return true;
    case NodeKind::tensorUnary:
      p = TensorUnaryNode{enumerator(r, kOperation, TensorUnaryOperation::ceil),
                          decodeNeuron(r.record(kNeuron))};
      return true;
    case NodeKind::tensorBinary:
      p = TensorBinaryNode{enumerator(r, kOperation, TensorBinaryOperation::prelu)};
      return true;
    case NodeKind::where:
      p = WhereNode{};
      return true;
    case NodeKind::slice: {
      SliceNode s{r.i32s(kAxes), r.i64s(kStarts), r.i64s(kEnds), r.i64s(kSteps)};
      if (s.starts.size() != s.axes.size() || s.ends.size() != s.axes.size() ||
          s.steps.size() != s.axes.size())
        r.fail("axes, starts, ends and steps differ in length");
      for (int64_t step : s.steps)
        if (!step) r.fail(kSteps, "a step of 0");
      p = std::move(s);
      return true;
    }
    case NodeKind::tensorConcat:
      p = TensorConcatNode{r.u32(kAxis)};
      return true;
    default:
      if (!decodeTensorKernel(kind, r, kernel)) return false;
      p = TensorKernelNode{std::move(kernel)};
      return true;
  }
}

}  // namespace vkcnn::detail
